package secpol

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"slices"

	"golang.org/x/crypto/chacha20poly1305"
)

// AEAD secures the chunks of one token of an AEAD policy (ECC_curve25519
// and ECC_nistP256_ChaChaPoly: ChaCha20-Poly1305; ECC_nistP256_AesGcm:
// AES-128-GCM). A chunk is sealed in one step: in SignAndEncrypt the
// sequence header and body are encrypted under the encrypting key, the
// message and security headers (16 bytes) authenticated with them, and
// the 16-byte tag appended; in Sign the whole chunk is authenticated
// under the signing key (the encrypting key of the policies without one)
// and the tag appended. No padding. Each chunk's nonce is the token's IV
// with its first eight bytes XORed with the token id and the sequence
// number of the chunk before it in that direction (both little endian),
// as open62541 v1.5.7 computes it. The ciphers are made once; sealing and
// opening allocate nothing. One goroutine may send and another receive at
// the same time.
type AEAD struct {
	local, remote         cipher.AEAD // keyed for this token's mode
	localIV, remoteIV     [chacha20poly1305.NonceSize]byte
	sendNonce, recvNonce  [chacha20poly1305.NonceSize]byte
	encrypt               bool
	sendScratch, recvTags [16]byte
}

// AEADHeaderLen is the length of a symmetric chunk's message and security
// headers, the AEAD's additional data in SignAndEncrypt.
const AEADHeaderLen = 16

// NewAEAD returns the crypto of a token of an AEAD policy whose keys are
// local (ours) and remote (the peer's); encrypt selects SignAndEncrypt.
func (p *ECC) NewAEAD(local, remote Keys, encrypt bool) (*AEAD, error) {
	lk, rk := local.Signing, remote.Signing
	if encrypt || p.signKey == 0 {
		// The enhanced policies have no signing key: Sign's tags are
		// made with the encrypting key.
		lk, rk = local.Encrypting, remote.Encrypting
	}
	l, err := p.newAEADCipher(lk)
	if err != nil {
		return nil, err
	}
	r, err := p.newAEADCipher(rk)
	if err != nil {
		return nil, err
	}
	a := &AEAD{local: l, remote: r, encrypt: encrypt}
	if len(local.IV) != len(a.localIV) || len(remote.IV) != len(a.remoteIV) {
		return nil, ErrSecurityChecks
	}
	copy(a.localIV[:], local.IV)
	copy(a.remoteIV[:], remote.IV)
	return a, nil
}

func (p *ECC) newAEADCipher(key []byte) (cipher.AEAD, error) {
	switch p.aead {
	case aeadChaCha:
		return chacha20poly1305.New(key)
	case aeadGCM:
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	}
	return nil, errors.New("secpol: " + p.name + " is not an AEAD policy")
}

func maskIV(out *[chacha20poly1305.NonceSize]byte, iv *[chacha20poly1305.NonceSize]byte, token, prevSeq uint32) {
	*out = *iv
	out[0] ^= byte(token)
	out[1] ^= byte(token >> 8)
	out[2] ^= byte(token >> 16)
	out[3] ^= byte(token >> 24)
	out[4] ^= byte(prevSeq)
	out[5] ^= byte(prevSeq >> 8)
	out[6] ^= byte(prevSeq >> 16)
	out[7] ^= byte(prevSeq >> 24)
}

// TagSize is the size of the tag appended to each chunk.
func (a *AEAD) TagSize() int { return a.local.Overhead() }

// Seal finishes the symmetric chunk b[start:]: its headers end at
// start+AEADHeaderLen, its sequence header and body run to len(b). It
// patches MessageSize and seals the chunk (see AEAD), taking the token id
// and the sequence number from the chunk: the nonce's "previous" number is
// the chunk's minus one, which is the one sent before it.
func (a *AEAD) Seal(b []byte, start int) ([]byte, error) {
	h := start + AEADHeaderLen
	if len(b) < h+8 {
		return b, ErrSecurityChecks
	}
	binary.LittleEndian.PutUint32(b[start+4:], uint32(len(b)-start+a.TagSize()))
	token := binary.LittleEndian.Uint32(b[start+12:])
	seq := binary.LittleEndian.Uint32(b[h:])
	maskIV(&a.sendNonce, &a.localIV, token, seq-1)
	if a.encrypt {
		// Sealed in place: the tag needs room after the plaintext.
		b = slices.Grow(b, a.TagSize())
		out := a.local.Seal(b[h:h], a.sendNonce[:], b[h:], b[start:h])
		return b[:h+len(out)], nil
	}
	tag := a.local.Seal(a.sendScratch[:0], a.sendNonce[:], nil, b[start:])
	return append(b, tag...), nil
}

// Open checks (and in SignAndEncrypt decrypts in place) a received
// symmetric chunk whose previous chunk in this direction had sequence
// number prevSeq, and returns the plaintext after the headers: sequence
// header and body. Every failure is ErrSecurityChecks.
func (a *AEAD) Open(chunk []byte, prevSeq uint32) ([]byte, error) {
	n := a.remote.Overhead()
	if len(chunk) < AEADHeaderLen+8+n {
		return nil, ErrSecurityChecks
	}
	token := binary.LittleEndian.Uint32(chunk[12:])
	maskIV(&a.recvNonce, &a.remoteIV, token, prevSeq)
	if a.encrypt {
		p, err := a.remote.Open(chunk[AEADHeaderLen:AEADHeaderLen], a.recvNonce[:], chunk[AEADHeaderLen:], chunk[:AEADHeaderLen])
		if err != nil {
			return nil, ErrSecurityChecks
		}
		return p, nil
	}
	end := len(chunk) - n
	if _, err := a.remote.Open(a.recvTags[:0], a.recvNonce[:], chunk[end:], chunk[:end]); err != nil {
		return nil, ErrSecurityChecks
	}
	return chunk[AEADHeaderLen:end], nil
}
