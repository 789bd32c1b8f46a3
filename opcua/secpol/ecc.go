package secpol

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"
	"math/big"
)

// The ECC policies' URIs.
const (
	URIEccNistP256 = "http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP256"
	URIEccNistP384 = "http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP384"
)

// The ECDSA signature algorithms' URIs, as SignatureData names them.
const (
	AlgEcdsaSha256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
	AlgEcdsaSha384 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384"
)

// ECC is one of the ECC security policies (OPC 10000-7, OPC 10000-6 §6.8):
// an ECDSA application certificate on the policy's curve signs the
// OpenSecureChannel messages, which are not encrypted; each side puts an
// ephemeral ECDH public key in its nonce, and the symmetric keys of a
// token come from the shared secret by HKDF. Messages are then secured
// as with the RSA policies: HMAC and AES-CBC.
type ECC struct {
	uri, name string
	curve     elliptic.Curve // of the certificate and the ECDSA signatures
	dh        ecdh.Curve     // of the ephemeral keys
	hash      crypto.Hash    // of ECDSA, HMAC and HKDF
	newHash   func() hash.Hash
	encKeyLen int    // AES key length
	sigAlg    string // SignatureData's algorithm URI
	certType  string // the certificate type's short name (pki)
}

var (
	// EccNistP256: P-256, ECDSA-SHA256, HKDF-SHA256, HMAC-SHA256,
	// AES-128-CBC.
	EccNistP256 = &ECC{uri: URIEccNistP256, name: "ECC_nistP256", curve: elliptic.P256(), dh: ecdh.P256(),
		hash: crypto.SHA256, newHash: sha256.New, encKeyLen: 16, sigAlg: AlgEcdsaSha256, certType: "nistP256"}
	// EccNistP384: P-384, ECDSA-SHA384, HKDF-SHA384, HMAC-SHA384,
	// AES-256-CBC.
	EccNistP384 = &ECC{uri: URIEccNistP384, name: "ECC_nistP384", curve: elliptic.P384(), dh: ecdh.P384(),
		hash: crypto.SHA384, newHash: sha512.New384, encKeyLen: 32, sigAlg: AlgEcdsaSha384, certType: "nistP384"}
)

// AllECC lists the ECC policies.
var AllECC = []*ECC{EccNistP256, EccNistP384}

// ECCByURI returns the ECC policy with uri, or nil.
func ECCByURI(uri string) *ECC {
	for _, p := range AllECC {
		if p.uri == uri {
			return p
		}
	}
	return nil
}

// URI returns the policy's URI.
func (p *ECC) URI() string { return p.uri }

// Name returns the policy's short name, e.g. "ECC_nistP256".
func (p *ECC) Name() string { return p.name }

// Curve is the curve of the policy's certificates.
func (p *ECC) Curve() elliptic.Curve { return p.curve }

// CertificateType is the short name of the policy's certificate type:
// "nistP256" or "nistP384".
func (p *ECC) CertificateType() string { return p.certType }

// SignatureAlgorithm is the URI of the policy's asymmetric signature.
func (p *ECC) SignatureAlgorithm() string { return p.sigAlg }

// coordLen is the size of one coordinate, and of the shared secret.
func (p *ECC) coordLen() int { return (p.curve.Params().BitSize + 7) / 8 }

// NonceLength is the length of a SecureChannel nonce: an uncompressed
// public key without its 0x04 prefix (x and y).
func (p *ECC) NonceLength() int { return 2 * p.coordLen() }

// SignatureSize is the size of an ECDSA signature: r and s, each as long
// as a coordinate, big-endian (not ASN.1).
func (p *ECC) SignatureSize() int { return 2 * p.coordLen() }

// CheckKey reports whether pub is an ECDSA key on the policy's curve.
func (p *ECC) CheckKey(pub any) (*ecdsa.PublicKey, bool) {
	k, ok := pub.(*ecdsa.PublicKey)
	if !ok || k.Curve != p.curve {
		return nil, false
	}
	return k, true
}

func (p *ECC) digest(data []byte) []byte {
	h := p.newHash()
	h.Write(data)
	return h.Sum(nil)
}

