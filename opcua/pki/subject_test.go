package pki

import (
	"crypto/rand"
	"crypto/x509"
	"testing"

	"github.com/edged/edged/internal/testutil/testkeys"
)

func TestParseSubjectName(t *testing.T) {
	good := map[string]string{
		"CN=Gateway/O=Plant":                  "CN=Gateway,O=Plant",
		"CN=Gateway, O=Plant, C=DE":           "CN=Gateway,O=Plant,C=DE",
		`CN="Line 3, press/2"/O=Plant`:        "CN=Line 3\\, press/2,O=Plant",
		"cn=gw/ou=Cell 1/l=Bremen/s=HB/dc=io": "CN=gw,OU=Cell 1,L=Bremen,ST=HB,0.9.2342.19200300.100.1.25=#1302696f",
	}
	for in, want := range good {
		n, err := ParseSubjectName(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		// Through a real request, so that the name is what x509 encodes.
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: *n}, testkeys.RSA(2048))
		if err != nil {
			t.Fatal(err)
		}
		csr, _ := x509.ParseCertificateRequest(der)
		if got := csr.Subject.String(); got != want {
			t.Errorf("%q: subject %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"Gateway", "CN=", "X=1", `CN="open`, `CN="a"b`, "CN=a/CN=b", `CN=a"b`, "=x"} {
		if _, err := ParseSubjectName(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
	if n, err := ParseSubjectName("  "); n != nil || err != nil {
		t.Errorf("empty: %v %v", n, err)
	}
}
