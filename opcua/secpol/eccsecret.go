package secpol

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/subtle"
	"encoding/binary"
	"slices"
)

// EccEncryptedSecretID is the numeric NodeId (namespace 0) of the
// EccEncryptedSecret DataType, the TypeId an EncryptedSecret of an ECC
// policy starts with (OPC 10000-4 §7.40.2.5).
const EccEncryptedSecretID = 17546

// IsEccEncryptedSecret reports whether b starts as an EccEncryptedSecret.
func IsEccEncryptedSecret(b []byte) bool {
	_, ok := secretHeaderOf(b, EccEncryptedSecretID)
	return ok
}

// secretKeys derives the key and IV of an EccEncryptedSecret (OPC 10000-6
// §6.8.3): HKDF of the shared secret of the two ephemeral keys, salt and
// info L‖"opcua-secret"‖SenderPublicKey‖ReceiverPublicKey.
func (p *ECC) secretKeys(own *ecdh.PrivateKey, peer, sender, receiver []byte) (key, iv []byte, err error) {
	pub, err := p.ParseNonce(peer)
	if err != nil {
		return nil, nil, err
	}
	shared, err := own.ECDH(pub)
	if err != nil {
		return nil, nil, ErrSecurityChecks
	}
	ivLen := SymmetricBlockSize
	if p.aead != "" {
		ivLen = 12
	}
	l := p.encKeyLen + ivLen
	salt := binary.LittleEndian.AppendUint16(nil, uint16(l))
	salt = append(append(append(salt, "opcua-secret"...), sender...), receiver...)
	out, err := hkdf.Key(p.newHash, shared, salt, string(salt), l)
	if err != nil {
		return nil, nil, ErrSecurityChecks
	}
	return out[:p.encKeyLen], out[p.encKeyLen:], nil
}

// secretBlock is the payload's alignment: the AES block of CBC, 16 for
// the AEAD ciphers too.
const secretBlock = 16

// SealEccSecret returns nonce and secret as an EccEncryptedSecret from the
// holder of cert and key (the sender's application certificate, DER)
// for the holder of the ephemeral key receiverKey (its public key, as
// the receiver's EphemeralKey gave it): a new ephemeral key of ours, the
// payload (nonce, secret, padding, its UInt16 size) encrypted with the
// derived key (AES-CBC, or the AEAD with the header as additional data
// and the IV unmasked), all signed with key. signingTime is the
// SigningTime field (100 ns ticks since 1601).
func (p *ECC) SealEccSecret(cert []byte, key crypto.Signer, receiverKey, nonce, secret []byte, signingTime int64) ([]byte, error) {
	eph, sender, err := p.NewEphemeral()
	if err != nil {
		return nil, err
	}
	encKey, iv, err := p.secretKeys(eph, receiverKey, sender, receiverKey)
	if err != nil {
		return nil, err
	}
	var payload []byte
	payload = appendBytes(payload, nonce)
	payload = appendBytes(payload, secret)
	pad := 0
	if r := (len(payload) + 2) % secretBlock; r != 0 {
		pad = secretBlock - r
	}
	if pad+len(secret) < secretBlock {
		pad += secretBlock
	}
	for range pad {
		payload = append(payload, byte(pad))
	}
	payload = binary.LittleEndian.AppendUint16(payload, uint16(pad))

	var keyData []byte
	keyData = appendBytes(keyData, sender)
	keyData = appendBytes(keyData, receiverKey)
	tag := 0
	if p.aead != "" {
		tag = 16
	}
	out := []byte{0x01, 0x00, 0, 0, 0x01}
	binary.LittleEndian.PutUint16(out[2:], EccEncryptedSecretID)
	lenAt := len(out)
	out = append(out, 0, 0, 0, 0)
	out = appendBytes(out, []byte(p.uri))
	out = appendBytes(out, cert)
	out = binary.LittleEndian.AppendUint64(out, uint64(signingTime))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(keyData)))
	out = append(out, keyData...)
	binary.LittleEndian.PutUint32(out[lenAt:], uint32(len(out)+len(payload)+tag+p.sigLen-lenAt-4))
	at := len(out)
	if p.aead != "" {
		a, err := p.newAEADCipher(encKey)
		if err != nil {
			return nil, err
		}
		out = a.Seal(out, iv, payload, slices.Clone(out[:at]))
	} else {
		block, err := aes.NewCipher(encKey)
		if err != nil {
			return nil, err
		}
		out = append(out, payload...)
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(out[at:], out[at:])
	}
	sig, err := p.Sign(key, out)
	if err != nil {
		return nil, err
	}
	return append(out, sig...), nil
}

