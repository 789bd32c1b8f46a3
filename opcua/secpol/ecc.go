package secpol

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"hash"
	"math/big"

	"golang.org/x/crypto/chacha20poly1305"
)

// The ECC policies' URIs.
const (
	URIEccNistP256           = "http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP256"
	URIEccNistP384           = "http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP384"
	URIEccCurve25519         = "http://opcfoundation.org/UA/SecurityPolicy#ECC_curve25519"
	URIEccNistP256AesGcm     = "http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP256_AesGcm"
	URIEccNistP256ChaChaPoly = "http://opcfoundation.org/UA/SecurityPolicy#ECC_nistP256_ChaChaPoly"
)

// The ECDSA and EdDSA signature algorithms' URIs, as SignatureData names them.
const (
	AlgEcdsaSha256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
	AlgEcdsaSha384 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384"
	AlgEd25519     = "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519" // RFC 9231
)

// ECC is one of the ECC security policies (OPC 10000-7, OPC 10000-6 §6.8):
// an ECDSA (EdDSA for curve25519) application certificate of the policy's
// curve signs the OpenSecureChannel messages, which are not encrypted;
// each side puts an ephemeral ECDH public key in its nonce, and the
// symmetric keys of a token come from the shared secret by HKDF. Messages
// are then secured with HMAC and AES-CBC (nistP256, nistP384) or with
// ChaCha20-Poly1305 (curve25519; NewAEAD).
type ECC struct {
	uri, name string
	curve     elliptic.Curve // of the certificate and the ECDSA signatures; nil: Ed25519
	dh        ecdh.Curve     // of the ephemeral keys
	hash      crypto.Hash    // of ECDSA, HMAC and HKDF
	newHash   func() hash.Hash
	encKeyLen int    // AES or ChaCha20 key length
	aead      string // "chacha20poly1305" or "aes-gcm" instead of HMAC and AES-CBC
	signKey   int    // an AEAD policy's signing key length (0: Sign uses the encrypting key)
	enhanced  bool   // SecureChannelEnhancements: IKM chaining, channel-bound signatures
	sigAlg    string // SignatureData's algorithm URI
	certType  string // the certificate type's short name (pki)
	nonceLen  int    // an ephemeral public key's
	sigLen    int    // an asymmetric signature's
}

var (
	// EccNistP256: P-256, ECDSA-SHA256, HKDF-SHA256, HMAC-SHA256,
	// AES-128-CBC.
	EccNistP256 = &ECC{uri: URIEccNistP256, name: "ECC_nistP256", curve: elliptic.P256(), dh: ecdh.P256(),
		hash: crypto.SHA256, newHash: sha256.New, encKeyLen: 16, sigAlg: AlgEcdsaSha256, certType: "nistP256",
		nonceLen: 64, sigLen: 64}
	// EccNistP384: P-384, ECDSA-SHA384, HKDF-SHA384, HMAC-SHA384,
	// AES-256-CBC.
	EccNistP384 = &ECC{uri: URIEccNistP384, name: "ECC_nistP384", curve: elliptic.P384(), dh: ecdh.P384(),
		hash: crypto.SHA384, newHash: sha512.New384, encKeyLen: 32, sigAlg: AlgEcdsaSha384, certType: "nistP384",
		nonceLen: 96, sigLen: 96}
	// EccCurve25519: Ed25519 certificates and signatures, X25519,
	// HKDF-SHA256, ChaCha20-Poly1305.
	EccCurve25519 = &ECC{uri: URIEccCurve25519, name: "ECC_curve25519", dh: ecdh.X25519(),
		hash: crypto.SHA256, newHash: sha256.New, encKeyLen: 32, aead: aeadChaCha, signKey: 32, sigAlg: AlgEd25519,
		certType: "curve25519", nonceLen: 32, sigLen: ed25519.SignatureSize}
	// EccNistP256AesGcm: ECC_nistP256's handshake with AES-128-GCM and
	// the SecureChannelEnhancements.
	EccNistP256AesGcm = &ECC{uri: URIEccNistP256AesGcm, name: "ECC_nistP256_AesGcm", curve: elliptic.P256(), dh: ecdh.P256(),
		hash: crypto.SHA256, newHash: sha256.New, encKeyLen: 16, aead: aeadGCM, enhanced: true, sigAlg: AlgEcdsaSha256,
		certType: "nistP256", nonceLen: 64, sigLen: 64}
	// EccNistP256ChaChaPoly: ECC_nistP256's handshake with
	// ChaCha20-Poly1305 and the SecureChannelEnhancements.
	EccNistP256ChaChaPoly = &ECC{uri: URIEccNistP256ChaChaPoly, name: "ECC_nistP256_ChaChaPoly", curve: elliptic.P256(), dh: ecdh.P256(),
		hash: crypto.SHA256, newHash: sha256.New, encKeyLen: 32, aead: aeadChaCha, enhanced: true, sigAlg: AlgEcdsaSha256,
		certType: "nistP256", nonceLen: 64, sigLen: 64}
)

