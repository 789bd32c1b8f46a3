package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/edged/edged/internal/atomicfile"
	"github.com/edged/edged/opcua/ua/status"
)

// Verify validates a peer's application instance certificate and the
// chain it sent with it, as OPC 10000-4 §6.1.3 says, and returns the
// status code of the first check that fails:
//
//   - signature algorithm SHA-256 or stronger with RSA, key of 2048 to
//     4096 bits: Bad_CertificatePolicyCheckFailed;
//   - key usage (digital signature) and extended key usage (client
//     authentication, when the certificate names any):
//     Bad_CertificateUseNotAllowed;
//   - validity period: Bad_CertificateTimeInvalid, of an issuer
//     Bad_CertificateIssuerTimeInvalid;
//   - trust: the certificate itself is in trusted/certs, or its chain,
//     built from what the peer sent and issuers/certs, leads to a
//     certificate in trusted/certs. No chain: Bad_CertificateChainIncomplete
//     (Bad_CertificateUntrusted for a self-signed certificate); a chain
//     without a trusted certificate: Bad_CertificateUntrusted. An empty
//     trust list trusts nobody.
//   - revocation: each issuer of the chain has a CRL in trusted/crl or
//     issuers/crl that it signed (Bad_CertificateRevocationUnknown,
//     Bad_CertificateIssuerRevocationUnknown) and that does not list the
//     certificate (Bad_CertificateRevoked, Bad_CertificateIssuerRevoked).
//
// An untrusted certificate is saved to rejected/certs (at most
// MaxRejected files; the oldest go) and reported to OnReject.
func (s *Store) Verify(leaf *x509.Certificate, chain []*x509.Certificate) error {
	err := s.verify(leaf, chain, time.Now())
	if err == status.BadCertificateUntrusted || err == status.BadCertificateChainIncomplete {
		s.reject(leaf, err)
	}
	return err
}

// SetOnReject sets f to be told of each certificate Verify rejected as
// untrusted, with the file it was saved to.
func (s *Store) SetOnReject(f func(c *x509.Certificate, file string, why error)) {
	s.mu.Lock()
	s.onReject = f
	s.mu.Unlock()
}

var goodSignatures = []x509.SignatureAlgorithm{
	x509.SHA256WithRSA, x509.SHA384WithRSA, x509.SHA512WithRSA,
	x509.SHA256WithRSAPSS, x509.SHA384WithRSAPSS, x509.SHA512WithRSAPSS,
	x509.ECDSAWithSHA256, x509.ECDSAWithSHA384, x509.ECDSAWithSHA512, x509.PureEd25519,
}

// goodKey reports whether a certificate's key is one the policies take:
// RSA of 2048 to 4096 bits, ECDSA on P-256 or P-384, or Ed25519 (which of
// them a channel takes is its policy's check).
func goodKey(pub any) bool {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen() >= 2048 && k.N.BitLen() <= 4096
	case *ecdsa.PublicKey:
		return k.Curve == elliptic.P256() || k.Curve == elliptic.P384()
	case ed25519.PublicKey:
		return len(k) == ed25519.PublicKeySize
	}
	return false
}

func (s *Store) verify(leaf *x509.Certificate, chain []*x509.Certificate, now time.Time) error {
	if !slices.Contains(goodSignatures, leaf.SignatureAlgorithm) {
		return status.BadCertificatePolicyCheckFailed
	}
	if !goodKey(leaf.PublicKey) {
		return status.BadCertificatePolicyCheckFailed
	}
	if leaf.KeyUsage != 0 && leaf.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		return status.BadCertificateUseNotAllowed
	}
	if len(leaf.ExtKeyUsage) > 0 && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageAny) {
		return status.BadCertificateUseNotAllowed
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return status.BadCertificateTimeInvalid
	}
	l := s.current()
	if containsCert(l.trusted, leaf) {
		return nil
	}
	// The chain is built from every certificate at hand, the peer's
	// included; trust is then asked of the chain's certificates.
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range slices.Concat(l.trusted, l.issuers, chain) {
		if c.IsCA && selfSigned(c) {
			roots.AddCert(c)
		} else {
			inter.AddCert(c)
		}
	}
	chains, err := leaf.Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		var inv x509.CertificateInvalidError
		var ua x509.UnknownAuthorityError
		switch {
		case errors.As(err, &inv) && inv.Reason == x509.Expired:
			return status.BadCertificateIssuerTimeInvalid
		case errors.As(err, &inv) && inv.Reason == x509.IncompatibleUsage:
			return status.BadCertificateIssuerUseNotAllowed
		case errors.As(err, &ua):
			if selfSigned(leaf) {
				return status.BadCertificateUntrusted
			}
			return status.BadCertificateChainIncomplete
		}
		return status.BadCertificateInvalid
	}
	first := error(status.BadCertificateUntrusted)
	for _, ch := range chains {
		if !slices.ContainsFunc(ch, func(c *x509.Certificate) bool { return containsCert(l.trusted, c) }) {
			continue
		}
		err := checkRevocation(ch, l.crls, now)
		if err == nil {
			return nil
		}
		first = err
	}
	return first
}

