package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// TestSigningRequestPerType: for each ECC certificate type a signing
// request for a new key of the type's kind (P-256, P-384, Ed25519), the
// certificate a CA signs from it installed with UpdateCertificate under
// its type, beside the others; a certificate of another kind under a
// type is refused.
func TestSigningRequestPerType(t *testing.T) {
	const uri = "urn:edged:test:gw"
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caDER, caKey, err := NewCertificate(Template{CommonName: "plant CA", CA: true})
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	for _, c := range []struct {
		typ   string
		curve elliptic.Curve
	}{{"nistP256", elliptic.P256()}, {"nistP384", elliptic.P384()}, {"curve25519", nil}} {
		old, oldKey, created, err := s.EnsureOwnEC(c.typ, c.curve, Template{ApplicationURI: uri, CommonName: "gw"})
		if err != nil || !created {
			t.Fatalf("%s: %v", c.typ, err)
		}
		der, err := s.SigningRequest(c.typ, nil, true)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		csr, err := x509.ParseCertificateRequest(der)
		if err != nil || csr.CheckSignature() != nil {
			t.Fatalf("%s: the request: %v", c.typ, err)
		}
		switch k := csr.PublicKey.(type) {
		case *ecdsa.PublicKey:
			if k.Curve != c.curve || k.Equal(oldKey.Public()) {
				t.Fatalf("%s: a request for a key on %v, or the old key", c.typ, k.Curve.Params().Name)
			}
		case ed25519.PublicKey:
			if c.curve != nil || k.Equal(oldKey.Public()) {
				t.Fatalf("%s: an Ed25519 request, or the old key", c.typ)
			}
		default:
			t.Fatalf("%s: a request for a %T", c.typ, k)
		}
		signed, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
			SerialNumber: big.NewInt(7), Subject: csr.Subject, URIs: csr.URIs,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature,
		}, ca, csr.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateCertificate(CertTypeRSA, signed, nil, nil, uri); err == nil {
			t.Fatalf("%s: its certificate taken as the RSA one", c.typ)
		}
		if err := s.UpdateCertificate(c.typ, signed, nil, nil, uri); err != nil {
			t.Fatalf("%s: UpdateCertificate: %v", c.typ, err)
		}
		now, key, err := s.LoadOwnEC(c.typ)
		if err != nil || !bytes.Equal(now, signed) || bytes.Equal(now, old) || !publicEqual(key, csr.PublicKey) {
			t.Fatalf("%s: after UpdateCertificate the store has another certificate or key (%v)", c.typ, err)
		}
	}
	// An RSA certificate with its own key: of another type.
	rsaDER, rsaKey, err := NewCertificate(Template{ApplicationURI: uri})
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})
	if err := s.UpdateCertificate("nistP256", rsaDER, nil, keyPEM, uri); err == nil {
		t.Fatal("an RSA certificate and key taken as the nistP256 ones")
	}
}
