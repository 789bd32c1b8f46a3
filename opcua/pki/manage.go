package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/edged/edged/internal/atomicfile"
)

// The trust lists as OPC 10000-12's TrustListDataType names them, by the
// bits of its SpecifiedLists.
const (
	ListTrustedCertificates = 1
	ListTrustedCRLs         = 2
	ListIssuerCertificates  = 4
	ListIssuerCRLs          = 8
	ListAll                 = 15
)

var listDirs = [4]struct {
	bit  uint32
	dir  string
	cert bool
}{
	{ListTrustedCertificates, TrustedCerts, true},
	{ListTrustedCRLs, TrustedCRL, false},
	{ListIssuerCertificates, IssuerCerts, true},
	{ListIssuerCRLs, IssuerCRL, false},
}

// ErrNotFound is Remove's error for a thumbprint no list holds.
var ErrNotFound = errors.New("pki: no such certificate")

// Lists returns the four lists (DER), in the order of the List bits.
func (s *Store) Lists() ([4][][]byte, error) {
	var out [4][][]byte
	for i, l := range listDirs {
		for _, p := range s.files(l.dir) {
			c, err := ReadCertFile(p)
			if err != nil {
				return out, err
			}
			if l.cert {
				for _, x := range c.Certs {
					out[i] = append(out[i], x.Raw)
				}
				if len(c.CRLs) > 0 {
					return out, fmt.Errorf("%s: holds a CRL in a certificate folder", p)
				}
			} else {
				for _, x := range c.CRLs {
					out[i] = append(out[i], x.Raw)
				}
				if len(c.Certs) > 0 {
					return out, fmt.Errorf("%s: holds a certificate in a CRL folder", p)
				}
			}
		}
	}
	return out, nil
}