const (
	aeadChaCha = "chacha20poly1305"
	aeadGCM    = "aes-gcm"
)

// AllECC lists the ECC policies.
var AllECC = []*ECC{EccNistP256, EccNistP384, EccCurve25519, EccNistP256AesGcm, EccNistP256ChaChaPoly}

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

// Curve is the curve of the policy's ECDSA certificates; nil for
// curve25519, whose certificates are Ed25519.
func (p *ECC) Curve() elliptic.Curve { return p.curve }

// AEAD reports whether the policy secures messages with an AEAD cipher
// (NewAEAD) rather than HMAC and AES-CBC (NewSymmetric).
func (p *ECC) AEAD() bool { return p.aead != "" }

// Enhanced reports whether the policy has the SecureChannelEnhancements
// of OPC 10000-6 v1.05.07: IKM chaining on renewal (DeriveKeysChained),
// the first OpenSecureChannel response signed over the request's
// signature too, whose own signature is then the ChannelThumbprint, and
// session signatures bound to it (SessionSignatureData).
func (p *ECC) Enhanced() bool { return p.enhanced }

// HashCertificate is the policy's hash of a certificate (DER), as the
// enhanced session signatures hold them.
func (p *ECC) HashCertificate(der []byte) []byte { return p.digest(der) }

// CertificateType is the short name of the policy's certificate type:
// "nistP256" (also of the _AesGcm and _ChaChaPoly variants), "nistP384"
// or "curve25519".
func (p *ECC) CertificateType() string { return p.certType }

// SignatureAlgorithm is the URI of the policy's asymmetric signature.
func (p *ECC) SignatureAlgorithm() string { return p.sigAlg }

// NonceLength is the length of a SecureChannel nonce: an uncompressed
// public key without its 0x04 prefix (x and y), or an X25519 public key.
func (p *ECC) NonceLength() int { return p.nonceLen }

// SignatureSize is the size of an asymmetric signature: ECDSA's r and s,
// each as long as a coordinate, big-endian (not ASN.1), or Ed25519's.
func (p *ECC) SignatureSize() int { return p.sigLen }

// CheckKey reports whether pub is a key of the policy: ECDSA on its
// curve, or Ed25519.
func (p *ECC) CheckKey(pub any) (crypto.PublicKey, bool) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		return k, p.curve != nil && k.Curve == p.curve
	case ed25519.PublicKey:
		return k, p.curve == nil && len(k) == ed25519.PublicKeySize
	}
	return nil, false
}

// CheckPrivateKey reports whether priv is a private key of the policy.
func (p *ECC) CheckPrivateKey(priv crypto.Signer) bool {
	_, ok := p.CheckKey(priv.Public())
	return ok
}

func (p *ECC) digest(data []byte) []byte {
	h := p.newHash()
	h.Write(data)
	return h.Sum(nil)
}

// Sign signs data with priv: ECDSA with the policy's hash, r‖s; or
// Ed25519. A key not of the policy is ErrSecurityChecks.
func (p *ECC) Sign(priv crypto.Signer, data []byte) ([]byte, error) {
	switch k := priv.(type) {
	case *ecdsa.PrivateKey:
		if p.curve == nil || k.Curve != p.curve {
			return nil, ErrSecurityChecks
		}
		r, s, err := ecdsa.Sign(rand.Reader, k, p.digest(data))
		if err != nil {
			return nil, err
		}
		n := p.sigLen / 2
		out := make([]byte, 2*n)
		r.FillBytes(out[:n])
		s.FillBytes(out[n:])
		return out, nil
	case ed25519.PrivateKey:
		if p.curve != nil {
			return nil, ErrSecurityChecks
		}
		return ed25519.Sign(k, data), nil
	}
	return nil, ErrSecurityChecks
}

// Verify checks a signature of Sign's; every failure is
// ErrSecurityChecks.
func (p *ECC) Verify(pub crypto.PublicKey, data, sig []byte) error {
	if len(sig) != p.sigLen {
		return ErrSecurityChecks
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		n := p.sigLen / 2
		if p.curve == nil || k.Curve != p.curve {
			return ErrSecurityChecks
		}
		r := new(big.Int).SetBytes(sig[:n])
		s := new(big.Int).SetBytes(sig[n:])
		if ecdsa.Verify(k, p.digest(data), r, s) {
			return nil
		}
	case ed25519.PublicKey:
		if p.curve == nil && len(k) == ed25519.PublicKeySize && ed25519.Verify(k, data, sig) {
			return nil
		}
	}
	return ErrSecurityChecks
}

