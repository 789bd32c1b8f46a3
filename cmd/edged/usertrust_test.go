package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
)

// TestRemoteUserTokenTrust: a SecurityAdmin manages the trust list of
// X.509 user certificates remotely, through ServerConfiguration's
// DefaultUserTokenGroup (gopcua): a user certificate is refused until
// AddCertificate trusts it in that group, is then accepted (the account
// of its common name, an Operator, writes), and is refused again after
// RemoveCertificate. CancelChanges has nothing to cancel.
func TestRemoteUserTokenTrust(t *testing.T) {
	dir := t.TempDir()
	edgedUser(t, dir, "admin-password\n", "add", "admin", "--role", "SecurityAdmin")
	edgedUser(t, dir, "op-password\n", "add", "op", "--role", "Operator")
	url, _ := startSecure(t, dir, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const uri = "urn:edged:test:gopcua"
	adminCert, adminKey := clientCert(t, uri, 2048)
	os.WriteFile(filepath.Join(dir, pki.TrustedCerts, "admin.der"), adminCert, 0o644)
	// The operator's application certificate is its user certificate
	// too: trusted as an application, not yet as a user.
	opCert, opKey, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, CommonName: "op", Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, pki.TrustedCerts, "op.der"), opCert, 0o644)
	eps, err := opcua.GetEndpoints(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	sae, _ := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
	asUser := func() error {
		c, err := dialAs(ctx, url, sae, uri, opCert, opKey, gua.UserTokenTypeCertificate, opcua.AuthCertificate(opCert), opcua.AuthPrivateKey(opKey))
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		res, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{NodeID: gua.MustParseNodeID("ns=2;s=sim.Setpoint"),
			AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(float32(3.5))}}}})
		if err != nil {
			return err
		}
		if res.Results[0] != gua.StatusOK {
			t.Errorf("the X.509 user's write: %v", res.Results[0])
		}
		return nil
	}
	if err := asUser(); err == nil {
		t.Fatal("an X.509 user certificate not in the user trust list was accepted")
	}
	admin, err := dialUser(ctx, url, sae, uri, adminCert, adminKey, "admin", "admin-password")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	const (
		serverConfiguration = 12637
		cancelChanges       = 25708
		userTrustList       = 14123
		addCertificate      = 14151
		removeCertificate   = 14153
		trustListSize       = 14124
	)
	call := func(object, method uint32, args ...any) gua.StatusCode {
		t.Helper()
		_, st := callNS0(t, ctx, admin, object, method, args...)
		return st
	}
	size := func() uint64 {
		v, err := admin.Node(gua.NewNumericNodeID(0, trustListSize)).Value(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := v.Value().(uint64)
		return n
	}
	before := size()
	if st := call(userTrustList, addCertificate, opCert, true); st != gua.StatusOK {
		t.Fatalf("AddCertificate to the DefaultUserTokenGroup: %v", st)
	}
	if after := size(); after <= before {
		t.Errorf("the user TrustList's Size %d after AddCertificate, %d before", after, before)
	}
	if err := asUser(); err != nil {
		t.Fatalf("the X.509 user after AddCertificate: %v", err)
	}
	if st := call(userTrustList, removeCertificate, pki.ThumbprintHex(opCert), true); st != gua.StatusOK {
		t.Fatalf("RemoveCertificate: %v", st)
	}
	if err := asUser(); err == nil {
		t.Fatal("the X.509 user was accepted after RemoveCertificate")
	}
	if st := call(serverConfiguration, cancelChanges); st != gua.StatusOK {
		t.Errorf("CancelChanges: %v", st)
	}
}