// checkRevocation checks each certificate of chain (leaf first, root
// last) against the CRL of its issuer.
func checkRevocation(chain []*x509.Certificate, crls []*x509.RevocationList, now time.Time) error {
	for i := 0; i+1 < len(chain); i++ {
		c, issuer := chain[i], chain[i+1]
		var crl *x509.RevocationList
		for _, l := range crls {
			if l.CheckSignatureFrom(issuer) == nil {
				crl = l
				break
			}
		}
		if crl == nil {
			if i == 0 {
				return status.BadCertificateRevocationUnknown
			}
			return status.BadCertificateIssuerRevocationUnknown
		}
		for _, r := range crl.RevokedCertificateEntries {
			if r.SerialNumber.Cmp(c.SerialNumber) == 0 {
				if i == 0 {
					return status.BadCertificateRevoked
				}
				return status.BadCertificateIssuerRevoked
			}
		}
	}
	return nil
}

// selfSigned reports whether c is signed by its own key.
func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}

func containsCert(list []*x509.Certificate, c *x509.Certificate) bool {
	return slices.ContainsFunc(list, func(x *x509.Certificate) bool { return x.Equal(c) })
}

// RejectedName is the file name a rejected certificate is saved under:
// its thumbprint.
func RejectedName(der []byte) string { return ThumbprintHex(der) + ".der" }

// reject saves c to the rejected folder and reports it.
func (s *Store) reject(c *x509.Certificate, why error) {
	// A flood of new certificates (anyone can make them) must not wear
	// the gateway's flash or fill its log: beyond MaxRejectionsPerMinute
	// a rejection is neither saved nor reported, only counted, and the
	// count is reported when the minute is over.
	now := time.Now()
	s.mu.Lock()
	var dropped int
	if now.Sub(s.rejWindow) >= time.Minute {
		dropped = s.rejDropped
		s.rejWindow, s.rejCount, s.rejDropped = now, 0, 0
	}
	s.rejCount++
	over := s.rejectLimit >= 0 && s.rejCount > max(s.rejectLimit, MaxRejectionsPerMinute)
	if over {
		s.rejDropped++
	}
	onDropped := s.onDropped
	s.mu.Unlock()
	if dropped > 0 && onDropped != nil {
		onDropped(dropped)
	}
	if over {
		return
	}
	dir := filepath.Join(s.root, RejectedDir)
	file := filepath.Join(dir, RejectedName(c.Raw))
	if _, err := os.Stat(file); err != nil {
		s.pruneRejected(dir)
		atomicfile.WriteFile(file, c.Raw, 0o644)
	} else {
		now := time.Now()
		os.Chtimes(file, now, now) // the newest once more
	}
	s.mu.Lock()
	f := s.onReject
	s.mu.Unlock()
	if f != nil {
		f(c, file, why)
	}
}

// pruneRejected removes the oldest files of the rejected folder until
// there is room for one more.
func (s *Store) pruneRejected(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) < MaxRejected {
		return
	}
	type f struct {
		name string
		t    time.Time
	}
	var fs []f
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			fs = append(fs, f{e.Name(), fi.ModTime()})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].t.Before(fs[j].t) })
	for i := 0; i <= len(fs)-MaxRejected; i++ {
		os.Remove(filepath.Join(dir, fs[i].name))
	}
}

// MaxRejectionsPerMinute bounds the rejections saved and reported per
// minute.
const MaxRejectionsPerMinute = 30

// LogRejections makes OnReject log each rejection on log, with the
// certificate's thumbprint, subject and ApplicationUri and the command
// that trusts it (trustCommand with the thumbprint appended).
func (s *Store) LogRejections(log *slog.Logger, trustCommand string) {
	s.SetOnReject(func(c *x509.Certificate, file string, why error) {
		th := ThumbprintHex(c.Raw)
		log.Warn("client certificate rejected: "+why.Error(),
			"thumbprint", th, "subject", c.Subject.String(), "applicationUri", ApplicationURI(c),
			"saved", file, "to trust it", strings.TrimSpace(trustCommand+" "+th))
	})
	s.mu.Lock()
	s.onProblem = func(p string) { log.Warn("PKI file not read: " + p) }
	s.onDropped = func(n int) {
		log.Warn("client certificates rejected and neither saved nor logged: more than the limit a minute", "count", n, "limit", MaxRejectionsPerMinute)
	}
	s.mu.Unlock()
}

// Describe is one line about a certificate: subject, ApplicationUri,
// validity and thumbprint.
func Describe(c *x509.Certificate) string {
	return fmt.Sprintf("%s  %s  uri=%s  valid %s .. %s", ThumbprintHex(c.Raw), c.Subject.String(), ApplicationURI(c),
		c.NotBefore.UTC().Format("2006-01-02"), c.NotAfter.UTC().Format("2006-01-02"))
}
