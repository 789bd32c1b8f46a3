package uasc

import "github.com/edged/edged/opcua/ua"

// SecurityPolicy is one OPC UA security policy (OPC 10000-7) as the chunk
// layer uses it. The framing code (recv.go, send.go) owns the layout of a
// chunk; a policy supplies the contents of the security headers and the
// cryptographic primitives. Where each step plugs in:
//
//	OPN received (recv.go handleOPN, Open step 3):
//	  asymmetric security header decoded by the framing code
//	  → Asymmetric(senderCertificate, receiverThumbprint)   validate, pick keys
//	  → ChunkCrypto.Decrypt, Verify, padding removed        openChunk
//	  OpenSecureChannelRequest decoded; SupportsMode(mode)
//	  → NewNonce()                                          server nonce
//	  → Symmetric(mode, clientNonce, serverNonce)          key derivation, §6.7.5
//	OPN response sent (send.go appendOPN):
//	  asymmetric header with AsymmetricResult.SenderCertificate and
//	  .ReceiverThumbprint → padding sized from EncryptBlockSizes and
//	  SignatureSize → Sign → Encrypt                        sealChunk
//	MSG and CLO received: symmetric header (token id) → the token's
//	  ChunkCrypto: Decrypt, Verify, padding removed         openChunk
//	MSG sent: the same steps as the OPN response with the token's
//	  ChunkCrypto                                           sealChunk
//
// SecurityPolicy None implements every step as a no-op; NewSecurityPolicy
// makes Basic256Sha256, Aes128_Sha256_RsaOaep and Aes256_Sha256_RsaPss
// (secure.go) from the algorithms of package secpol.
type SecurityPolicy interface {
	// URI is the policy's URI, e.g.
	// "http://opcfoundation.org/UA/SecurityPolicy#None".
	URI() string
	// SupportsMode reports whether the policy can be used with mode.
	// None supports MessageSecurityModeNone only, the others Sign and
	// SignAndEncrypt.
	SupportsMode(mode ua.MessageSecurityMode) bool
	// Asymmetric checks the asymmetric security header of a client's
	// OpenSecureChannel chunk (its certificate, and the thumbprint that
	// must name ours) and returns what secures OPN chunks in both
	// directions. An error is a ua.StatusCode (Bad_SecurityChecksFailed,
	// Bad_CertificateInvalid, ...).
	Asymmetric(senderCertificate, receiverThumbprint []byte) (AsymmetricResult, error)
	// Token makes a fresh server nonce for an OpenSecureChannel response
	// (nil for None), derives the keys of one security token from it and
	// the client's nonce (OPC 10000-6 §6.7.5; §6.8.1 for ECC, whose
	// nonces are ephemeral public keys) and returns what secures MSG and
	// CLO chunks under that token. A bad client nonce is
	// Bad_NonceInvalid.
	Token(mode ua.MessageSecurityMode, clientNonce []byte) (serverNonce []byte, crypto ChunkCrypto, err error)
}

// SequenceStart is implemented by policies whose first sequence number
// is 0 (the ECC policies: LegacySequenceNumbers false, OPC 10000-6
// §6.7.2.4); the others start at 1.
type SequenceStart interface {
	FirstSequenceNumberZero() bool
}

// AsymmetricResult is what a policy's Asymmetric step returns.
type AsymmetricResult struct {
	Crypto ChunkCrypto
	// SenderCertificate is our certificate, sent in the OPN response's
	// asymmetric header (nil for None).
	SenderCertificate []byte
	// ReceiverThumbprint is the thumbprint of the client's certificate,
	// sent in the OPN response (nil for None).
	ReceiverThumbprint []byte
	// PeerCertificate is the client's certificate (DER, without the
	// chain; nil for None). A renewal must bring the same one.
	PeerCertificate []byte
}

// ChunkCrypto signs, verifies, encrypts and decrypts the chunks of one
// direction pair: the asymmetric keys of an OPN exchange, or the
// symmetric keys of one token. The framing code computes padding and
// sizes from the block and signature sizes, as OPC 10000-6 §6.7.2.5
// prescribes, and calls the primitives. An implementation is used by one
// goroutine at a time for sending and one for receiving.
type ChunkCrypto interface {
	// SignatureSize is the size of the signatures we append (0: unsigned).
	SignatureSize() int
	// RemoteSignatureSize is the size of the peer's signatures.
	RemoteSignatureSize() int
	// EncryptBlockSizes returns the plaintext and ciphertext block sizes
	// of our encryption; 0, 0 when we do not encrypt (no padding then).
	EncryptBlockSizes() (plain, cipher int)
	// DecryptBlockSizes is EncryptBlockSizes for the peer's chunks.
	DecryptBlockSizes() (plain, cipher int)
	// ExtraPadding reports whether the padding carries an ExtraPaddingSize
	// byte (an asymmetric key longer than 2048 bits), for sending and for
	// receiving.
	ExtraPadding() (send, receive bool)
	// Sign appends the signature of data to dst.
	Sign(dst, data []byte) ([]byte, error)
	// Verify checks sig against data.
	Verify(data, sig []byte) error
	// Encrypt appends the ciphertext of plain (a multiple of the plain
	// block size) to dst.
	Encrypt(dst, plain []byte) ([]byte, error)
	// Decrypt decrypts b (a multiple of the cipher block size) in place
	// and returns the plaintext, a prefix of b.
	Decrypt(b []byte) ([]byte, error)
}

// SecurityPolicyURINone is the URI of SecurityPolicy None.
const SecurityPolicyURINone = "http://opcfoundation.org/UA/SecurityPolicy#None"

// PolicyNone is SecurityPolicy None: no signatures, no encryption, no
// certificates, no nonces.
var PolicyNone SecurityPolicy = policyNone{}

type policyNone struct{}

func (policyNone) URI() string { return SecurityPolicyURINone }
func (policyNone) SupportsMode(m ua.MessageSecurityMode) bool {
	return m == ua.MessageSecurityModeNone
}
func (policyNone) Asymmetric(_, _ []byte) (AsymmetricResult, error) {
	return AsymmetricResult{Crypto: cryptoNone{}}, nil
}
func (policyNone) Token(ua.MessageSecurityMode, []byte) ([]byte, ChunkCrypto, error) {
	return nil, cryptoNone{}, nil
}

// cryptoNone is the ChunkCrypto of SecurityPolicy None: every step is a
// no-op.
type cryptoNone struct{}

func (cryptoNone) SignatureSize() int                        { return 0 }
func (cryptoNone) RemoteSignatureSize() int                  { return 0 }
func (cryptoNone) EncryptBlockSizes() (int, int)             { return 0, 0 }
func (cryptoNone) DecryptBlockSizes() (int, int)             { return 0, 0 }
func (cryptoNone) ExtraPadding() (bool, bool)                { return false, false }
func (cryptoNone) Sign(dst, _ []byte) ([]byte, error)        { return dst, nil }
func (cryptoNone) Verify(_, _ []byte) error                  { return nil }
func (cryptoNone) Encrypt(dst, plain []byte) ([]byte, error) { return append(dst, plain...), nil }
func (cryptoNone) Decrypt(b []byte) ([]byte, error)          { return b, nil }

var _ SecurityPolicy = policyNone{}
var _ ChunkCrypto = cryptoNone{}
