package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/internal/atomicfile"
)

// The folders of a Store, under its root.
const (
	OwnCerts     = "own/certs"
	OwnPrivate   = "own/private"
	TrustedCerts = "trusted/certs"
	TrustedCRL   = "trusted/crl"
	IssuerCerts  = "issuers/certs"
	IssuerCRL    = "issuers/crl"
	RejectedDir  = "rejected/certs"

	ownCertFile = "edged.der"
	ownKeyFile  = "edged.pem"

	// MaxRejected bounds the rejected folder: beyond it the oldest
	// files go.
	MaxRejected = 128
	// maxFileSize bounds a certificate or CRL file read from the folders.
	maxFileSize = 1 << 20
)

// Store is the PKI folder of one application. Its trust lists are read
// from disk when they changed since the last look, so that a certificate
// put into trusted/certs (by `edged pki trust` or by hand) counts at the
// next handshake. Safe for concurrent use.
type Store struct {
	root string

	mu       sync.Mutex
	lists    *lists
	onReject func(c *x509.Certificate, file string, why error)
	// onProblem is told of each file of the trust folders that cannot be
	// read, once, when the folders are read again.
	onProblem func(string)
	pending   map[string]crypto.Signer // by certificate type: the key of the last regenerating SigningRequest

	// The rejections of the current minute (see reject); rejectLimit
	// raises the limit (tests), -1 lifts it.
	rejWindow   time.Time
	rejCount    int
	rejDropped  int
	rejectLimit int
	onDropped   func(n int)
	stamp       string // of the folders the lists were read from
}

// lists are the trust lists as read from disk.
type lists struct {
	trusted, issuers []*x509.Certificate
	crls             []*x509.RevocationList
	errs             []string // files that could not be read
}

// Open opens the store at root, making its folders (0700) if missing.
func Open(root string) (*Store, error) {
	for _, d := range []string{OwnCerts, OwnPrivate, TrustedCerts, TrustedCRL, IssuerCerts, IssuerCRL, RejectedDir} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return nil, err
		}
	}
	return &Store{root: root}, nil
}

// OpenTrustList opens a store that is only a trust list (trusted/,
// issuers/, rejected/; no own certificate): the user certificates of X.509
// user tokens.
func OpenTrustList(root string) (*Store, error) {
	for _, d := range []string{TrustedCerts, TrustedCRL, IssuerCerts, IssuerCRL, RejectedDir} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return nil, err
		}
	}
	return &Store{root: root}, nil
}

// Root is the store's folder.
func (s *Store) Root() string { return s.root }

// Path returns the path of a folder of the store.
func (s *Store) Path(dir string) string { return filepath.Join(s.root, dir) }

// OwnCertPath is the file of the application's certificate (DER).
func (s *Store) OwnCertPath() string { return filepath.Join(s.root, OwnCerts, ownCertFile) }

// CertTypeRSA names the RSA application certificate type among the
// certificate types ("nistP256", "nistP384" for ECC).
const CertTypeRSA = "rsa"

// ownFiles returns the certificate and key file names of a certificate
// type: edged.der and edged.pem for RSA, edged-<type>.der/.pem for the
// others.
func ownFiles(certType string) (cert, key string) {
	if certType == "" || certType == CertTypeRSA {
		return ownCertFile, ownKeyFile
	}
	return "edged-" + certType + ".der", "edged-" + certType + ".pem"
}

// OwnCertPathOf is the file of the application's certificate of a
// certificate type.
func (s *Store) OwnCertPathOf(certType string) string {
	c, _ := ownFiles(certType)
	return filepath.Join(s.root, OwnCerts, c)
}

// LoadOwn reads the application's certificate and key. fs.ErrNotExist
// means there are none yet.
func (s *Store) LoadOwn() ([]byte, *rsa.PrivateKey, error) {
	der, k, err := s.LoadOwnOf(CertTypeRSA)
	if err != nil {
		return nil, nil, err
	}
	key, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("pki: %s: not an RSA key", filepath.Join(OwnPrivate, ownKeyFile))
	}
	return der, key, nil
}

