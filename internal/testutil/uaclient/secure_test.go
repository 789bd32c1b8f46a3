package uaclient

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/uasc"
)

// TestSecureSession: the client over every policy and mode against our
// server: handshake, the session's signatures, a Call, pipelined
// stamped requests and their responses, opened in NextChunk.
func TestSecureSession(t *testing.T) {
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI, Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := uasc.NewCredentials(der, key)
	addr := startServerWith(t, server.Config{Security: &server.Security{
		Credentials:      func() *uasc.Credentials { return own },
		CheckCertificate: func(*x509.Certificate, []*x509.Certificate) error { return nil },
	}})
	const uri = "urn:edged:uaclient"
	cert, ckey, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, Key: testkeys.RSA(3072)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range secpol.All {
		for _, mode := range []ua.MessageSecurityMode{ua.MessageSecurityModeSign, ua.MessageSecurityModeSignAndEncrypt} {
			t.Run(p.Name()+"/"+mode.String(), func(t *testing.T) {
				sc, err := ServerCertificate(addr, p.URI(), mode, 5*time.Second)
				if err != nil || string(sc) != string(der) {
					t.Fatalf("ServerCertificate: %v", err)
				}
				c, err := DialSecure(addr, "secure", &Security{Policy: p, Mode: mode, Certificate: cert, Key: ckey, ApplicationURI: uri, ServerCertificate: sc}, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c.Conn().SetDeadline(time.Now().Add(10 * time.Second)) // bounded, never a timing assertion
				var resp ua.ReadResponse
				if err := c.Call(readNamespaces(c), &resp); err != nil || len(resp.Results) != 1 {
					t.Fatalf("Read: %v", err)
				}
				tpl, err := c.Template(readNamespaces(c))
				if err != nil {
					t.Fatal(err)
				}
				var b []byte
				for i := range 5 {
					b = c.AppendStamped(b, tpl, uint32(100+i))
				}
				if _, err := c.Conn().Write(b); err != nil {
					t.Fatal(err)
				}
				for i := range 5 {
					id, msg, err := c.ReadMessage()
					if err != nil || id != uint32(100+i) {
						t.Fatalf("response %d: id %d, %v", i, id, err)
					}
					if err := c.Decode(msg, &resp); err != nil {
						t.Fatalf("response %d: %v", i, err)
					}
				}
				if err := c.Close(5 * time.Second); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestSecureSessionECC: the same over the ECC policies, with server and
// client certificates of each policy's curve.
func TestSecureSessionECC(t *testing.T) {
	owns := map[string]*uasc.Credentials{}
	ders := map[string][]byte{}
	for _, p := range secpol.AllECC {
		der, key, err := pki.NewECCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI}, p.Curve())
		if err != nil {
			t.Fatal(err)
		}
		if owns[p.CertificateType()], err = uasc.NewECCredentials(der, key); err != nil {
			t.Fatal(err)
		}
		ders[p.CertificateType()] = der
	}
	rsaDER, rsaKey, _ := pki.NewCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI, Key: testkeys.RSA(2048)})
	rsaOwn, _ := uasc.NewCredentials(rsaDER, rsaKey)
	addr := startServerWith(t, server.Config{Security: &server.Security{
		Credentials:      func() *uasc.Credentials { return rsaOwn },
		ECCCredentials:   func(t string) *uasc.Credentials { return owns[t] },
		CheckCertificate: func(*x509.Certificate, []*x509.Certificate) error { return nil },
	}})
	const uri = "urn:edged:uaclient"
	for _, p := range secpol.AllECC {
		cert, ckey, err := pki.NewECCertificate(pki.Template{ApplicationURI: uri}, p.Curve())
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []ua.MessageSecurityMode{ua.MessageSecurityModeSign, ua.MessageSecurityModeSignAndEncrypt} {
			t.Run(p.Name()+"/"+mode.String(), func(t *testing.T) {
				sc, err := ServerCertificate(addr, p.URI(), mode, 5*time.Second)
				if err != nil || string(sc) != string(ders[p.CertificateType()]) {
					t.Fatalf("ServerCertificate: %v", err)
				}
				c, err := DialSecure(addr, "secure", &Security{ECC: p, ECKey: ckey, Mode: mode, Certificate: cert, ApplicationURI: uri, ServerCertificate: sc}, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c.Conn().SetDeadline(time.Now().Add(10 * time.Second))
				var resp ua.ReadResponse
				if err := c.Call(readNamespaces(c), &resp); err != nil || len(resp.Results) != 1 {
					t.Fatalf("Read: %v", err)
				}
				if err := c.Close(5 * time.Second); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
