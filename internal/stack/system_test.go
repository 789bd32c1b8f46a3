package stack

import (
	"testing"
	"time"

	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/uasc"
)

// TestCertEnd: the check of each second parses a certificate once, allocates
// nothing after that, and follows a rotation (new Credentials).
func TestCertEnd(t *testing.T) {
	creds := func(validity time.Duration) *uasc.Credentials {
		der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI, CommonName: "edged", Validity: validity})
		if err != nil {
			t.Fatal(err)
		}
		c, err := uasc.NewCredentials(der, key)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cur := creds(5 * 24 * time.Hour)
	sec := &server.Security{Credentials: func() *uasc.Credentials { return cur }}
	var e certEnd
	now := time.Now()
	if !e.expiring(sec, now) {
		t.Fatal("a certificate ending in 5 days: not expiring")
	}
	if a := testing.AllocsPerRun(100, func() { e.expiring(sec, now) }); a != 0 {
		t.Errorf("%v allocations per check of the same certificate", a)
	}
	cur = creds(365 * 24 * time.Hour)
	if e.expiring(sec, now) {
		t.Fatal("after the rotation to a certificate of a year: still expiring")
	}
	if !e.expiring(sec, now.Add(340*24*time.Hour)) {
		t.Fatal("the rotated certificate 25 days before its end: not expiring")
	}
	cur = &uasc.Credentials{Certificate: []byte("not DER")}
	if e.expiring(sec, now) {
		t.Fatal("a certificate that does not parse: expiring")
	}
	if e.expiring(&server.Security{}, now) || e.expiring(nil, now) {
		t.Fatal("without credentials: expiring")
	}
}