// LoadOwnEC reads the application's certificate and key of an ECC
// certificate type (an ECDSA or Ed25519 key). fs.ErrNotExist means there
// are none yet.
func (s *Store) LoadOwnEC(certType string) ([]byte, crypto.Signer, error) {
	der, k, err := s.LoadOwnOf(certType)
	if err != nil {
		return nil, nil, err
	}
	switch k.(type) {
	case *ecdsa.PrivateKey, ed25519.PrivateKey:
		return der, k, nil
	}
	_, kf := ownFiles(certType)
	return nil, nil, fmt.Errorf("pki: %s: not an ECDSA or Ed25519 key", filepath.Join(OwnPrivate, kf))
}

// LoadOwnOf reads the application's certificate and key of a certificate
// type.
func (s *Store) LoadOwnOf(certType string) ([]byte, crypto.Signer, error) {
	cf, kf := ownFiles(certType)
	cp := filepath.Join(s.root, OwnCerts, cf)
	if _, err := os.Stat(cp); err != nil {
		return nil, nil, err
	}
	own, err := ReadCertFile(cp) // DER as edged writes it, or PEM put there by hand
	if err != nil {
		return nil, nil, fmt.Errorf("pki: %w", err)
	}
	if len(own.Certs) == 0 {
		return nil, nil, fmt.Errorf("pki: %s: no certificate", cp)
	}
	der := own.Certs[0].Raw
	kp, err := os.ReadFile(filepath.Join(s.root, OwnPrivate, kf))
	if err != nil {
		return nil, nil, err
	}
	blk, _ := pem.Decode(kp)
	if blk == nil {
		return nil, nil, fmt.Errorf("pki: %s: no PEM block", filepath.Join(OwnPrivate, kf))
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: %s: %w", filepath.Join(OwnPrivate, kf), err)
	}
	key, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("pki: %s: not a signing key", filepath.Join(OwnPrivate, kf))
	}
	return der, key, nil
}

// SaveOwn writes the application's certificate and key, the key 0600;
// each file is replaced atomically, the key first.
func (s *Store) SaveOwn(der []byte, key *rsa.PrivateKey) error {
	return s.SaveOwnOf(CertTypeRSA, der, key)
}

// SaveOwnOf is SaveOwn for a certificate type.
func (s *Store) SaveOwnOf(certType string, der []byte, key crypto.Signer) error {
	cf, kf := ownFiles(certType)
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(s.root, OwnPrivate, kf), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(s.root, OwnCerts, cf), der, 0o644)
}

// EnsureOwn loads the application's certificate and key, or makes them
// from t when there are none (created reports that).
func (s *Store) EnsureOwn(t Template) (der []byte, key *rsa.PrivateKey, created bool, err error) {
	der, key, err = s.LoadOwn()
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return der, key, false, err
	}
	der, key, err = NewCertificate(t)
	if err != nil {
		return nil, nil, false, err
	}
	if err := s.SaveOwn(der, key); err != nil {
		return nil, nil, false, err
	}
	return der, key, true, nil
}

// EnsureOwnEC is EnsureOwn for an ECC certificate type on curve (nil:
// Ed25519).
func (s *Store) EnsureOwnEC(certType string, curve elliptic.Curve, t Template) (der []byte, key crypto.Signer, created bool, err error) {
	der, key, err = s.LoadOwnEC(certType)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return der, key, false, err
	}
	der, key, err = NewECCertificate(t, curve)
	if err != nil {
		return nil, nil, false, err
	}
	if err := s.SaveOwnOf(certType, der, key); err != nil {
		return nil, nil, false, err
	}
	return der, key, true, nil
}

// CheckOwn compares the application's certificate with what it serves:
// the ApplicationUri, the host names and addresses of its endpoint URLs,
// the validity period. It returns one sentence per problem.
func CheckOwn(der []byte, uri string, hosts []string, now time.Time) []string {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return []string{"the certificate cannot be parsed: " + err.Error()}
	}
	var probs []string
	if !slices.ContainsFunc(c.URIs, func(u *url.URL) bool { return u.String() == uri }) {
		probs = append(probs, fmt.Sprintf("its subjectAltName URI is %s, not the ApplicationUri %s", uriList(c), uri))
	}
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			probs = append(probs, fmt.Sprintf("it does not name the host %q", h))
		}
	}
	switch {
	case now.Before(c.NotBefore):
		probs = append(probs, "it is not valid before "+c.NotBefore.UTC().Format(time.RFC3339))
	case now.After(c.NotAfter):
		probs = append(probs, "it expired on "+c.NotAfter.UTC().Format(time.RFC3339))
	case c.NotAfter.Sub(now) < 30*24*time.Hour:
		probs = append(probs, "it expires on "+c.NotAfter.UTC().Format(time.RFC3339))
	}
	return probs
}

