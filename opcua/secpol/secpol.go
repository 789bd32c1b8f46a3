// Package secpol holds the algorithms of the OPC UA security policies edged
// offers (OPC 10000-7): Basic256Sha256, Aes128_Sha256_RsaOaep and
// Aes256_Sha256_RsaPss. It knows keys and bytes, not chunks: the secure
// channel (uasc) frames with them, the server signs and decrypts session
// data with them. Only the standard library's crypto is used.
package secpol

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"hash"
)

// The policies' URIs.
const (
	URIBasic256Sha256      = "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256"
	URIAes128Sha256RsaOaep = "http://opcfoundation.org/UA/SecurityPolicy#Aes128_Sha256_RsaOaep"
	URIAes256Sha256RsaPss  = "http://opcfoundation.org/UA/SecurityPolicy#Aes256_Sha256_RsaPss"
)

// The algorithm URIs a policy names in SignatureData and in encrypted
// identity tokens (OPC 10000-7).
const (
	AlgRsaSha256       = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
	AlgRsaPssSha256    = "http://opcfoundation.org/UA/security/rsa-pss-sha2-256"
	AlgRsaOaep         = "http://www.w3.org/2001/04/xmlenc#rsa-oaep"
	AlgRsaOaepSha256   = "http://opcfoundation.org/UA/security/rsa-oaep-sha2-256"
	NonceLength        = 32   // SecureChannelNonceLength of the three policies
	MinKeyBits         = 2048 // the policies' AsymmetricKeyLength range
	MaxKeyBits         = 4096
	SigningKeyLength   = 32 // HMAC-SHA256 keys
	SymmetricBlockSize = 16 // AES
	SymmetricSigLength = sha256.Size
)

// ErrSecurityChecks is the one error of every failure to verify, decrypt
// or unpad: callers answer it with Bad_SecurityChecksFailed and learn no
// more, so that no failure tells an attacker which check failed.
var ErrSecurityChecks = errors.New("secpol: security checks failed")

// Policy is one security policy's set of algorithms.
type Policy struct {
	uri, name string
	encKeyLen int         // AES key length
	oaep      crypto.Hash // the OAEP hash of asymmetric encryption
	pss       bool        // asymmetric signatures are RSA-PSS (else PKCS#1 v1.5)
}

var (
	// Basic256Sha256: RSA PKCS#1 v1.5 SHA-256 signatures, RSA-OAEP
	// (SHA-1) encryption, AES-256-CBC, HMAC-SHA256.
	Basic256Sha256 = &Policy{uri: URIBasic256Sha256, name: "Basic256Sha256", encKeyLen: 32, oaep: crypto.SHA1}
	// Aes128Sha256RsaOaep: as Basic256Sha256 with AES-128-CBC.
	Aes128Sha256RsaOaep = &Policy{uri: URIAes128Sha256RsaOaep, name: "Aes128_Sha256_RsaOaep", encKeyLen: 16, oaep: crypto.SHA1}
	// Aes256Sha256RsaPss: RSA-PSS SHA-256 signatures, RSA-OAEP SHA-256
	// encryption, AES-256-CBC, HMAC-SHA256.
	Aes256Sha256RsaPss = &Policy{uri: URIAes256Sha256RsaPss, name: "Aes256_Sha256_RsaPss", encKeyLen: 32, oaep: crypto.SHA256, pss: true}
)

// All lists the policies, strongest last.
var All = []*Policy{Aes128Sha256RsaOaep, Basic256Sha256, Aes256Sha256RsaPss}

// ByURI returns the policy with uri, or nil.
func ByURI(uri string) *Policy {
	for _, p := range All {
		if p.uri == uri {
			return p
		}
	}
	return nil
}

// URI returns the policy's URI.
func (p *Policy) URI() string { return p.uri }

// Name returns the policy's short name, e.g. "Basic256Sha256".
func (p *Policy) Name() string { return p.name }

// EncryptionKeyLength is the length of the derived AES keys.
func (p *Policy) EncryptionKeyLength() int { return p.encKeyLen }

// SignatureAlgorithm is the URI of the asymmetric signature algorithm.
func (p *Policy) SignatureAlgorithm() string {
	if p.pss {
		return AlgRsaPssSha256
	}
	return AlgRsaSha256
}

