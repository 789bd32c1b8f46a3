package secpol

import "crypto/rsa"

// SealSecretShortPad is SealSecret with the one-byte padding size.
func (p *Policy) SealSecretShortPad(receiver []byte, pub *rsa.PublicKey, nonce, secret []byte, signingTime int64) ([]byte, error) {
	return p.sealSecret(receiver, pub, nonce, secret, signingTime, true)
}