// OpenEccSecret returns the nonce and the secret of an EccEncryptedSecret
// b sent to us by the holder of the key peer (the channel's client
// certificate's), for our ephemeral key own (whose public key we gave as
// our EphemeralKey). It checks, in this order: the layout, the
// SecurityPolicyUri, the Length, the signature over all that precedes
// it, the key data (our public key must be the receiver's), and only then
// decrypts the payload (an AEAD checks its tag), then the padding.
// SigningTime is not checked: the caller proves freshness with the
// nonce. Every failure is ErrSecurityChecks.
func (p *ECC) OpenEccSecret(own *ecdh.PrivateKey, peer crypto.PublicKey, b []byte) (nonce, secret []byte, err error) {
	at, ok := secretHeaderOf(b, EccEncryptedSecretID)
	if !ok || len(b) < at+4 {
		return nil, nil, ErrSecurityChecks
	}
	end := at + 4 + int(binary.LittleEndian.Uint32(b[at:]))
	if end > len(b) || end < at+4 {
		return nil, nil, ErrSecurityChecks
	}
	b = b[:end]
	r := reader{b: b, at: at + 4}
	uri, ok1 := r.bytes()
	_, ok2 := r.bytes() // SigningCertificate: the channel's is the one that counts
	_, ok3 := r.take(8) // SigningTime
	kl, ok4 := r.take(2)
	if !ok1 || !ok2 || !ok3 || !ok4 || string(uri) != p.uri || len(b)-r.at < p.sigLen {
		return nil, nil, ErrSecurityChecks
	}
	sigAt := len(b) - p.sigLen
	if p.Verify(peer, b[:sigAt], b[sigAt:]) != nil {
		return nil, nil, ErrSecurityChecks
	}
	keyData, ok := r.take(int(binary.LittleEndian.Uint16(kl)))
	if !ok || r.at > sigAt {
		return nil, nil, ErrSecurityChecks
	}
	kr := reader{b: keyData}
	sender, ok1 := kr.bytes()
	receiver, ok2 := kr.bytes()
	if !ok1 || !ok2 || kr.at != len(keyData) || subtle.ConstantTimeCompare(receiver, p.EphemeralNonce(own)) != 1 {
		return nil, nil, ErrSecurityChecks
	}
	encKey, iv, err := p.secretKeys(own, sender, sender, receiver)
	if err != nil {
		return nil, nil, ErrSecurityChecks
	}
	enc := b[r.at:sigAt]
	var plain []byte
	if p.aead != "" {
		a, err := p.newAEADCipher(encKey)
		if err != nil {
			return nil, nil, ErrSecurityChecks
		}
		if plain, err = a.Open(nil, iv, enc, b[:r.at]); err != nil {
			return nil, nil, ErrSecurityChecks
		}
	} else {
		if len(enc) == 0 || len(enc)%SymmetricBlockSize != 0 {
			return nil, nil, ErrSecurityChecks
		}
		block, err := aes.NewCipher(encKey)
		if err != nil {
			return nil, nil, ErrSecurityChecks
		}
		plain = slices.Clone(enc)
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, plain)
	}
	pr := reader{b: plain}
	nonce, ok1 = pr.bytes()
	secret, ok2 = pr.bytes()
	if !ok1 || !ok2 || !eccPadding(plain[pr.at:]) {
		return nil, nil, ErrSecurityChecks
	}
	return nonce, secret, nil
}

// eccPadding reports whether pad is n bytes of value n (its low byte) and
// n as a UInt16.
func eccPadding(pad []byte) bool {
	k := len(pad)
	if k < 2 || int(binary.LittleEndian.Uint16(pad[k-2:])) != k-2 {
		return false
	}
	var diff byte
	for _, v := range pad[:k-2] {
		diff |= v ^ byte(k-2)
	}
	return diff == 0
}