// Replace replaces the lists whose bits masks has with lists (indexed as
// Lists returns them): every entry must parse (a certificate or a CRL), or
// nothing changes.
func (s *Store) Replace(masks uint32, lists [4][][]byte) error {
	for i, l := range listDirs {
		if masks&l.bit == 0 {
			continue
		}
		for _, b := range lists[i] {
			if err := checkEntry(b, l.cert); err != nil {
				return err
			}
		}
	}
	for i, l := range listDirs {
		if masks&l.bit == 0 {
			continue
		}
		for _, p := range s.files(l.dir) {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		for _, b := range lists[i] {
			if err := s.writeEntry(l.dir, b, l.cert); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkEntry(b []byte, cert bool) error {
	if cert {
		if _, err := x509.ParseCertificate(b); err != nil {
			return fmt.Errorf("pki: not a certificate: %w", err)
		}
		return nil
	}
	if _, err := x509.ParseRevocationList(b); err != nil {
		return fmt.Errorf("pki: not a CRL: %w", err)
	}
	return nil
}

func (s *Store) writeEntry(dir string, b []byte, cert bool) error {
	name := ThumbprintHex(b)
	if cert {
		name += ".der"
	} else {
		name += ".crl"
	}
	return atomicfile.WriteFile(filepath.Join(s.root, dir, name), b, 0o644)
}

// Add puts a certificate into trusted/certs (trusted) or issuers/certs.
func (s *Store) Add(der []byte, trusted bool) error {
	if err := checkEntry(der, true); err != nil {
		return err
	}
	dir := IssuerCerts
	if trusted {
		dir = TrustedCerts
	}
	return s.writeEntry(dir, der, true)
}

// CertFile is a certificate of a folder of the store and its file.
type CertFile struct {
	Path string
	Cert *x509.Certificate
}

// Certs returns the certificates of a folder of the store (DER or PEM
// files; files that do not parse are left out).
func (s *Store) Certs(dir string) []CertFile {
	var out []CertFile
	for _, p := range s.files(dir) {
		c, _ := ReadCertFile(p)
		for _, x := range c.Certs {
			out = append(out, CertFile{p, x})
		}
	}
	return out
}

// Find returns the certificate of a folder with the thumbprint (hex, any
// case).
func (s *Store) Find(dir, thumbprint string) (CertFile, bool) {
	want := strings.ToUpper(strings.TrimSpace(thumbprint))
	for _, f := range s.Certs(dir) {
		if ThumbprintHex(f.Cert.Raw) == want {
			return f, true
		}
	}
	return CertFile{}, false
}

// Remove removes the certificate with the thumbprint (hex, any case)
// from trusted/certs (trusted) or issuers/certs; ErrNotFound when the
// list has none.
func (s *Store) Remove(thumbprint string, trusted bool) error {
	dir := IssuerCerts
	if trusted {
		dir = TrustedCerts
	}
	f, ok := s.Find(dir, thumbprint)
	if !ok {
		return ErrNotFound
	}
	return f.Remove()
}

// Rejected returns the certificates of rejected/certs.
func (s *Store) Rejected() ([][]byte, error) {
	var out [][]byte
	for _, p := range s.files(RejectedDir) {
		c, err := ReadCertFile(p)
		if err != nil {
			return nil, err
		}
		for _, x := range c.Certs {
			out = append(out, x.Raw)
		}
	}
	return out, nil
}

// SigningRequest returns a certificate signing request (PKCS#10, DER)
// for the application's certificate, with its subjectAltName and its
// subject, or subject when that is not nil; with regenerate it is for a
// new key, which UpdateCertificate then takes with the signed
// certificate.
func (s *Store) SigningRequest(certType string, subject *pkix.Name, regenerate bool) ([]byte, error) {
	der, key, err := s.LoadOwnOf(certType)
	if err != nil {
		return nil, err
	}
	own, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if regenerate {
		switch k := key.(type) {
		case *ecdsa.PrivateKey:
			key, err = ecdsa.GenerateKey(k.Curve, rand.Reader)
		case ed25519.PrivateKey:
			_, key, err = ed25519.GenerateKey(rand.Reader)
		default:
			key, err = rsa.GenerateKey(rand.Reader, 2048)
		}
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if s.pending == nil {
			s.pending = map[string]crypto.Signer{}
		}
		s.pending[certType] = key
		s.mu.Unlock()
	}
	name := own.Subject
	if subject != nil {
		name = *subject
	}
	return x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     name,
		DNSNames:    own.DNSNames,
		IPAddresses: own.IPAddresses,
		URIs:        own.URIs,
	}, key)
}

// UpdateCertificate makes der the application's certificate of a
// certificate type: with
// keyPEM (a PKCS#8 or PKCS#1 PEM key) when given, else the key of the
// last SigningRequest that regenerated one, else the current key. The
// certificate must belong to that key and carry uri in its
// subjectAltName; issuers go to issuers/certs.
func (s *Store) UpdateCertificate(certType string, der []byte, issuers [][]byte, keyPEM []byte, uri string) error {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("pki: not a certificate: %w", err)
	}
	if ApplicationURI(c) != uri {
		return fmt.Errorf("pki: the certificate names %q, not the ApplicationUri %q", ApplicationURI(c), uri)
	}
	for _, b := range issuers {
		if err := checkEntry(b, true); err != nil {
			return err
		}
	}
	var key crypto.Signer
	switch {
	case len(keyPEM) > 0:
		if key, err = parseKeyPEM(keyPEM); err != nil {
			return err
		}
	default:
		s.mu.Lock()
		key = s.pending[certType]
		s.mu.Unlock()
		if key == nil || !publicEqual(key, c.PublicKey) {
			if _, key, err = s.LoadOwnOf(certType); err != nil {
				return err
			}
		}
	}
	if !publicEqual(key, c.PublicKey) {
		return errors.New("pki: the certificate does not belong to the key")
	}
	if _, isRSA := key.(*rsa.PrivateKey); isRSA != (certType == CertTypeRSA || certType == "") {
		return fmt.Errorf("pki: the key is not one of the certificate type %s", certType)
	}
	for _, b := range issuers {
		if err := s.writeEntry(IssuerCerts, b, true); err != nil {
			return err
		}
	}
	if err := s.SaveOwnOf(certType, der, key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.pending, certType)
	s.mu.Unlock()
	return nil
}

func publicEqual(key crypto.Signer, pub any) bool {
	k, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(pub)
}

// parseKeyPEM parses a PKCS#8 (RSA, ECDSA or Ed25519), PKCS#1 or SEC 1
// PEM key.
func parseKeyPEM(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("pki: the private key is not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(blk.Bytes); err == nil {
		switch k := k.(type) {
		case *rsa.PrivateKey:
			return k, nil
		case *ecdsa.PrivateKey:
			return k, nil
		case ed25519.PrivateKey:
			return k, nil
		}
		return nil, errors.New("pki: not an RSA, ECDSA or Ed25519 key")
	}
	if k, err := x509.ParseECPrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	return x509.ParsePKCS1PrivateKey(blk.Bytes)
}