// EncryptionAlgorithm is the URI of the asymmetric encryption algorithm.
func (p *Policy) EncryptionAlgorithm() string {
	if p.oaep == crypto.SHA256 {
		return AlgRsaOaepSha256
	}
	return AlgRsaOaep
}

func (p *Policy) oaepHash() hash.Hash {
	if p.oaep == crypto.SHA256 {
		return sha256.New()
	}
	return sha1.New()
}

// CheckKey reports whether pub is an RSA key the policy accepts: 2048 to
// 4096 bits.
func (p *Policy) CheckKey(pub any) (*rsa.PublicKey, bool) {
	k, ok := pub.(*rsa.PublicKey)
	if !ok || k.N.BitLen() < MinKeyBits || k.N.BitLen() > MaxKeyBits {
		return nil, false
	}
	return k, true
}

// Sign signs data with priv by the policy's asymmetric signature.
func (p *Policy) Sign(priv *rsa.PrivateKey, data []byte) ([]byte, error) {
	d := sha256.Sum256(data)
	if p.pss {
		return rsa.SignPSS(rand.Reader, priv, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	}
	return rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, d[:])
}

// Verify checks an asymmetric signature; a failure is ErrSecurityChecks.
func (p *Policy) Verify(pub *rsa.PublicKey, data, sig []byte) error {
	d := sha256.Sum256(data)
	var err error
	if p.pss {
		err = rsa.VerifyPSS(pub, crypto.SHA256, d[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto})
	} else {
		err = rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig)
	}
	if err != nil {
		return ErrSecurityChecks
	}
	return nil
}

// PlainBlockSize is how many plaintext bytes one RSA-OAEP block under pub
// holds: the key size minus twice the hash size minus 2.
func (p *Policy) PlainBlockSize(pub *rsa.PublicKey) int {
	return pub.Size() - 2*p.oaep.Size() - 2
}

// Encrypt appends the RSA-OAEP encryption of plain, block by block, to dst.
func (p *Policy) Encrypt(dst []byte, pub *rsa.PublicKey, plain []byte) ([]byte, error) {
	pb := p.PlainBlockSize(pub)
	h := p.oaepHash()
	for len(plain) > 0 {
		n := min(pb, len(plain))
		c, err := rsa.EncryptOAEP(h, rand.Reader, pub, plain[:n], nil)
		if err != nil {
			return dst, err
		}
		dst = append(dst, c...)
		plain = plain[n:]
	}
	return dst, nil
}

// Decrypt decrypts b (whole RSA blocks of priv's size) in place and
// returns the plaintext, a prefix of b. Every failure is ErrSecurityChecks.
func (p *Policy) Decrypt(priv *rsa.PrivateKey, b []byte) ([]byte, error) {
	cb := priv.Size()
	if len(b) == 0 || len(b)%cb != 0 {
		return nil, ErrSecurityChecks
	}
	h := p.oaepHash()
	n := 0
	failed := false
	for i := 0; i < len(b); i += cb {
		m, err := rsa.DecryptOAEP(h, nil, priv, b[i:i+cb], nil)
		if err != nil {
			// Go on with the other blocks: the time taken does not
			// tell which block failed.
			failed = true
			continue
		}
		n += copy(b[n:], m)
	}
	if failed {
		return nil, ErrSecurityChecks
	}
	return b[:n], nil
}

// Thumbprint is the SHA-1 of a certificate's DER encoding, as
// OPC 10000-6 uses it to name a certificate.
func Thumbprint(der []byte) []byte {
	s := sha1.Sum(der)
	return s[:]
}

// LeafCertificate returns the first certificate of a chain of DER
// certificates concatenated, as SenderCertificate and ClientCertificate
// carry them, and the rest of the chain.
func LeafCertificate(chain []byte) (*x509.Certificate, []*x509.Certificate, error) {
	certs, err := x509.ParseCertificates(chain)
	if err != nil {
		return nil, nil, err
	}
	if len(certs) == 0 {
		return nil, nil, errors.New("no certificate")
	}
	return certs[0], certs[1:], nil
}
