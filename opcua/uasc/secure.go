package uasc

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Credentials are the server's application instance certificate (DER)
// and its private key: Key for the RSA certificate type, EC for an ECC
// one.
type Credentials struct {
	Certificate []byte
	Key         *rsa.PrivateKey
	EC          crypto.Signer // *ecdsa.PrivateKey or ed25519.PrivateKey
	thumbprint  []byte
}

// NewCredentials returns cert and key as Credentials, after checking that
// they belong together.
func NewCredentials(cert []byte, key *rsa.PrivateKey) (*Credentials, error) {
	c, err := x509.ParseCertificate(cert)
	if err != nil {
		return nil, err
	}
	pub, ok := c.PublicKey.(*rsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
		return nil, errKeyMismatch
	}
	return &Credentials{Certificate: cert, Key: key, thumbprint: secpol.Thumbprint(cert)}, nil
}

type credError string

func (e credError) Error() string { return string(e) }

const errKeyMismatch = credError("uasc: the private key does not belong to the certificate")

// Thumbprint is the SHA-1 thumbprint of the certificate.
func (c *Credentials) Thumbprint() []byte { return c.thumbprint }

// CertificateCheck validates a client's application instance certificate
// (leaf) and the chain it sent with it, before a channel opens: trust,
// validity, key usage (OPC 10000-4 §6.1.3). A rejection is a ua.StatusCode
// that the client is told (Bad_CertificateUntrusted, ...).
type CertificateCheck func(leaf *x509.Certificate, chain []*x509.Certificate) error

// NewSecurityPolicy returns the SecurityPolicy of p with Sign and
// SignAndEncrypt. own returns the server's credentials at each handshake
// (they may be renewed while the server runs); check validates each
// client certificate, at each handshake and renewal.
func NewSecurityPolicy(p *secpol.Policy, own func() *Credentials, check CertificateCheck) SecurityPolicy {
	return &rsaPolicy{p: p, own: own, check: check}
}

type rsaPolicy struct {
	p     *secpol.Policy
	own   func() *Credentials
	check CertificateCheck
	nonce func() []byte // tests: fixed server nonces (nil: crypto/rand)
}

func (r *rsaPolicy) URI() string { return r.p.URI() }

func (r *rsaPolicy) SupportsMode(m ua.MessageSecurityMode) bool {
	return m == ua.MessageSecurityModeSign || m == ua.MessageSecurityModeSignAndEncrypt
}

// Asymmetric checks the client's certificate and that the thumbprint
// names ours. OpenSecureChannel chunks are signed and encrypted in both
// modes (OPC 10000-6 §6.7.2.1).
func (r *rsaPolicy) Asymmetric(senderCertificate, receiverThumbprint []byte) (AsymmetricResult, error) {
	own := r.own()
	if own == nil || own.Key == nil {
		return AsymmetricResult{}, status.BadSecurityChecksFailed
	}
	var pub *rsa.PublicKey
	leaf, err := checkSender(own, senderCertificate, receiverThumbprint, r.check, func(k any) (ok bool) {
		pub, ok = r.p.CheckKey(k)
		return ok
	})
	if err != nil {
		return AsymmetricResult{}, err
	}
	return AsymmetricResult{
		Crypto:             &asymCrypto{p: r.p, own: own.Key, peer: pub},
		SenderCertificate:  own.Certificate,
		ReceiverThumbprint: secpol.Thumbprint(leaf.Raw),
		PeerCertificate:    leaf.Raw,
	}, nil
}

// checkSender checks a client's OpenSecureChannel certificate: it parses
// (Bad_CertificateInvalid), has a key the policy takes (keyOK;
// Bad_CertificatePolicyCheckFailed), the thumbprint names our
// certificate (Bad_CertificateInvalid: the client encrypted or signed for
// another one of ours, an old one or another server's) and check accepts
// it. It returns the leaf.
func checkSender(own *Credentials, senderCertificate, receiverThumbprint []byte, check CertificateCheck, keyOK func(any) bool) (*x509.Certificate, error) {
	if len(senderCertificate) == 0 {
		return nil, status.BadCertificateInvalid
	}
	// The header aliases the receive buffer; the parsed certificates
	// alias their input and outlive it.
	leaf, chain, err := secpol.LeafCertificate(bytes.Clone(senderCertificate))
	if err != nil {
		return nil, status.BadCertificateInvalid
	}
	if !keyOK(leaf.PublicKey) {
		return nil, status.BadCertificatePolicyCheckFailed
	}
	if subtle.ConstantTimeCompare(receiverThumbprint, own.thumbprint) != 1 {
		return nil, status.BadCertificateInvalid
	}
	if check != nil {
		if err := check(leaf, chain); err != nil {
			return nil, err
		}
	}
	return leaf, nil
}

