package pki

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/edged/edged/internal/atomicfile"
)

// Placed is one certificate or CRL that Import put into the store, and
// what the technician should know of it.
type Placed struct {
	Dir  string // the folder it went to (TrustedCerts, IssuerCerts, TrustedCRL, IssuerCRL)
	Cert *x509.Certificate
	CRL  *x509.RevocationList
	Note string // a check that will fail at the handshake until something else is added; may be empty
}

// Import puts what a certificate file holds into the store, as
// `edged pki trust FILE` does:
//
//   - one certificate is trusted (a CA's too: then every certificate it
//     issued is trusted);
//   - of several (a chain), the end-entity certificates are trusted and the
//     CA certificates go to issuers/; a chain of CA certificates only has
//     its first trusted and the others as issuers;
//   - each CRL goes to the crl folder of the list that holds the CA that
//     signed it (trusted/crl or issuers/crl), the file's own CAs included;
//     a CRL of no CA the store knows is an error.
//
// Everything is checked before anything is written: on error the store is
// as it was.
func (s *Store) Import(c Contents) ([]Placed, error) {
	if len(c.Certs) == 0 && len(c.CRLs) == 0 {
		return nil, errors.New("no certificate or CRL")
	}
	var out []Placed
	var trusted, issuers []*x509.Certificate
	ends := slices.IndexFunc(c.Certs, func(x *x509.Certificate) bool { return !x.IsCA }) >= 0
	for i, x := range c.Certs {
		if len(c.Certs) == 1 || (ends && !x.IsCA) || (!ends && i == 0) {
			trusted = append(trusted, x)
			out = append(out, Placed{Dir: TrustedCerts, Cert: x})
		} else {
			issuers = append(issuers, x)
			out = append(out, Placed{Dir: IssuerCerts, Cert: x})
		}
	}
	l := s.current()
	allTrusted := slices.Concat(l.trusted, trusted)
	allIssuers := slices.Concat(l.issuers, issuers)
	for _, crl := range c.CRLs {
		dir := ""
		switch {
		case signedByAny(crl, allTrusted):
			dir = TrustedCRL
		case signedByAny(crl, allIssuers):
			dir = IssuerCRL
		default:
			return nil, fmt.Errorf("the CRL of %s is signed by no CA certificate in %s or %s (nor in the file): add its CA first", crl.Issuer, TrustedCerts, IssuerCerts)
		}
		out = append(out, Placed{Dir: dir, CRL: crl})
	}
	crls := slices.Concat(l.crls, c.CRLs)
	for i := range out {
		if out[i].Cert != nil && out[i].Dir == TrustedCerts {
			out[i].Note = caNote(out[i].Cert, crls)
		}
	}
	for _, p := range out {
		var err error
		if p.Cert != nil {
			err = s.writeEntry(p.Dir, p.Cert.Raw, true)
		} else {
			err = s.writeEntry(p.Dir, p.CRL.Raw, false)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func signedByAny(crl *x509.RevocationList, cas []*x509.Certificate) bool {
	return slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return crl.CheckSignatureFrom(ca) == nil })
}

// caNote says what a trusted CA certificate still lacks for Verify to
// accept the certificates it issued: its CRL. A trusted end-entity
// certificate needs nothing more (Verify accepts it as it is).
func caNote(c *x509.Certificate, crls []*x509.RevocationList) string {
	if !c.IsCA || slices.ContainsFunc(crls, func(l *x509.RevocationList) bool { return l.CheckSignatureFrom(c) == nil }) {
		return ""
	}
	return fmt.Sprintf("it is a CA without a CRL in %s or %s: the certificates it issued are refused with Bad_CertificateRevocationUnknown until its CRL is added (edged pki trust CRLFILE)", TrustedCRL, IssuerCRL)
}

// Remove removes the certificate from its file: the file, or, when the
// file holds other certificates too (a PEM chain put there by hand), the
// certificate from it.
func (f CertFile) Remove() error {
	held, err := ReadCertFile(f.Path)
	if err != nil || len(held.Certs) <= 1 {
		return os.Remove(f.Path)
	}
	var b []byte
	for _, x := range held.Certs {
		if !x.Equal(f.Cert) {
			b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: x.Raw})...)
		}
	}
	return atomicfile.WriteFile(f.Path, b, 0o644)
}