func uriList(c *x509.Certificate) string {
	if len(c.URIs) == 0 {
		return "missing"
	}
	var s []string
	for _, u := range c.URIs {
		s = append(s, u.String())
	}
	return strings.Join(s, ", ")
}

// ApplicationURI is the first URI of a certificate's subjectAltName.
func ApplicationURI(c *x509.Certificate) string {
	if len(c.URIs) == 0 {
		return ""
	}
	return c.URIs[0].String()
}

// ThumbprintHex is a certificate's SHA-1 thumbprint in upper-case hex, as
// OPC UA tools show it.
func ThumbprintHex(der []byte) string {
	return strings.ToUpper(hex.EncodeToString(thumbprint(der)))
}

func thumbprint(der []byte) []byte {
	s := sha1.Sum(der)
	return s[:]
}

// current returns the trust lists, read again when a folder changed. A
// file that could not be read, and was not at the last reading, is told
// to the OnProblem hook.
func (s *Store) current() *lists {
	stamp := s.stampOf()
	s.mu.Lock()
	if s.lists != nil && stamp == s.stamp {
		defer s.mu.Unlock()
		return s.lists
	}
	l := &lists{}
	l.trusted = s.readCerts(TrustedCerts, &l.errs)
	l.issuers = s.readCerts(IssuerCerts, &l.errs)
	l.crls = append(s.readCRLs(TrustedCRL, &l.errs), s.readCRLs(IssuerCRL, &l.errs)...)
	var news []string
	for _, e := range l.errs {
		if s.lists == nil || !slices.Contains(s.lists.errs, e) {
			news = append(news, e)
		}
	}
	s.lists, s.stamp = l, stamp
	f := s.onProblem
	s.mu.Unlock()
	if f != nil {
		for _, e := range news {
			f(e)
		}
	}
	return l
}

// stampOf sums up the names, sizes and times of the trust folders' files.
func (s *Store) stampOf() string {
	var b strings.Builder
	for _, d := range []string{TrustedCerts, IssuerCerts, TrustedCRL, IssuerCRL} {
		ents, _ := os.ReadDir(filepath.Join(s.root, d))
		b.WriteString(d)
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "|%s:%d:%d", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// files returns the regular files of a folder, sorted by name.
func (s *Store) files(dir string) []string {
	ents, err := os.ReadDir(filepath.Join(s.root, dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(s.root, dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// readCerts returns the certificates of a folder's files; a file that
// cannot be read, or holds anything but certificates, adds to errs and
// gives nothing.
func (s *Store) readCerts(dir string, errs *[]string) []*x509.Certificate {
	var out []*x509.Certificate
	for _, p := range s.files(dir) {
		c, err := ReadCertFile(p)
		if err == nil && len(c.CRLs) > 0 {
			err = fmt.Errorf("%s: holds a CRL; CRLs go to %s or %s", p, TrustedCRL, IssuerCRL)
		}
		if err != nil {
			*errs = append(*errs, err.Error())
			continue
		}
		out = append(out, c.Certs...)
	}
	return out
}

// readCRLs returns the CRLs of a folder's files, as readCerts does.
func (s *Store) readCRLs(dir string, errs *[]string) []*x509.RevocationList {
	var out []*x509.RevocationList
	for _, p := range s.files(dir) {
		c, err := ReadCertFile(p)
		if err == nil && len(c.Certs) > 0 {
			err = fmt.Errorf("%s: holds a certificate; certificates go to %s or %s", p, TrustedCerts, IssuerCerts)
		}
		if err != nil {
			*errs = append(*errs, err.Error())
			continue
		}
		out = append(out, c.CRLs...)
	}
	return out
}

// Problems lists the files of the trust folders that could not be read.
func (s *Store) Problems() []string { return slices.Clone(s.current().errs) }
