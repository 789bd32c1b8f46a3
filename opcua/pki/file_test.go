package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/ua/status"
)

func pemOf(typ string, der ...[]byte) []byte {
	var b []byte
	for _, d := range der {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: d})...)
	}
	return b
}

// TestParseCertFile: DER and PEM, one or several certificates, CRLs, and
// every kind of bad file with an error that says what was found.
func TestParseCertFile(t *testing.T) {
	ca := mk(t, Template{CommonName: "site CA", CA: true, Key: testkeys.RSA(3072)})
	leaf := mk(t, Template{ApplicationURI: "urn:leaf", Issuer: ca.cert, IssuerKey: ca.key})
	list := crl(t, ca, leaf.cert)
	key := pemOf("PRIVATE KEY", mustPKCS8(t, leaf))
	good := []struct {
		name         string
		b            []byte
		certs, crls  int
		firstSubject string
	}{
		{"DER certificate", leaf.der, 1, 0, ""},
		{"DER certificates back to back", append(append([]byte{}, leaf.der...), ca.der...), 2, 0, ""},
		{"DER CRL", list, 0, 1, ""},
		{"PEM certificate", pemOf("CERTIFICATE", leaf.der), 1, 0, ""},
		{"PEM chain with text around", append(append([]byte("Certificate:\n  subject: leaf\n"), pemOf("CERTIFICATE", leaf.der, ca.der)...), "trailing words\n"...), 2, 0, ""},
		{"PEM with CRLF", bytes.ReplaceAll(pemOf("CERTIFICATE", leaf.der), []byte("\n"), []byte("\r\n")), 1, 0, ""},
		{"PEM CRL", pemOf("X509 CRL", list), 0, 1, ""},
		{"PEM certificate and CRL", append(pemOf("CERTIFICATE", ca.der), pemOf("X509 CRL", list)...), 1, 1, ""},
		{"OpenSSL TRUSTED CERTIFICATE", pemOf("TRUSTED CERTIFICATE", append(append([]byte{}, ca.der...), 0x30, 0x03, 0x06, 0x01, 0x00)), 1, 0, ""},
	}
	for _, g := range good {
		c, err := ParseCertFile(g.b)
		if err != nil {
			t.Errorf("%s: %v", g.name, err)
			continue
		}
		if len(c.Certs) != g.certs || len(c.CRLs) != g.crls {
			t.Errorf("%s: %d certificates and %d CRLs, want %d and %d", g.name, len(c.Certs), len(c.CRLs), g.certs, g.crls)
		}
	}
	bad := []struct {
		name string
		b    []byte
		want string // in the error
	}{
		{"empty", nil, "empty"},
		{"blank", []byte(" \n\t\n"), "empty"},
		{"PEM private key", key, "PEM block 1 (PRIVATE KEY) is a private key"},
		{"certificate then its key", append(pemOf("CERTIFICATE", leaf.der), key...), "PEM block 2 (PRIVATE KEY) is a private key"},
		{"RSA key", pemOf("RSA PRIVATE KEY", []byte{0x30, 0}), "is a private key"},
		{"signing request", pemOf("CERTIFICATE REQUEST", []byte{0x30, 0}), "PEM block 1 (CERTIFICATE REQUEST) is not a certificate or CRL"},
		{"broken certificate block", pemOf("CERTIFICATE", leaf.der[:100]), "PEM block 1 (CERTIFICATE)"},
		{"broken CRL block", pemOf("X509 CRL", list[:50]), "PEM block 1 (X509 CRL)"},
		{"header without block", []byte("-----BEGIN CERTIFICATE-----\nMIIB\n"), "no complete PEM block"},
		{"good block, then a broken one", append(pemOf("CERTIFICATE", leaf.der), "-----BEGIN CERTIFICATE-----\nxx"...), "broken"},
		{"text", []byte("hello, world\n"), "neither PEM nor a DER certificate or CRL (it begins with 68 65 6c"},
		{"DER of something else", []byte{0x30, 0x03, 0x02, 0x01, 0x05}, "neither PEM nor a DER certificate or CRL"},
		{"DER with garbage after it", append(append([]byte{}, leaf.der...), 1, 2, 3), "neither PEM nor a DER"},
	}
	for _, b := range bad {
		c, err := ParseCertFile(b.b)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want one with %q", b.name, err, b.want)
		}
		if len(c.Certs)+len(c.CRLs) > 0 {
			t.Errorf("%s: returned %d certificates and %d CRLs with its error", b.name, len(c.Certs), len(c.CRLs))
		}
	}
	// Every prefix of a good file fails cleanly or parses (a PEM file cut
	// after a block), never panics.
	for _, g := range good {
		for n := range len(g.b) {
			ParseCertFile(g.b[:n])
		}
	}
}

