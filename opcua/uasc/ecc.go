package uasc

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/x509"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// NewECCredentials returns cert and key as Credentials of an ECC
// certificate type, after checking that they belong together.
func NewECCredentials(cert []byte, key *ecdsa.PrivateKey) (*Credentials, error) {
	c, err := x509.ParseCertificate(cert)
	if err != nil {
		return nil, err
	}
	pub, ok := c.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
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

// Asymmetric checks the client's certificate (an ECDSA key on the
// policy's curve) and that the thumbprint names ours. OpenSecureChannel
// chunks are signed, not encrypted (OPC 10000-6 §6.8.1).
func (e *eccPolicy) Asymmetric(senderCertificate, receiverThumbprint []byte) (AsymmetricResult, error) {
	own := e.own()
	if own == nil || own.EC == nil || own.EC.Curve != e.p.Curve() {
		return AsymmetricResult{}, status.BadSecurityChecksFailed
	}
	var pub *ecdsa.PublicKey
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
	if len(clientNonce) != e.p.NonceLength() {
		return nil, nil, status.BadNonceInvalid
	}
	priv, nonce, err := e.p.NewEphemeral()
	if err != nil {
		return nil, nil, status.BadInternalError
	}
	if e.eph != nil {
		priv = e.eph()
		nonce = priv.PublicKey().Bytes()[1:]
	}
	local, remote, err := e.p.DeriveKeys(priv, nonce, clientNonce, true)
	if err != nil {
		return nil, nil, status.BadNonceInvalid
	}
	s, err := e.p.NewSymmetric(local, remote, mode == ua.MessageSecurityModeSignAndEncrypt)
	if err != nil {
		return nil, nil, status.BadInternalError
	}
	return nonce, s, nil
}

// eccAsym secures the OpenSecureChannel chunks of an ECC policy: ECDSA
// signatures; the "encryption" is the identity with blocks of one byte,
// which leaves one padding byte (0) before the signature, as the
// policies' OpenSecureChannel chunks carry it.
type eccAsym struct {
	p    *secpol.ECC
	own  *ecdsa.PrivateKey
	peer *ecdsa.PublicKey
}

func (a *eccAsym) SignatureSize() int            { return a.p.SignatureSize() }
func (a *eccAsym) RemoteSignatureSize() int      { return a.p.SignatureSize() }
func (a *eccAsym) EncryptBlockSizes() (int, int) { return 1, 1 }
func (a *eccAsym) DecryptBlockSizes() (int, int) { return 1, 1 }
func (a *eccAsym) ExtraPadding() (bool, bool)    { return false, false }
func (a *eccAsym) Sign(dst, data []byte) ([]byte, error) {
	sig, err := a.p.Sign(a.own, data)
	return append(dst, sig...), err
}
func (a *eccAsym) Verify(data, sig []byte) error { return a.p.Verify(a.peer, data, sig) }
func (a *eccAsym) Encrypt(dst, plain []byte) ([]byte, error) {
	return append(dst, plain...), nil
}
func (a *eccAsym) Decrypt(b []byte) ([]byte, error) { return b, nil }

// ClientECCAsymmetric returns the ChunkCrypto of a client's
// OpenSecureChannel chunks under the ECC policy p.
func ClientECCAsymmetric(p *secpol.ECC, key *ecdsa.PrivateKey, server *ecdsa.PublicKey) ChunkCrypto {
	return &eccAsym{p: p, own: key, peer: server}
}

var _ ChunkCrypto = (*eccAsym)(nil)
var _ SequenceStart = (*eccPolicy)(nil)
