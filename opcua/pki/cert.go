package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/url"
	"time"
)

// Template says what an application instance certificate holds.
type Template struct {
	// ApplicationURI goes into the subjectAltName as a URI; OPC 10000-4
	// §6.1.3 wants it to equal the ApplicationUri the application
	// announces.
	ApplicationURI string
	// CommonName and Organization make the subject.
	CommonName   string
	Organization string
	// DNSNames and IPs go into the subjectAltName too.
	DNSNames []string
	IPs      []net.IP
	// Bits of the RSA key (default 2048).
	Bits int
	// NotBefore and Validity (defaults: an hour ago, 10 years).
	NotBefore time.Time
	Validity  time.Duration
	// Issuer and IssuerKey sign the certificate; nil: self-signed.
	Issuer    *x509.Certificate
	IssuerKey *rsa.PrivateKey
	// CA makes a certificate authority's certificate (for tests and for
	// a site's own issuer).
	CA bool
	// Key, when set, is used instead of a new one; ECKey for
	// NewECCertificate.
	Key   *rsa.PrivateKey
	ECKey crypto.Signer
}

// NewCertificate makes a key and a certificate for it as t says: SHA-256
// with RSA, the key usages OPC UA application certificates need (digital
// signature, non-repudiation, key and data encipherment, certificate
// signing when self-signed) and both server and client authentication.
func NewCertificate(t Template) (der []byte, key *rsa.PrivateKey, err error) {
	if t.Bits == 0 {
		t.Bits = 2048
	}
	key = t.Key
	if key == nil {
		if key, err = rsa.GenerateKey(rand.Reader, t.Bits); err != nil {
			return nil, nil, err
		}
	}
	der, err = newCertificate(t, key, x509.SHA256WithRSA,
		x509.KeyUsageDigitalSignature|x509.KeyUsageContentCommitment|x509.KeyUsageKeyEncipherment|x509.KeyUsageDataEncipherment)
	return der, key, err
}

// NewECCertificate makes an ECDSA key on curve, or an Ed25519 key when
// curve is nil (t.ECKey when set), and a self-signed certificate for it
// as t says: the application certificate of an ECC certificate type (OPC
// 10000-12 §7.8.4), ECDSA with SHA-256 (P-256) or SHA-384 (P-384), or
// Ed25519; the key usages digital signature and non-repudiation. t.Bits,
// t.Key and t.Issuer do not apply.
func NewECCertificate(t Template, curve elliptic.Curve) (der []byte, key crypto.Signer, err error) {
	key = t.ECKey
	if key == nil {
		if curve == nil {
			_, key, err = ed25519.GenerateKey(rand.Reader)
		} else {
			key, err = ecdsa.GenerateKey(curve, rand.Reader)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	alg := x509.PureEd25519
	if k, ok := key.(*ecdsa.PrivateKey); ok {
		alg = x509.ECDSAWithSHA256
		if k.Curve.Params().BitSize > 256 {
			alg = x509.ECDSAWithSHA384
		}
	}
	t.Issuer, t.IssuerKey, t.CA = nil, nil, false
	der, err = newCertificate(t, key, alg, x509.KeyUsageDigitalSignature|x509.KeyUsageContentCommitment)
	return der, key, err
}

// newCertificate makes the certificate of key as t says.
func newCertificate(t Template, key crypto.Signer, alg x509.SignatureAlgorithm, usage x509.KeyUsage) (der []byte, err error) {
	if t.NotBefore.IsZero() {
		t.NotBefore = time.Now().Add(-time.Hour)
	}
	if t.Validity == 0 {
		t.Validity = 10 * 365 * 24 * time.Hour
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	ski := sha1.Sum(pubDER)
	c := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: t.CommonName},
		NotBefore:             t.NotBefore,
		NotAfter:              t.NotBefore.Add(t.Validity),
		KeyUsage:              usage,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  t.CA,
		DNSNames:              t.DNSNames,
		IPAddresses:           t.IPs,
		SubjectKeyId:          ski[:],
		SignatureAlgorithm:    alg,
	}
	if t.Organization != "" {
		c.Subject.Organization = []string{t.Organization}
	}
	if t.ApplicationURI != "" {
		u, err := url.Parse(t.ApplicationURI)
		if err != nil {
			return nil, err
		}
		c.URIs = []*url.URL{u}
	}
	parent, signer := c, key
	if t.Issuer != nil {
		if t.IssuerKey == nil {
			return nil, errors.New("pki: an issuer without its key")
		}
		parent, signer = t.Issuer, t.IssuerKey
	}
	if t.CA || t.Issuer == nil {
		// A self-signed application certificate signs itself: OPC UA
		// wants keyCertSign then.
		c.KeyUsage |= x509.KeyUsageCertSign
	}
	if t.CA {
		c.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
		c.ExtKeyUsage = nil
	}
	return x509.CreateCertificate(rand.Reader, c, parent, key.Public(), signer)
}