func mustPKCS8(t *testing.T, i issued) []byte {
	t.Helper()
	b, err := x509.MarshalPKCS8PrivateKey(i.key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzParseCertFile: no input panics, and what parses is whole.
func FuzzParseCertFile(f *testing.F) {
	ca := mk(&testing.T{}, Template{CommonName: "fuzz CA", CA: true, Key: testkeys.RSA(2048)})
	f.Add(ca.der)
	f.Add(pemOf("CERTIFICATE", ca.der))
	f.Add(pemOf("X509 CRL", []byte{0x30, 0x82, 0x01, 0x00}))
	f.Add([]byte("-----BEGIN TRUSTED CERTIFICATE-----\n-----END TRUSTED CERTIFICATE-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCertFile(b)
		if err != nil && len(c.Certs)+len(c.CRLs) > 0 {
			t.Fatal("contents returned with an error")
		}
		for _, x := range c.Certs {
			if x == nil {
				t.Fatal("nil certificate")
			}
		}
	})
}

func readDir(t *testing.T, s *Store, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(s.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestImport: what `edged pki trust FILE` does with a certificate, a
// chain, a CA and CRLs.
func TestImport(t *testing.T) {
	root := mk(t, Template{CommonName: "root CA", CA: true, Key: testkeys.RSA(3072)})
	inter := mk(t, Template{CommonName: "line CA", CA: true, Key: testkeys.RSA(4096), Issuer: root.cert, IssuerKey: root.key})
	leaf := mk(t, Template{ApplicationURI: "urn:leaf", Issuer: inter.cert, IssuerKey: inter.key})
	stranger := mk(t, Template{CommonName: "other CA", CA: true, Key: testkeys.RSA(2048)})

	t.Run("chain", func(t *testing.T) {
		s, _ := Open(t.TempDir())
		c, err := ParseCertFile(pemOf("CERTIFICATE", leaf.der, inter.der, root.der))
		if err != nil {
			t.Fatal(err)
		}
		placed, err := s.Import(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(placed) != 3 || placed[0].Dir != TrustedCerts || !placed[0].Cert.Equal(leaf.cert) || placed[0].Note != "" ||
			placed[1].Dir != IssuerCerts || placed[2].Dir != IssuerCerts {
			t.Fatalf("placed %+v", placed)
		}
		if got := readDir(t, s, TrustedCerts); len(got) != 1 || got[0] != ThumbprintHex(leaf.der)+".der" {
			t.Fatalf("trusted/certs: %v", got)
		}
		if got := readDir(t, s, IssuerCerts); len(got) != 2 {
			t.Fatalf("issuers/certs: %v", got)
		}
		wantCode(t, s.Verify(leaf.cert, nil), status.Good)
	})
	t.Run("CA then CRLs", func(t *testing.T) {
		s, _ := Open(t.TempDir())
		// CA certificates only: the first is trusted, the others
		// are issuers.
		c, _ := ParseCertFile(pemOf("CERTIFICATE", inter.der, root.der))
		placed, err := s.Import(c)
		if err != nil || len(placed) != 2 || placed[0].Dir != TrustedCerts || !strings.Contains(placed[0].Note, "Bad_CertificateRevocationUnknown") ||
			placed[1].Dir != IssuerCerts {
			t.Fatalf("placed %+v, %v", placed, err)
		}
		wantCode(t, s.Verify(leaf.cert, nil), status.BadCertificateRevocationUnknown)
		// A CRL of a CA the store does not know: refused, nothing written.
		c, _ = ParseCertFile(pemOf("X509 CRL", crl(t, stranger)))
		if _, err := s.Import(c); err == nil || !strings.Contains(err.Error(), "other CA") {
			t.Fatalf("CRL of an unknown CA: %v", err)
		}
		if got := readDir(t, s, TrustedCRL); len(got) != 0 {
			t.Fatalf("trusted/crl after a refused import: %v", got)
		}
		// The line CA's CRL goes to trusted/crl, the root's to
		// issuers/crl: one PEM file with both.
		c, _ = ParseCertFile(pemOf("X509 CRL", crl(t, inter, leaf.cert), crl(t, root)))
		placed, err = s.Import(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(placed) != 2 || placed[0].Dir != TrustedCRL || placed[1].Dir != IssuerCRL {
			t.Fatalf("placed %+v", placed)
		}
		wantCode(t, s.Verify(leaf.cert, nil), status.BadCertificateRevoked)
	})
	t.Run("CRL of an issuer", func(t *testing.T) {
		s, _ := Open(t.TempDir())
		c, _ := ParseCertFile(pemOf("CERTIFICATE", leaf.der, inter.der))
		if _, err := s.Import(c); err != nil {
			t.Fatal(err)
		}
		c, _ = ParseCertFile(crl(t, inter))
		placed, err := s.Import(c)
		if err != nil || len(placed) != 1 || placed[0].Dir != IssuerCRL {
			t.Fatalf("placed %+v, %v", placed, err)
		}
	})
}

// TestFoldersReadPEM: certificates and CRLs put into the folders by hand
// as PEM count as DER ones do; a bad file is a problem that names it and
// the rest is read.
func TestFoldersReadPEM(t *testing.T) {
	s, _ := Open(t.TempDir())
	ca := mk(t, Template{CommonName: "site CA", CA: true, Key: testkeys.RSA(3072)})
	cli := mk(t, Template{ApplicationURI: "urn:client", Issuer: ca.cert, IssuerKey: ca.key})
	revoked := mk(t, Template{ApplicationURI: "urn:revoked", Issuer: ca.cert, IssuerKey: ca.key})
	put(t, s, TrustedCerts, "ca.pem", pemOf("CERTIFICATE", ca.der))
	put(t, s, TrustedCRL, "ca.crl.pem", pemOf("X509 CRL", crl(t, ca, revoked.cert)))
	put(t, s, TrustedCerts, "key.pem", pemOf("PRIVATE KEY", mustPKCS8(t, cli)))
	put(t, s, IssuerCerts, "junk.der", []byte("not a certificate"))
	var told []string
	s.onProblem = func(p string) { told = append(told, p) }
	wantCode(t, s.Verify(cli.cert, nil), status.Good)
	wantCode(t, s.Verify(revoked.cert, nil), status.BadCertificateRevoked)
	probs := s.Problems()
	if len(probs) != 2 || !strings.Contains(probs[0]+probs[1], "key.pem: PEM block 1 (PRIVATE KEY) is a private key") ||
		!strings.Contains(probs[0]+probs[1], "junk.der: neither PEM nor") {
		t.Fatalf("problems: %q", probs)
	}
	if len(told) != 2 {
		t.Fatalf("OnProblem told %d problems, want 2 (once each): %q", len(told), told)
	}
	s.Verify(cli.cert, nil)
	if len(told) != 2 {
		t.Fatalf("OnProblem told the same problems again: %q", told)
	}
	lists, err := s.Lists()
	if err == nil {
		t.Fatalf("Lists with a bad file: no error (%d trusted)", len(lists[0]))
	}
	os.Remove(s.Path(TrustedCerts) + "/key.pem")
	os.Remove(s.Path(IssuerCerts) + "/junk.der")
	lists, err = s.Lists()
	if err != nil || len(lists[0]) != 1 || !bytes.Equal(lists[0][0], ca.der) || len(lists[1]) != 1 {
		t.Fatalf("Lists: %v, %d trusted, %d CRLs", err, len(lists[0]), len(lists[1]))
	}
	// A trusted PEM chain put by hand: removing one certificate keeps
	// the other.
	put(t, s, TrustedCerts, "pair.pem", pemOf("CERTIFICATE", cli.der, revoked.der))
	if err := s.Remove(ThumbprintHex(cli.der), true); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Find(TrustedCerts, ThumbprintHex(revoked.der)); !ok {
		t.Fatal("removing one certificate of a PEM file removed the other")
	}
	if _, ok := s.Find(TrustedCerts, ThumbprintHex(cli.der)); ok {
		t.Fatal("the removed certificate is still trusted")
	}
}

// TestOwnCertificatePEM: edged's own certificate replaced by hand with a
// PEM file is read.
func TestOwnCertificatePEM(t *testing.T) {
	s, _ := Open(t.TempDir())
	der, key, _, err := s.EnsureOwn(Template{ApplicationURI: "urn:own", Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.OwnCertPath(), pemOf("CERTIFICATE", der), 0o644)
	d2, k2, err := s.LoadOwn()
	if err != nil || !bytes.Equal(d2, der) || !k2.Equal(key) {
		t.Fatalf("LoadOwn of a PEM certificate: %v", err)
	}
	os.WriteFile(s.OwnCertPath(), []byte("garbage"), 0o644)
	if _, _, err := s.LoadOwn(); err == nil || !strings.Contains(err.Error(), "edged.der: neither PEM nor") {
		t.Fatalf("LoadOwn of garbage: %v", err)
	}
}

// TestOpenSSLFiles: PEM files as openssl writes them — a self-signed
// certificate, a CA, a certificate it signed, the CA's CRL revoking
// another — are read, imported and verified.
func TestOpenSSLFiles(t *testing.T) {
	openssl := peer.Command(t, "openssl", "openssl")
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const leafExt = "subjectAltName=URI:urn:openssl:client,DNS:localhost\nkeyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment\nextendedKeyUsage=clientAuth,serverAuth\nbasicConstraints=critical,CA:FALSE\n"
	write("leaf.ext", leafExt)
	write("ca.cnf", `[ca]
default_ca = edged_test
[edged_test]
database = index.txt
crlnumber = crlnumber
default_md = sha256
default_crl_days = 30
`)
	write("index.txt", "")
	write("crlnumber", "01\n")
	// Self-signed, as `openssl req -x509` makes a client certificate.
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.pem", "-days", "30",
		"-subj", "/CN=openssl client", "-addext", "subjectAltName=URI:urn:openssl:self",
		"-addext", "keyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment,keyCertSign")
	// A CA, and two clients it signs.
	run("req", "-x509", "-newkey", "rsa:3072", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
		"-subj", "/CN=openssl CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
	for _, n := range []string{"good", "bad"} {
		run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", n+".key", "-out", n+".csr", "-subj", "/CN=openssl "+n)
		run("x509", "-req", "-in", n+".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "30",
			"-sha256", "-extfile", "leaf.ext", "-out", n+".pem")
	}
	run("ca", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-revoke", "bad.pem")
	run("ca", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-gencrl", "-out", "ca.crl.pem")
	// The text form too: `openssl x509 -text` puts the dump before the block.
	run("x509", "-in", "good.pem", "-text", "-out", "good.txt.pem")

	s, _ := Open(t.TempDir())
	read := func(name string) Contents {
		t.Helper()
		c, err := ReadCertFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	self := read("self.pem")
	if len(self.Certs) != 1 {
		t.Fatalf("self.pem: %d certificates", len(self.Certs))
	}
	if _, err := s.Import(self); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Verify(self.Certs[0], nil), status.Good)
	if c := read("good.txt.pem"); len(c.Certs) != 1 || !c.Certs[0].Equal(read("good.pem").Certs[0]) {
		t.Fatal("the text form of good.pem is not the same certificate")
	}
	if _, err := ReadCertFile(filepath.Join(dir, "good.key")); err == nil || !strings.Contains(err.Error(), "good.key: PEM block 1 (PRIVATE KEY) is a private key") {
		t.Fatalf("openssl's key file: %v", err)
	}
	good, bad := read("good.pem").Certs[0], read("bad.pem").Certs[0]
	wantCode(t, s.Verify(good, nil), status.BadCertificateChainIncomplete)
	placed, err := s.Import(read("ca.pem"))
	if err != nil || len(placed) != 1 || placed[0].Note == "" {
		t.Fatalf("the CA: %+v, %v", placed, err)
	}
	wantCode(t, s.Verify(good, nil), status.BadCertificateRevocationUnknown)
	crls := read("ca.crl.pem")
	if len(crls.CRLs) != 1 || len(crls.CRLs[0].RevokedCertificateEntries) != 1 {
		t.Fatalf("ca.crl.pem: %d CRLs", len(crls.CRLs))
	}
	if placed, err := s.Import(crls); err != nil || placed[0].Dir != TrustedCRL {
		t.Fatalf("the CRL: %+v, %v", placed, err)
	}
	wantCode(t, s.Verify(good, nil), status.Good)
	wantCode(t, s.Verify(bad, nil), status.BadCertificateRevoked)
}