func (r *rsaPolicy) newNonce() ([]byte, error) {
	if r.nonce != nil {
		return r.nonce(), nil
	}
	b := make([]byte, secpol.NonceLength)
	_, err := rand.Read(b)
	return b, err
}

// Token makes a random server nonce and derives the token's keys: ours
// from (clientNonce, serverNonce), the client's from (serverNonce,
// clientNonce).
func (r *rsaPolicy) Token(mode ua.MessageSecurityMode, clientNonce []byte) ([]byte, ChunkCrypto, error) {
	if len(clientNonce) != secpol.NonceLength {
		return nil, nil, status.BadNonceInvalid
	}
	serverNonce, err := r.newNonce()
	if err != nil {
		return nil, nil, status.BadInternalError
	}
	if bytes.Equal(clientNonce, serverNonce) {
		return nil, nil, status.BadNonceInvalid
	}
	s, err := r.p.NewSymmetric(r.p.DeriveKeys(clientNonce, serverNonce), r.p.DeriveKeys(serverNonce, clientNonce),
		mode == ua.MessageSecurityModeSignAndEncrypt)
	if err != nil {
		return nil, nil, status.BadInternalError
	}
	return serverNonce, s, nil
}

// asymCrypto secures the OpenSecureChannel chunks: we sign with our key
// and encrypt for the client's, the client the other way round.
type asymCrypto struct {
	p    *secpol.Policy
	own  *rsa.PrivateKey
	peer *rsa.PublicKey
}

func (a *asymCrypto) SignatureSize() int       { return a.own.Size() }
func (a *asymCrypto) RemoteSignatureSize() int { return a.peer.Size() }
func (a *asymCrypto) EncryptBlockSizes() (int, int) {
	return a.p.PlainBlockSize(a.peer), a.peer.Size()
}
func (a *asymCrypto) DecryptBlockSizes() (int, int) {
	return a.p.PlainBlockSize(&a.own.PublicKey), a.own.Size()
}

// ExtraPadding: the padding has two size bytes when the key that
// encrypts is longer than 2048 bits (OPC 10000-6 §6.7.2.5).
func (a *asymCrypto) ExtraPadding() (bool, bool) {
	return a.peer.Size() > 256, a.own.Size() > 256
}
func (a *asymCrypto) Sign(dst, data []byte) ([]byte, error) {
	sig, err := a.p.Sign(a.own, data)
	return append(dst, sig...), err
}
func (a *asymCrypto) Verify(data, sig []byte) error { return a.p.Verify(a.peer, data, sig) }
func (a *asymCrypto) Encrypt(dst, plain []byte) ([]byte, error) {
	return a.p.Encrypt(dst, a.peer, plain)
}
func (a *asymCrypto) Decrypt(b []byte) ([]byte, error) { return a.p.Decrypt(a.own, b) }

var _ ChunkCrypto = (*asymCrypto)(nil)
var _ ChunkCrypto = (*secpol.Symmetric)(nil)

// SealChunk and OpenChunk are the chunk layer's sealing and opening
// (see sealChunk and openChunk) for a client's side of a channel, e.g.
// internal/testutil/uaclient: the framing is the same in both directions.
func SealChunk(b []byte, start, secHdr int, cr ChunkCrypto, scratch *[]byte) ([]byte, error) {
	return sealChunk(b, start, secHdr, cr, scratch)
}

// OpenChunk: see SealChunk. prevSeq is the sequence number of the chunk
// received before in that direction (AEAD policies' nonces).
func OpenChunk(chunk []byte, secHdr int, cr ChunkCrypto, prevSeq uint32) ([]byte, error) {
	return openChunk(chunk, secHdr, cr, prevSeq)
}

// ClientAsymmetric returns the ChunkCrypto of a client's
// OpenSecureChannel chunks under p: signed with key, encrypted for the
// server's public key, and the other way round for the server's.
func ClientAsymmetric(p *secpol.Policy, key *rsa.PrivateKey, server *rsa.PublicKey) ChunkCrypto {
	return &asymCrypto{p: p, own: key, peer: server}
}
