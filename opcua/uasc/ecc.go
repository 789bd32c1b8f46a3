package uasc

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// NewECCredentials returns cert and key as Credentials of an ECC
// certificate type, after checking that they belong together.
func NewECCredentials(cert []byte, key crypto.Signer) (*Credentials, error) {
	c, err := x509.ParseCertificate(cert)
	if err != nil {
		return nil, err
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(c.PublicKey) {
		return nil, errKeyMismatch
	}
	switch key.(type) {
	case *ecdsa.PrivateKey, ed25519.PrivateKey:
	default:
		return nil, errKeyMismatch
	}
	return &Credentials{Certificate: cert, EC: key, thumbprint: secpol.Thumbprint(cert)}, nil
}

// NewECCPolicy returns the SecurityPolicy of the ECC policy p with Sign
// and SignAndEncrypt. own returns the server's credentials of p's
// certificate type at each handshake; check validates each client
// certificate.
func NewECCPolicy(p *secpol.ECC, own func() *Credentials, check CertificateCheck) SecurityPolicy {
	return &eccPolicy{p: p, own: own, check: check}
}

type eccPolicy struct {
	p     *secpol.ECC
	own   func() *Credentials
	check CertificateCheck
	eph   func() *ecdh.PrivateKey // tests: a fixed ephemeral key (nil: a new one)
}

func (e *eccPolicy) URI() string { return e.p.URI() }

func (e *eccPolicy) SupportsMode(m ua.MessageSecurityMode) bool {
	return m == ua.MessageSecurityModeSign || m == ua.MessageSecurityModeSignAndEncrypt
}

// FirstSequenceNumberZero: the ECC policies do not use the legacy
// sequence numbers.
func (e *eccPolicy) FirstSequenceNumberZero() bool { return true }

// Asymmetric checks the client's certificate (a key of the policy: ECDSA
// on its curve, or Ed25519) and that the thumbprint names ours. OpenSecureChannel
// chunks are signed, not encrypted (OPC 10000-6 §6.8.1).
func (e *eccPolicy) Asymmetric(senderCertificate, receiverThumbprint []byte) (AsymmetricResult, error) {
	own := e.own()
	if own == nil || own.EC == nil || !e.p.CheckPrivateKey(own.EC) {
		return AsymmetricResult{}, status.BadSecurityChecksFailed
	}
	var pub crypto.PublicKey
	leaf, err := checkSender(own, senderCertificate, receiverThumbprint, e.check, func(k any) (ok bool) {
		pub, ok = e.p.CheckKey(k)
		return ok
	})
	if err != nil {
		return AsymmetricResult{}, err
	}
	return AsymmetricResult{
		Crypto:             &eccAsym{p: e.p, own: own.EC, peer: pub},
		SenderCertificate:  own.Certificate,
		ReceiverThumbprint: secpol.Thumbprint(leaf.Raw),
		PeerCertificate:    leaf.Raw,
	}, nil
}

// Token makes an ephemeral key pair, whose public key is the server
// nonce, and derives the token's keys from the shared secret with the
// client's ephemeral key (its nonce). The private key is dropped: a
// renewal brings new ephemeral keys on both sides.
func (e *eccPolicy) Token(mode ua.MessageSecurityMode, clientNonce []byte) ([]byte, ChunkCrypto, error) {
	n, cr, _, err := e.TokenChained(mode, clientNonce, nil)
	return n, cr, err
}

// chainedPolicy is implemented by the policies whose tokens chain their
// IKM (the enhanced ECC policies): TokenChained is Token with the
// channel's previous IKM (nil at the first OpenSecureChannel), and
// returns the next.
type chainedPolicy interface {
	TokenChained(mode ua.MessageSecurityMode, clientNonce, prevIKM []byte) ([]byte, ChunkCrypto, []byte, error)
}

// TokenChained: see chainedPolicy.
func (e *eccPolicy) TokenChained(mode ua.MessageSecurityMode, clientNonce, prevIKM []byte) ([]byte, ChunkCrypto, []byte, error) {
	if len(clientNonce) != e.p.NonceLength() {
		return nil, nil, nil, status.BadNonceInvalid
	}
	priv, nonce, err := e.p.NewEphemeral()
	if err != nil {
		return nil, nil, nil, status.BadInternalError
	}
	if e.eph != nil {
		priv = e.eph()
		nonce = e.p.EphemeralNonce(priv)
	}
	local, remote, ikm, err := e.p.DeriveKeysChained(priv, nonce, clientNonce, true, prevIKM)
	if err != nil {
		return nil, nil, nil, status.BadNonceInvalid
	}
	encrypt := mode == ua.MessageSecurityModeSignAndEncrypt
	if e.p.AEAD() {
		a, err := e.p.NewAEAD(local, remote, encrypt)
		if err != nil {
			return nil, nil, nil, status.BadInternalError
		}
		return nonce, AEADChunkCrypto(a), ikm, nil
	}
	s, err := e.p.NewSymmetric(local, remote, encrypt)
	if err != nil {
		return nil, nil, nil, status.BadInternalError
	}
	return nonce, s, ikm, nil
}

// AEADCrypto is a ChunkCrypto of an AEAD policy: the framing code hands
// it whole symmetric chunks to seal and to open, with no padding and no
// separate signature (its Sign, Verify, Encrypt and Decrypt are never
// called; SignatureSize is the tag's, which sizes the bodies).
type AEADCrypto interface {
	ChunkCrypto
	// SealChunk patches MessageSize of the chunk b[start:] and seals it.
	SealChunk(b []byte, start int) ([]byte, error)
	// OpenChunk checks (and decrypts) a received chunk whose predecessor
	// in its direction had sequence number prevSeq and returns its
	// sequence header and body.
	OpenChunk(chunk []byte, prevSeq uint32) ([]byte, error)
}

// AEADChunkCrypto returns a's crypto as an AEADCrypto.
func AEADChunkCrypto(a *secpol.AEAD) AEADCrypto { return aeadCrypto{a} }

type aeadCrypto struct{ a *secpol.AEAD }

func (c aeadCrypto) SignatureSize() int            { return c.a.TagSize() }
func (c aeadCrypto) RemoteSignatureSize() int      { return c.a.TagSize() }
func (c aeadCrypto) EncryptBlockSizes() (int, int) { return 0, 0 }
func (c aeadCrypto) DecryptBlockSizes() (int, int) { return 0, 0 }
func (c aeadCrypto) ExtraPadding() (bool, bool)    { return false, false }
func (c aeadCrypto) Sign(dst, _ []byte) ([]byte, error) {
	return dst, secpol.ErrSecurityChecks
}
func (c aeadCrypto) Verify(_, _ []byte) error { return secpol.ErrSecurityChecks }
func (c aeadCrypto) Encrypt(dst, _ []byte) ([]byte, error) {
	return dst, secpol.ErrSecurityChecks
}
func (c aeadCrypto) Decrypt([]byte) ([]byte, error) { return nil, secpol.ErrSecurityChecks }
func (c aeadCrypto) SealChunk(b []byte, start int) ([]byte, error) {
	return c.a.Seal(b, start)
}
func (c aeadCrypto) OpenChunk(chunk []byte, prevSeq uint32) ([]byte, error) {
	return c.a.Open(chunk, prevSeq)
}

// eccAsym secures the OpenSecureChannel chunks of an ECC policy: ECDSA
// signatures; the "encryption" is the identity with blocks of one byte,
// which leaves one padding byte (0) before the signature, as the
// policies' OpenSecureChannel chunks carry it.
type eccAsym struct {
	p    *secpol.ECC
	own  crypto.Signer
	peer crypto.PublicKey
	// The ChannelThumbprint of the enhanced policies (OPC 10000-6
	// v1.05.07 §6.7.5): reqSig is the signature of the first request
	// chunk verified; with bind set, Sign signs its data and reqSig, and
	// keeps the signature as thumb.
	reqSig, thumb []byte
	bind          bool
	client        bool // a client's side: it keeps its first request's signature and binds the response's verification to it
}

func (a *eccAsym) SignatureSize() int            { return a.p.SignatureSize() }
func (a *eccAsym) RemoteSignatureSize() int      { return a.p.SignatureSize() }
func (a *eccAsym) EncryptBlockSizes() (int, int) { return 1, 1 }
func (a *eccAsym) DecryptBlockSizes() (int, int) { return 1, 1 }
func (a *eccAsym) ExtraPadding() (bool, bool)    { return false, false }
func (a *eccAsym) Sign(dst, data []byte) ([]byte, error) {
	if a.bind {
		data = append(bytes.Clone(data), a.reqSig...)
	}
	sig, err := a.p.Sign(a.own, data)
	if a.bind {
		a.thumb = bytes.Clone(sig)
	}
	if a.client && a.p.Enhanced() && a.reqSig == nil {
		a.reqSig = bytes.Clone(sig)
	}
	return append(dst, sig...), err
}
func (a *eccAsym) Verify(data, sig []byte) error {
	if a.client {
		if !a.p.Enhanced() || a.thumb != nil {
			return a.p.Verify(a.peer, data, sig)
		}
		if err := a.p.Verify(a.peer, append(bytes.Clone(data), a.reqSig...), sig); err != nil {
			return err
		}
		a.thumb = bytes.Clone(sig)
		return nil
	}
	if err := a.p.Verify(a.peer, data, sig); err != nil {
		return err
	}
	if a.p.Enhanced() && a.reqSig == nil {
		a.reqSig = bytes.Clone(sig)
	}
	return nil
}

// ClientChannelThumbprint is the ChannelThumbprint a client's
// ClientECCAsymmetric crypto took from the first response (nil before,
// and under the policies without enhancements).
func ClientChannelThumbprint(cr ChunkCrypto) []byte {
	if a, ok := cr.(*eccAsym); ok {
		return a.thumb
	}
	return nil
}
func (a *eccAsym) Encrypt(dst, plain []byte) ([]byte, error) {
	return append(dst, plain...), nil
}
func (a *eccAsym) Decrypt(b []byte) ([]byte, error) { return b, nil }

// ClientECCAsymmetric returns the ChunkCrypto of a client's
// OpenSecureChannel chunks under the ECC policy p.
func ClientECCAsymmetric(p *secpol.ECC, key crypto.Signer, server crypto.PublicKey) ChunkCrypto {
	return &eccAsym{p: p, own: key, peer: server, client: true}
}

var _ ChunkCrypto = (*eccAsym)(nil)
var _ AEADCrypto = aeadCrypto{}
var _ SequenceStart = (*eccPolicy)(nil)
