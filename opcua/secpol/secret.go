package secpol

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
)

// RsaEncryptedSecretID is the numeric NodeId (namespace 0) of the
// RsaEncryptedSecret DataType, the TypeId an EncryptedSecret of an RSA
// policy starts with (OPC 10000-4 §7.36.2.3).
const RsaEncryptedSecretID = 17545

// IsEncryptedSecret reports whether b starts as an RsaEncryptedSecret:
// its TypeId, in the four-byte or the full numeric NodeId encoding, and
// the binary EncodingMask.
func IsEncryptedSecret(b []byte) bool {
	_, ok := secretHeader(b)
	return ok
}

// secretHeader returns the length of the TypeId and EncodingMask of an
// RsaEncryptedSecret at the start of b.
func secretHeader(b []byte) (int, bool) { return secretHeaderOf(b, RsaEncryptedSecretID) }

// secretHeaderOf is secretHeader for the DataType id.
func secretHeaderOf(b []byte, id uint32) (int, bool) {
	switch {
	case len(b) >= 5 && b[0] == 0x01 && b[1] == 0 && uint32(binary.LittleEndian.Uint16(b[2:])) == id && b[4] == 0x01:
		return 5, true
	case len(b) >= 8 && b[0] == 0x02 && binary.LittleEndian.Uint16(b[1:]) == 0 && binary.LittleEndian.Uint32(b[3:]) == id && b[7] == 0x01:
		return 8, true
	}
	return 0, false
}

// SealSecret returns secret and nonce as an RsaEncryptedSecret for the
// holder of receiver (a DER certificate with the RSA key pub): fresh
// signing and encrypting keys and IV, encrypted with pub by the policy's
// asymmetric encryption; the nonce and the secret AES-CBC encrypted with
// them, padded as OPC 10000-6 says (padding bytes, then a UInt16 size);
// an HMAC-SHA256 over everything before it. signingTime is the
// SigningTime field (100 ns ticks since 1601).
func (p *Policy) SealSecret(receiver []byte, pub *rsa.PublicKey, nonce, secret []byte, signingTime int64) ([]byte, error) {
	return p.sealSecret(receiver, pub, nonce, secret, signingTime, false)
}

// sealSecret is SealSecret; shortPad ends the padding with a one-byte
// size, as some stacks write it.
func (p *Policy) sealSecret(receiver []byte, pub *rsa.PublicKey, nonce, secret []byte, signingTime int64, shortPad bool) ([]byte, error) {
	keyLen := SigningKeyLength + p.encKeyLen + SymmetricBlockSize
	keys := make([]byte, keyLen)
	if _, err := rand.Read(keys); err != nil {
		return nil, err
	}
	sigKey, encKey, iv := keys[:SigningKeyLength], keys[SigningKeyLength:SigningKeyLength+p.encKeyLen], keys[SigningKeyLength+p.encKeyLen:]
	keyData, err := p.Encrypt(nil, pub, keys)
	if err != nil {
		return nil, err
	}
	if len(keyData) > 0xffff {
		return nil, ErrSecurityChecks
	}

	var payload []byte
	payload = appendBytes(payload, nonce)
	payload = appendBytes(payload, secret)
	sizeLen := 2
	if shortPad {
		sizeLen = 1
	}
	pad := 0
	if r := (len(payload) + sizeLen) % SymmetricBlockSize; r != 0 {
		pad = SymmetricBlockSize - r
	}
	if pad+len(secret) < SymmetricBlockSize {
		pad += SymmetricBlockSize
	}
	for range pad {
		payload = append(payload, byte(pad))
	}
	if shortPad {
		payload = append(payload, byte(pad))
	} else {
		payload = binary.LittleEndian.AppendUint16(payload, uint16(pad))
	}

	out := []byte{0x01, 0x00, 0, 0, 0x01}
	binary.LittleEndian.PutUint16(out[2:], RsaEncryptedSecretID)
	lenAt := len(out)
	out = append(out, 0, 0, 0, 0)
	out = appendBytes(out, []byte(p.uri))
	out = appendBytes(out, Thumbprint(receiver))
	out = binary.LittleEndian.AppendUint64(out, uint64(signingTime))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(keyData)))
	out = append(out, keyData...)
	at := len(out)
	out = append(out, payload...)
	block, err := aes.NewCipher(encKey)
	if err != nil {
		return nil, err
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out[at:], out[at:])
	binary.LittleEndian.PutUint32(out[lenAt:], uint32(len(out)+SymmetricSigLength-lenAt-4))
	mac := hmac.New(sha256.New, sigKey)
	mac.Write(out)
	return mac.Sum(out), nil
}

