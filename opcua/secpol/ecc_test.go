package secpol

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"testing"
)

// TestECCKeysAgree: the keys a server derives to send with are the keys
// the client derives for the server's messages, and the other way round;
// the two directions differ.
func TestECCKeysAgree(t *testing.T) {
	for _, p := range AllECC {
		t.Run(p.Name(), func(t *testing.T) {
			sk, sn, err := p.NewEphemeral()
			if err != nil {
				t.Fatal(err)
			}
			ck, cn, err := p.NewEphemeral()
			if err != nil {
				t.Fatal(err)
			}
			if len(sn) != p.NonceLength() || len(cn) != p.NonceLength() {
				t.Fatalf("nonces of %d and %d bytes, want %d", len(sn), len(cn), p.NonceLength())
			}
			sLocal, sRemote, err := p.DeriveKeys(sk, sn, cn, true)
			if err != nil {
				t.Fatal(err)
			}
			cLocal, cRemote, err := p.DeriveKeys(ck, cn, sn, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []struct {
				name string
				a, b Keys
			}{{"server→client", sLocal, cRemote}, {"client→server", cLocal, sRemote}} {
				if !bytes.Equal(k.a.Signing, k.b.Signing) || !bytes.Equal(k.a.Encrypting, k.b.Encrypting) || !bytes.Equal(k.a.IV, k.b.IV) {
					t.Errorf("%s: the two sides derived different keys", k.name)
				}
			}
			if bytes.Equal(sLocal.Signing, sRemote.Signing) {
				t.Error("both directions have the same signing key")
			}
			sl, el, il := p.keyLengths()
			if len(sLocal.Signing) != sl || len(sLocal.Encrypting) != el || len(sLocal.IV) != il {
				t.Errorf("key lengths %d/%d/%d, want %d/%d/%d", len(sLocal.Signing), len(sLocal.Encrypting), len(sLocal.IV), sl, el, il)
			}
			// Symmetric crypto of the two sides: what one signs and
			// encrypts, the other verifies and decrypts.
			srv, _ := p.NewSymmetric(sLocal, sRemote, true)
			cli, _ := p.NewSymmetric(cLocal, cRemote, true)
			msg := bytes.Repeat([]byte("edged ECC chunk!"), 4)
			sig, _ := srv.Sign(nil, msg)
			if len(sig) != srv.SignatureSize() || cli.Verify(msg, sig) != nil {
				t.Fatal("the client does not verify the server's signature")
			}
			ct, _ := srv.Encrypt(nil, msg)
			pt, _ := cli.Decrypt(ct)
			if !bytes.Equal(pt, msg) {
				t.Fatal("the client does not decrypt the server's ciphertext")
			}
		})
	}
}

// TestECCNonceChecks: a nonce of the wrong length, or not a point of the
// curve, is ErrSecurityChecks.
func TestECCNonceChecks(t *testing.T) {
	p := EccNistP256
	_, n, _ := p.NewEphemeral()
	bad := bytes.Clone(n)
	bad[len(bad)-1] ^= 1 // y no longer on the curve
	for name, nonce := range map[string][]byte{"short": n[:32], "off the curve": bad, "zeros": make([]byte, 64), "long": append(bytes.Clone(n), 0)} {
		if _, err := p.ParseNonce(nonce); err != ErrSecurityChecks {
			t.Errorf("%s nonce: %v, want ErrSecurityChecks", name, err)
		}
	}
	if _, err := p.ParseNonce(n); err != nil {
		t.Fatal(err)
	}
}

// TestECDSASignatures: r‖s of the curve's size; a flipped bit, a
// signature of the other curve's size or another key fail.
func TestECDSASignatures(t *testing.T) {
	for _, p := range AllECC {
		key, _ := ecdsa.GenerateKey(p.Curve(), rand.Reader)
		other, _ := ecdsa.GenerateKey(p.Curve(), rand.Reader)
		data := []byte("OpenSecureChannel")
		sig, err := p.Sign(key, data)
		if err != nil || len(sig) != p.SignatureSize() {
			t.Fatalf("%s: %v, %d bytes", p.Name(), err, len(sig))
		}
		if err := p.Verify(&key.PublicKey, data, sig); err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		flipped := bytes.Clone(sig)
		flipped[3] ^= 0x10
		for name, err := range map[string]error{
			"flipped":   p.Verify(&key.PublicKey, data, flipped),
			"other key": p.Verify(&other.PublicKey, data, sig),
			"truncated": p.Verify(&key.PublicKey, data, sig[:len(sig)-1]),
		} {
			if err != ErrSecurityChecks {
				t.Errorf("%s %s: %v, want ErrSecurityChecks", p.Name(), name, err)
			}
		}
		if _, ok := p.CheckKey(&other.PublicKey); !ok {
			t.Errorf("%s: CheckKey refuses a key of its curve", p.Name())
		}
	}
	k384, _ := ecdsa.GenerateKey(EccNistP384.Curve(), rand.Reader)
	if _, ok := EccNistP256.CheckKey(&k384.PublicKey); ok {
		t.Error("ECC_nistP256 takes a P-384 key")
	}
}
