package secpol

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"hash"
	"slices"
)

// Keys are the keys of one direction of one security token.
type Keys struct {
	Signing, Encrypting, IV []byte
}

// DeriveKeys derives the keys of one direction from the nonces
// (OPC 10000-6 §6.7.5): P_SHA256(secret, seed) cut into the signing key,
// the encrypting key and the IV. The keys a server sends with are
// DeriveKeys(clientNonce, serverNonce); the client's are
// DeriveKeys(serverNonce, clientNonce).
func (p *Policy) DeriveKeys(secret, seed []byte) Keys {
	out := PSHA256(secret, seed, SigningKeyLength+p.encKeyLen+SymmetricBlockSize)
	return Keys{
		Signing:    out[:SigningKeyLength:SigningKeyLength],
		Encrypting: out[SigningKeyLength : SigningKeyLength+p.encKeyLen : SigningKeyLength+p.encKeyLen],
		IV:         out[SigningKeyLength+p.encKeyLen:],
	}
}

// PSHA256 is the P_SHA256 function of RFC 5246 §5 that OPC 10000-6 uses to
// derive keys: n bytes of HMAC-SHA256(secret, A(i) + seed), where A(0) =
// seed and A(i) = HMAC-SHA256(secret, A(i-1)).
func PSHA256(secret, seed []byte, n int) []byte {
	h := hmac.New(sha256.New, secret)
	out := make([]byte, 0, n+sha256.Size)
	h.Write(seed)
	a := h.Sum(nil)
	for len(out) < n {
		h.Reset()
		h.Write(a)
		h.Write(seed)
		out = h.Sum(out)
		h.Reset()
		h.Write(a)
		a = h.Sum(a[:0])
	}
	return out[:n]
}

// Symmetric secures the chunks of one security token: HMAC signatures
// (SHA-256; SHA-384 for ECC_nistP384) and, when encrypting, AES-CBC with the token's IV. It has the
// method set of uasc.ChunkCrypto. Its state (the HMACs, the block modes,
// a scratch signature) is made once, so that signing, verifying,
// encrypting and decrypting allocate nothing; one goroutine may send and
// another receive at the same time.
type Symmetric struct {
	local, remote hash.Hash // HMACs with our and the peer's signing key
	enc, dec      cipher.BlockMode
	encIV, decIV  ivSetter
	localIV       []byte
	remoteIV      []byte
	sigLen        int
	sum           [64]byte // Verify's scratch (SHA-384's 48 bytes fit)
}

// ivSetter is the SetIV method crypto/cipher's CBC modes have.
type ivSetter interface{ SetIV([]byte) }

// NewSymmetric returns the crypto of a token whose keys are local (ours,
// to send with) and remote (the peer's). encrypt selects SignAndEncrypt.
func (p *Policy) NewSymmetric(local, remote Keys, encrypt bool) (*Symmetric, error) {
	return newSymmetric(sha256.New, local, remote, encrypt)
}

// newSymmetric is NewSymmetric with the HMAC's hash h.
func newSymmetric(h func() hash.Hash, local, remote Keys, encrypt bool) (*Symmetric, error) {
	s := &Symmetric{
		local:  hmac.New(h, local.Signing),
		remote: hmac.New(h, remote.Signing),
	}
	s.sigLen = s.local.Size()
	if !encrypt {
		return s, nil
	}
	eb, err := aes.NewCipher(local.Encrypting)
	if err != nil {
		return nil, err
	}
	db, err := aes.NewCipher(remote.Encrypting)
	if err != nil {
		return nil, err
	}
	s.enc = cipher.NewCBCEncrypter(eb, local.IV)
	s.dec = cipher.NewCBCDecrypter(db, remote.IV)
	var ok1, ok2 bool
	// Each chunk starts from the token's IV: SetIV resets the block
	// modes, which crypto/cipher's CBC has.
	s.encIV, ok1 = s.enc.(ivSetter)
	s.decIV, ok2 = s.dec.(ivSetter)
	if !ok1 || !ok2 {
		return nil, errors.New("secpol: crypto/cipher's CBC has no SetIV")
	}
	s.localIV, s.remoteIV = slices.Clone(local.IV), slices.Clone(remote.IV)
	return s, nil
}

// SignatureSize implements uasc.ChunkCrypto.
func (s *Symmetric) SignatureSize() int { return s.sigLen }

// RemoteSignatureSize implements uasc.ChunkCrypto.
func (s *Symmetric) RemoteSignatureSize() int { return s.sigLen }

// EncryptBlockSizes implements uasc.ChunkCrypto.
func (s *Symmetric) EncryptBlockSizes() (int, int) {
	if s.enc == nil {
		return 0, 0
	}
	return SymmetricBlockSize, SymmetricBlockSize
}

// DecryptBlockSizes implements uasc.ChunkCrypto.
func (s *Symmetric) DecryptBlockSizes() (int, int) { return s.EncryptBlockSizes() }

// ExtraPadding implements uasc.ChunkCrypto: symmetric blocks are 16 bytes,
// one padding size byte is enough.
func (s *Symmetric) ExtraPadding() (bool, bool) { return false, false }

// Sign appends the HMAC of data under our signing key to dst.
func (s *Symmetric) Sign(dst, data []byte) ([]byte, error) {
	s.local.Reset()
	s.local.Write(data)
	return s.local.Sum(dst), nil
}

// Verify checks sig, in constant time, against the HMAC of data under the
// peer's signing key.
func (s *Symmetric) Verify(data, sig []byte) error {
	s.remote.Reset()
	s.remote.Write(data)
	if !hmac.Equal(s.remote.Sum(s.sum[:0]), sig) {
		return ErrSecurityChecks
	}
	return nil
}

// Encrypt appends the AES-CBC encryption of plain (whole blocks) to dst.
func (s *Symmetric) Encrypt(dst, plain []byte) ([]byte, error) {
	if len(plain)%SymmetricBlockSize != 0 {
		return dst, ErrSecurityChecks
	}
	n := len(dst)
	dst = slices.Grow(dst, len(plain))[:n+len(plain)]
	s.encIV.SetIV(s.localIV)
	s.enc.CryptBlocks(dst[n:], plain)
	return dst, nil
}

// Decrypt decrypts b (whole blocks) in place.
func (s *Symmetric) Decrypt(b []byte) ([]byte, error) {
	if len(b)%SymmetricBlockSize != 0 {
		return nil, ErrSecurityChecks
	}
	s.decIV.SetIV(s.remoteIV)
	s.dec.CryptBlocks(b, b)
	return b, nil
}
