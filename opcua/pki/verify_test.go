package pki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/ua/status"
)

type issued struct {
	der  []byte
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

func mk(t *testing.T, tpl Template) issued {
	t.Helper()
	if tpl.Key == nil && tpl.Bits == 0 {
		tpl.Key = testkeys.RSA(2048)
	}
	der, key, err := NewCertificate(tpl)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return issued{der, key, c}
}

func put(t *testing.T, s *Store, dir, name string, der []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.root, dir, name), der, 0o644); err != nil {
		t.Fatal(err)
	}
}

func crl(t *testing.T, ca issued, revoked ...*x509.Certificate) []byte {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, c := range revoked {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: c.SerialNumber, RevocationTime: time.Now()})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number:                    big.NewInt(1),
		ThisUpdate:                time.Now().Add(-time.Hour),
		NextUpdate:                time.Now().Add(24 * time.Hour),
		RevokedCertificateEntries: entries,
	}, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func wantCode(t *testing.T, err error, want status.Code) {
	t.Helper()
	if want == status.Good {
		if err != nil {
			t.Fatalf("rejected with %v, want accepted", err)
		}
		return
	}
	if err != want {
		t.Fatalf("got %v, want %v", err, want)
	}
}

func TestVerifySelfSigned(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var rejected []string
	s.SetOnReject(func(c *x509.Certificate, file string, why error) { rejected = append(rejected, file) })
	cli := mk(t, Template{ApplicationURI: "urn:client", CommonName: "client"})

	// An empty trust list trusts nobody; the certificate lands in
	// rejected/certs under its thumbprint.
	wantCode(t, s.Verify(cli.cert, nil), status.BadCertificateUntrusted)
	saved := filepath.Join(s.root, RejectedDir, RejectedName(cli.der))
	if len(rejected) != 1 || rejected[0] != saved {
		t.Fatalf("rejections %v, want [%s]", rejected, saved)
	}
	if b, err := os.ReadFile(saved); err != nil || string(b) != string(cli.der) {
		t.Fatalf("rejected copy: %v", err)
	}

	// Trusted by moving it over: accepted at the next check.
	if err := os.Rename(saved, filepath.Join(s.root, TrustedCerts, "client.der")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Verify(cli.cert, nil), status.Good)

	// And untrusted again by removing it.
	os.Remove(filepath.Join(s.root, TrustedCerts, "client.der"))
	wantCode(t, s.Verify(cli.cert, nil), status.BadCertificateUntrusted)
}

func TestVerifyChecks(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	expired := mk(t, Template{ApplicationURI: "urn:old", NotBefore: time.Now().Add(-48 * time.Hour), Validity: 24 * time.Hour})
	future := mk(t, Template{ApplicationURI: "urn:future", NotBefore: time.Now().Add(24 * time.Hour)})
	put(t, s, TrustedCerts, "old.der", expired.der)
	put(t, s, TrustedCerts, "future.der", future.der)
	wantCode(t, s.Verify(expired.cert, nil), status.BadCertificateTimeInvalid)
	wantCode(t, s.Verify(future.cert, nil), status.BadCertificateTimeInvalid)

	// Hand-made certificates for what NewCertificate does not make.
	key := mk(t, Template{}).key
	odd := func(mut func(c *x509.Certificate)) *x509.Certificate {
		tpl := &x509.Certificate{
			SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "odd"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage:           x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			SignatureAlgorithm: x509.SHA256WithRSA,
		}
		mut(tpl)
		der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		put(t, s, TrustedCerts, fmt.Sprintf("odd%d.der", c.SerialNumber), der)
		return c
	}
	wantCode(t, s.Verify(odd(func(c *x509.Certificate) { c.SerialNumber = big.NewInt(1); c.KeyUsage = x509.KeyUsageKeyEncipherment }), nil),
		status.BadCertificateUseNotAllowed)
	wantCode(t, s.Verify(odd(func(c *x509.Certificate) {
		c.SerialNumber = big.NewInt(2)
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}), nil), status.BadCertificateUseNotAllowed)
	wantCode(t, s.Verify(odd(func(c *x509.Certificate) { c.SerialNumber = big.NewInt(3) }), nil), status.Good)

	small := mk(t, Template{ApplicationURI: "urn:small", Bits: 1024})
	put(t, s, TrustedCerts, "small.der", small.der)
	wantCode(t, s.Verify(small.cert, nil), status.BadCertificatePolicyCheckFailed)
}