// NewEphemeral makes an ephemeral key pair and returns it with its
// nonce (EphemeralNonce).
func (p *ECC) NewEphemeral() (*ecdh.PrivateKey, []byte, error) {
	k, err := p.dh.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	return k, p.EphemeralNonce(k), nil
}

// EphemeralNonce is the nonce of an ephemeral key: the public key's x‖y
// (NIST curves: its uncompressed form without the 0x04), or the X25519
// public key.
func (p *ECC) EphemeralNonce(k *ecdh.PrivateKey) []byte {
	b := k.PublicKey().Bytes()
	if p.curve != nil {
		return b[1:]
	}
	return b
}

// ParseNonce returns the peer's ephemeral public key from its nonce; a
// nonce of the wrong length or not a point of the curve is
// ErrSecurityChecks.
func (p *ECC) ParseNonce(nonce []byte) (*ecdh.PublicKey, error) {
	if len(nonce) != p.NonceLength() {
		return nil, ErrSecurityChecks
	}
	b := nonce
	if p.curve != nil {
		b = make([]byte, 1+len(nonce))
		b[0] = 4
		copy(b[1:], nonce)
	}
	k, err := p.dh.NewPublicKey(b)
	if err != nil {
		return nil, ErrSecurityChecks
	}
	return k, nil
}

// keyLengths are the lengths of a token's signing key, encrypting key and
// IV (an AES block, or ChaCha20-Poly1305's 12-byte nonce).
func (p *ECC) keyLengths() (sign, enc, iv int) {
	if p.aead != "" {
		return p.signKey, p.encKeyLen, chacha20poly1305.NonceSize
	}
	return p.hash.Size(), p.encKeyLen, SymmetricBlockSize
}

// DeriveKeys derives the keys of a token (OPC 10000-6 §6.8.1): the shared
// secret of our ephemeral key and the peer's nonce is the IKM of HKDF with
// the policy's hash, salt and info both L‖label‖nonces, L the length
// of the keying material (16-bit little endian). For the server, local
// (the keys it sends with) uses the label "opcua-server" and the nonces
// server‖client, remote "opcua-client" and client‖server; a client
// swaps them (server false).
func (p *ECC) DeriveKeys(own *ecdh.PrivateKey, ownNonce, peerNonce []byte, server bool) (local, remote Keys, err error) {
	local, remote, _, err = p.DeriveKeysChained(own, ownNonce, peerNonce, server, nil)
	return local, remote, err
}

// DeriveKeysChained is DeriveKeys with the IKM chaining of the enhanced
// policies (SecureChannelEnhancements, OPC 10000-6 v1.05.07 §6.8.1 step
// 2): the IKM is the shared secret XORed with the previous token's IKM
// (prev; nil or empty on the first OpenSecureChannel, whose IKM is the
// shared secret), and the IKM is returned for the next renewal. Other
// policies ignore prev and return nil.
func (p *ECC) DeriveKeysChained(own *ecdh.PrivateKey, ownNonce, peerNonce []byte, server bool, prev []byte) (local, remote Keys, ikm []byte, err error) {
	peer, err := p.ParseNonce(peerNonce)
	if err != nil {
		return Keys{}, Keys{}, nil, err
	}
	secret, err := own.ECDH(peer)
	if err != nil {
		return Keys{}, Keys{}, nil, ErrSecurityChecks
	}
	if p.enhanced {
		if len(prev) == len(secret) {
			for i := range secret {
				secret[i] ^= prev[i]
			}
		} else if len(prev) != 0 {
			return Keys{}, Keys{}, nil, ErrSecurityChecks
		}
		ikm = secret
	}
	ownLabel, peerLabel := "opcua-server", "opcua-client"
	if !server {
		ownLabel, peerLabel = peerLabel, ownLabel
	}
	if local, err = p.hkdfKeys(secret, ownLabel, ownNonce, peerNonce); err != nil {
		return Keys{}, Keys{}, nil, err
	}
	if remote, err = p.hkdfKeys(secret, peerLabel, peerNonce, ownNonce); err != nil {
		return Keys{}, Keys{}, nil, err
	}
	return local, remote, ikm, nil
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
// remote: HMAC with the policy's hash, AES-CBC when encrypt. For the AEAD
// policies NewAEAD.
func (p *ECC) NewSymmetric(local, remote Keys, encrypt bool) (*Symmetric, error) {
	if p.aead != "" {
		return nil, errors.New("secpol: " + p.name + " is an AEAD policy")
	}
	return newSymmetric(p.newHash, local, remote, encrypt)
}