// Sign signs data with priv: ECDSA with the policy's hash, r‖s.
func (p *ECC) Sign(priv *ecdsa.PrivateKey, data []byte) ([]byte, error) {
	if priv.Curve != p.curve {
		return nil, ErrSecurityChecks
	}
	r, s, err := ecdsa.Sign(rand.Reader, priv, p.digest(data))
	if err != nil {
		return nil, err
	}
	n := p.coordLen()
	out := make([]byte, 2*n)
	r.FillBytes(out[:n])
	s.FillBytes(out[n:])
	return out, nil
}

// Verify checks an ECDSA signature r‖s; every failure is
// ErrSecurityChecks.
func (p *ECC) Verify(pub *ecdsa.PublicKey, data, sig []byte) error {
	n := p.coordLen()
	if len(sig) != 2*n {
		return ErrSecurityChecks
	}
	r := new(big.Int).SetBytes(sig[:n])
	s := new(big.Int).SetBytes(sig[n:])
	if !ecdsa.Verify(pub, p.digest(data), r, s) {
		return ErrSecurityChecks
	}
	return nil
}

// NewEphemeral makes an ephemeral key pair and returns it with its
// nonce (the public key's x‖y).
func (p *ECC) NewEphemeral() (*ecdh.PrivateKey, []byte, error) {
	k, err := p.dh.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	return k, k.PublicKey().Bytes()[1:], nil
}

// ParseNonce returns the peer's ephemeral public key from its nonce; a
// nonce of the wrong length or not a point of the curve is
// ErrSecurityChecks.
func (p *ECC) ParseNonce(nonce []byte) (*ecdh.PublicKey, error) {
	if len(nonce) != p.NonceLength() {
		return nil, ErrSecurityChecks
	}
	b := make([]byte, 1+len(nonce))
	b[0] = 4
	copy(b[1:], nonce)
	k, err := p.dh.NewPublicKey(b)
	if err != nil {
		return nil, ErrSecurityChecks
	}
	return k, nil
}

// keyLengths are the lengths of a token's signing key, encrypting key and
// IV.
func (p *ECC) keyLengths() (sign, enc, iv int) { return p.hash.Size(), p.encKeyLen, SymmetricBlockSize }

// DeriveKeys derives the keys of a token (OPC 10000-6 §6.8.1): the shared
// secret of our ephemeral key and the peer's nonce is the IKM of HKDF with
// the policy's hash, salt and info both L‖label‖nonces, L the length
// of the keying material (16-bit little endian). For the server, local
// (the keys it sends with) uses the label "opcua-server" and the nonces
// server‖client, remote "opcua-client" and client‖server; a client
// swaps them (server false).
func (p *ECC) DeriveKeys(own *ecdh.PrivateKey, ownNonce, peerNonce []byte, server bool) (local, remote Keys, err error) {
	peer, err := p.ParseNonce(peerNonce)
	if err != nil {
		return Keys{}, Keys{}, err
	}
	secret, err := own.ECDH(peer)
	if err != nil {
		return Keys{}, Keys{}, ErrSecurityChecks
	}
	ownLabel, peerLabel := "opcua-server", "opcua-client"
	if !server {
		ownLabel, peerLabel = peerLabel, ownLabel
	}
	if local, err = p.hkdfKeys(secret, ownLabel, ownNonce, peerNonce); err != nil {
		return Keys{}, Keys{}, err
	}
	if remote, err = p.hkdfKeys(secret, peerLabel, peerNonce, ownNonce); err != nil {
		return Keys{}, Keys{}, err
	}
	return local, remote, nil
}

func (p *ECC) hkdfKeys(secret []byte, label string, first, second []byte) (Keys, error) {
	sl, el, il := p.keyLengths()
	l := sl + el + il
	salt := make([]byte, 2, 2+len(label)+len(first)+len(second))
	binary.LittleEndian.PutUint16(salt, uint16(l))
	salt = append(append(append(salt, label...), first...), second...)
	out, err := hkdf.Key(p.newHash, secret, salt, string(salt), l)
	if err != nil {
		return Keys{}, ErrSecurityChecks
	}
	return Keys{Signing: out[:sl:sl], Encrypting: out[sl : sl+el : sl+el], IV: out[sl+el:]}, nil
}

// NewSymmetric returns the crypto of a token whose keys are local and
// remote: HMAC with the policy's hash, AES-CBC when encrypt.
func (p *ECC) NewSymmetric(local, remote Keys, encrypt bool) (*Symmetric, error) {
	return newSymmetric(p.newHash, local, remote, encrypt)
}