func TestVerifyCA(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ca := mk(t, Template{CommonName: "site CA", CA: true, Key: testkeys.RSA(3072)})
	other := mk(t, Template{CommonName: "other CA", CA: true, Key: testkeys.RSA(4096)})
	cli := mk(t, Template{ApplicationURI: "urn:client", Issuer: ca.cert, IssuerKey: ca.key})
	stranger := mk(t, Template{ApplicationURI: "urn:stranger", Issuer: other.cert, IssuerKey: other.key})
	revoked := mk(t, Template{ApplicationURI: "urn:revoked", Issuer: ca.cert, IssuerKey: ca.key})

	// The CA is unknown: the chain cannot be built.
	wantCode(t, s.Verify(cli.cert, nil), status.BadCertificateChainIncomplete)
	// Sent along, the chain is whole but trusts nobody.
	wantCode(t, s.Verify(cli.cert, []*x509.Certificate{ca.cert}), status.BadCertificateUntrusted)
	// An issuer is not trusted by being known.
	put(t, s, IssuerCerts, "ca.der", ca.der)
	wantCode(t, s.Verify(cli.cert, nil), status.BadCertificateUntrusted)
	// Trusted CA, but no CRL of it.
	os.Remove(filepath.Join(s.root, IssuerCerts, "ca.der"))
	put(t, s, TrustedCerts, "ca.der", ca.der)
	wantCode(t, s.Verify(cli.cert, nil), status.BadCertificateRevocationUnknown)
	// With its CRL.
	put(t, s, TrustedCRL, "ca.crl", crl(t, ca, revoked.cert))
	wantCode(t, s.Verify(cli.cert, nil), status.Good)
	wantCode(t, s.Verify(revoked.cert, nil), status.BadCertificateRevoked)
	// Another CA's certificate: untrusted, even when it brings its CA.
	wantCode(t, s.Verify(stranger.cert, nil), status.BadCertificateChainIncomplete)
	wantCode(t, s.Verify(stranger.cert, []*x509.Certificate{other.cert}), status.BadCertificateUntrusted)
}

func TestRejectedBounded(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.rejectLimit = -1        // the bound of the folder, not the rate
	key := testkeys.RSA(2048) // one key, many certificates: fast
	for i := range MaxRejected + 10 {
		c := mk(t, Template{ApplicationURI: fmt.Sprintf("urn:c%d", i), Key: key})
		wantCode(t, s.Verify(c.cert, nil), status.BadCertificateUntrusted)
	}
	ents, _ := os.ReadDir(filepath.Join(s.root, RejectedDir))
	if len(ents) != MaxRejected {
		t.Fatalf("%d rejected files, want %d", len(ents), MaxRejected)
	}
}

func TestEnsureOwn(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tpl := Template{ApplicationURI: "urn:edged:test", CommonName: "edged", DNSNames: []string{"gw1"}}
	der, _, created, err := s.EnsureOwn(tpl)
	if err != nil || !created {
		t.Fatalf("first start: created %v, %v", created, err)
	}
	fi, err := os.Stat(filepath.Join(dir, OwnPrivate, ownKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, fi.Mode().Perm())
	}
	again, _, created, err := s.EnsureOwn(tpl)
	if err != nil || created || string(again) != string(der) {
		t.Fatalf("second start: created %v, %v; same certificate %v", created, err, string(again) == string(der))
	}
	if p := CheckOwn(der, "urn:edged:test", []string{"gw1"}, time.Now()); len(p) != 0 {
		t.Fatalf("problems %v", p)
	}
	p := CheckOwn(der, "urn:other", []string{"gw2", "10.0.0.9"}, time.Now().Add(11*365*24*time.Hour))
	if len(p) != 4 {
		t.Fatalf("problems %q, want 4 (URI, two hosts, expiry)", p)
	}
}

// TestRejectionRate: beyond MaxRejectionsPerMinute new certificates are
// refused as before but neither saved nor reported; the count is.
func TestRejectionRate(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reported := 0
	s.SetOnReject(func(*x509.Certificate, string, error) { reported++ })
	var dropped []int
	s.onDropped = func(n int) { dropped = append(dropped, n) }
	key := testkeys.RSA(2048)
	for i := range MaxRejectionsPerMinute + 5 {
		c := mk(t, Template{ApplicationURI: fmt.Sprintf("urn:c%d", i), Key: key})
		wantCode(t, s.Verify(c.cert, nil), status.BadCertificateUntrusted)
	}
	ents, _ := os.ReadDir(filepath.Join(s.root, RejectedDir))
	if reported != MaxRejectionsPerMinute || len(ents) != MaxRejectionsPerMinute {
		t.Fatalf("%d reported, %d saved, want %d each", reported, len(ents), MaxRejectionsPerMinute)
	}
	// The next minute: the count of the dropped, then business as usual.
	s.mu.Lock()
	s.rejWindow = s.rejWindow.Add(-time.Minute)
	s.mu.Unlock()
	c := mk(t, Template{ApplicationURI: "urn:later", Key: key})
	wantCode(t, s.Verify(c.cert, nil), status.BadCertificateUntrusted)
	if len(dropped) != 1 || dropped[0] != 5 || reported != MaxRejectionsPerMinute+1 {
		t.Fatalf("dropped %v, reported %d", dropped, reported)
	}
}
