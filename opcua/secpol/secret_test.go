package secpol_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/edged/edged/opcua/secpol"
)

// TestEncryptedSecret: an RsaEncryptedSecret sealed for a key opens with
// it to the same nonce and secret, for every policy, key size, secret
// length and both padding sizes; its layout is the one OPC 10000-4
// §7.36.2.3 draws, checked here field by field with the standard library
// alone (RSA-OAEP, HMAC-SHA256, AES-CBC), not with OpenSecret.
func TestEncryptedSecret(t *testing.T) {
	own := []byte("the receiver's certificate")
	sizes := []int{2048, 4096}
	if os.Getenv("EDGED_TEST_EMULATED") != "" {
		sizes = sizes[:1] // 4096-bit RSA under an emulator: natively only
	}
	for _, p := range secpol.All {
		for _, bits := range sizes {
			priv := key(t, bits)
			for _, n := range []int{0, 1, 15, 16, 64, 65, 300} {
				for _, short := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%d/%d/short=%v", p.Name(), bits, n, short), func(t *testing.T) {
						secret := bytes.Repeat([]byte{'s'}, n)
						nc := nonce(t)
						seal := p.SealSecret
						if short {
							seal = p.SealSecretShortPad
						}
						b, err := seal(own, &priv.PublicKey, nc, secret, 133_000_000_000_000_000)
						if err != nil {
							t.Fatal(err)
						}
						checkSecretLayout(t, p, priv, own, b, nc, secret)
						gotNonce, gotSecret, err := p.OpenSecret(priv, own, b)
						if err != nil || !bytes.Equal(gotNonce, nc) || !bytes.Equal(gotSecret, secret) {
							t.Fatalf("OpenSecret: %x %q %v", gotNonce, gotSecret, err)
						}
					})
				}
			}
		}
	}
}

// checkSecretLayout parses b as the specification lays it out.
func checkSecretLayout(t *testing.T, p *secpol.Policy, priv *rsa.PrivateKey, own, b, nc, secret []byte) {
	t.Helper()
	if !bytes.Equal(b[:5], []byte{0x01, 0x00, 0x89, 0x44, 0x01}) {
		t.Fatalf("TypeId and EncodingMask % x, want i=17545 binary", b[:5])
	}
	if got := binary.LittleEndian.Uint32(b[5:]); int(got) != len(b)-9 {
		t.Fatalf("Length %d, want %d", got, len(b)-9)
	}
	at := 9
	str := func() []byte {
		n := int(binary.LittleEndian.Uint32(b[at:]))
		at += 4 + n
		return b[at-n : at]
	}
	if uri := str(); string(uri) != p.URI() {
		t.Fatalf("SecurityPolicyUri %q", uri)
	}
	if sum := sha1.Sum(own); !bytes.Equal(str(), sum[:]) {
		t.Fatal("Certificate is not the receiver's SHA-1 thumbprint")
	}
	if ts := binary.LittleEndian.Uint64(b[at:]); ts != 133_000_000_000_000_000 {
		t.Fatalf("SigningTime %d", ts)
	}
	at += 8
	kl := int(binary.LittleEndian.Uint16(b[at:]))
	at += 2
	if kl%priv.Size() != 0 {
		t.Fatalf("KeyDataLength %d is not whole RSA blocks of %d", kl, priv.Size())
	}
	h := sha1.New()
	if p == secpol.Aes256Sha256RsaPss {
		h = sha256.New()
	}
	keys, err := rsa.DecryptOAEP(h, nil, priv, b[at:at+kl], nil)
	encLen := p.EncryptionKeyLength()
	if err != nil || len(keys) != 32+encLen+16 {
		t.Fatalf("KeyData: %d bytes, %v", len(keys), err)
	}
	at += kl
	sigAt := len(b) - 32
	mac := hmac.New(sha256.New, keys[:32])
	mac.Write(b[:sigAt])
	if !hmac.Equal(mac.Sum(nil), b[sigAt:]) {
		t.Fatal("the Signature is not HMAC-SHA256 over all before it")
	}
	payload := append([]byte(nil), b[at:sigAt]...)
	if len(payload)%16 != 0 {
		t.Fatalf("payload of %d bytes", len(payload))
	}
	block, _ := aes.NewCipher(keys[32 : 32+encLen])
	cipher.NewCBCDecrypter(block, keys[32+encLen:]).CryptBlocks(payload, payload)
	want := binary.LittleEndian.AppendUint32(nil, uint32(len(nc)))
	want = append(want, nc...)
	want = binary.LittleEndian.AppendUint32(want, uint32(len(secret)))
	want = append(want, secret...)
	if !bytes.HasPrefix(payload, want) {
		t.Fatal("the payload does not start with Nonce and Secret")
	}
	if pad := payload[len(want):]; len(pad)+len(secret) < 16 {
		t.Fatalf("padding %d bytes with a secret of %d: less than a block", len(pad), len(secret))
	}
}

// TestEncryptedSecretDamaged: any changed byte, any truncation, another
// key, policy or receiver certificate fails with ErrSecurityChecks.
func TestEncryptedSecretDamaged(t *testing.T) {
	own := []byte("the receiver's certificate")
	p := secpol.Basic256Sha256
	priv := key(t, 2048)
	nc := nonce(t)
	b, err := p.SealSecret(own, &priv.PublicKey, nc, []byte("a password"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		d := bytes.Clone(b)
		d[i] ^= 0x10
		if _, _, err := p.OpenSecret(priv, own, d); err != secpol.ErrSecurityChecks {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	for n := range len(b) {
		if _, _, err := p.OpenSecret(priv, own, b[:n]); err != secpol.ErrSecurityChecks {
			t.Fatalf("cut to %d bytes: %v", n, err)
		}
	}
	if _, _, err := p.OpenSecret(key(t, 3072), own, b); err != secpol.ErrSecurityChecks {
		t.Fatalf("another key: %v", err)
	}
	if _, _, err := secpol.Aes128Sha256RsaOaep.OpenSecret(priv, own, b); err != secpol.ErrSecurityChecks {
		t.Fatalf("another policy: %v", err)
	}
	if _, _, err := p.OpenSecret(priv, []byte("another certificate"), b); err != secpol.ErrSecurityChecks {
		t.Fatalf("another receiver: %v", err)
	}
	if !secpol.IsEncryptedSecret(b) || secpol.IsEncryptedSecret([]byte("password")) {
		t.Fatal("IsEncryptedSecret")
	}
}