// OpenSecret returns the nonce and the secret of an RsaEncryptedSecret b
// sealed for us (own is our DER certificate, priv its key) with this
// policy. It checks, in this order: the layout, the SecurityPolicyUri,
// the certificate's thumbprint (when the sender gave one), the RSA
// decryption of the keys, the HMAC over all that precedes it, and only
// then decrypts the payload; the padding may be a UInt16 size (OPC
// 10000-6) or a one-byte size. SigningTime is not checked: the caller
// proves freshness with the nonce, and a gateway's clock may be wrong.
// Every failure is ErrSecurityChecks.
func (p *Policy) OpenSecret(priv *rsa.PrivateKey, own, b []byte) (nonce, secret []byte, err error) {
	at, ok := secretHeader(b)
	if !ok || len(b) < at+4 {
		return nil, nil, ErrSecurityChecks
	}
	if int64(binary.LittleEndian.Uint32(b[at:])) != int64(len(b)-at-4) {
		return nil, nil, ErrSecurityChecks
	}
	r := reader{b: b, at: at + 4}
	uri, ok1 := r.bytes()
	thumb, ok2 := r.bytes()
	_, ok3 := r.take(8) // SigningTime
	kl, ok4 := r.take(2)
	if !ok1 || !ok2 || !ok3 || !ok4 || string(uri) != p.uri {
		return nil, nil, ErrSecurityChecks
	}
	if len(thumb) > 0 && subtle.ConstantTimeCompare(thumb, Thumbprint(own)) != 1 {
		return nil, nil, ErrSecurityChecks
	}
	keyData, ok := r.take(int(binary.LittleEndian.Uint16(kl)))
	if !ok || len(b)-r.at < SymmetricSigLength {
		return nil, nil, ErrSecurityChecks
	}
	sigAt := len(b) - SymmetricSigLength
	enc := b[r.at:sigAt]
	if len(enc) == 0 || len(enc)%SymmetricBlockSize != 0 {
		return nil, nil, ErrSecurityChecks
	}
	keys, err := p.Decrypt(priv, append([]byte(nil), keyData...))
	if err != nil || len(keys) != SigningKeyLength+p.encKeyLen+SymmetricBlockSize {
		return nil, nil, ErrSecurityChecks
	}
	sigKey, encKey, iv := keys[:SigningKeyLength], keys[SigningKeyLength:SigningKeyLength+p.encKeyLen], keys[SigningKeyLength+p.encKeyLen:]
	mac := hmac.New(sha256.New, sigKey)
	mac.Write(b[:sigAt])
	if !hmac.Equal(mac.Sum(nil), b[sigAt:]) {
		return nil, nil, ErrSecurityChecks
	}
	block, err := aes.NewCipher(encKey)
	if err != nil {
		return nil, nil, ErrSecurityChecks
	}
	plain := make([]byte, len(enc))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, enc)
	pr := reader{b: plain}
	nonce, ok1 = pr.bytes()
	secret, ok2 = pr.bytes()
	if !ok1 || !ok2 || !validPadding(plain[pr.at:]) {
		return nil, nil, ErrSecurityChecks
	}
	return nonce, secret, nil
}

// validPadding reports whether pad is the payload padding of an
// EncryptedSecret: n bytes and then n as a UInt16, or as one byte.
func validPadding(pad []byte) bool {
	if n := len(pad); n >= 2 && int(binary.LittleEndian.Uint16(pad[n-2:])) == n-2 {
		return true
	}
	return len(pad) >= 1 && int(pad[len(pad)-1]) == len(pad)-1
}

// appendBytes appends b as a UA ByteString (or String): Int32 length, bytes.
func appendBytes(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// reader reads the UA binary fields of an EncryptedSecret.
type reader struct {
	b  []byte
	at int
}

func (r *reader) take(n int) ([]byte, bool) {
	if n < 0 || len(r.b)-r.at < n {
		return nil, false
	}
	out := r.b[r.at : r.at+n]
	r.at += n
	return out, true
}

// bytes reads a ByteString or String; null (length -1) is empty.
func (r *reader) bytes() ([]byte, bool) {
	l, ok := r.take(4)
	if !ok {
		return nil, false
	}
	n := int32(binary.LittleEndian.Uint32(l))
	if n == -1 {
		return nil, true
	}
	return r.take(int(n))
}
