package secpol

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
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
			if bytes.Equal(sLocal.Encrypting, sRemote.Encrypting) || (len(sLocal.Signing) > 0 && bytes.Equal(sLocal.Signing, sRemote.Signing)) {
				t.Error("both directions have the same keys")
			}
			sl, el, il := p.keyLengths()
			if len(sLocal.Signing) != sl || len(sLocal.Encrypting) != el || len(sLocal.IV) != il {
				t.Errorf("key lengths %d/%d/%d, want %d/%d/%d", len(sLocal.Signing), len(sLocal.Encrypting), len(sLocal.IV), sl, el, il)
			}
			if p.AEAD() {
				testAEADAgree(t, p, sLocal, sRemote, cLocal, cRemote)
				return
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

// TestECCSignatures: ECDSA r‖s of the curve's size, or Ed25519; a
// flipped bit, a truncated signature or another key fail; a key of
// another policy neither signs nor is taken.
func TestECCSignatures(t *testing.T) {
	for _, p := range AllECC {
		key, other := genKey(t, p), genKey(t, p)
		data := []byte("OpenSecureChannel")
		sig, err := p.Sign(key, data)
		if err != nil || len(sig) != p.SignatureSize() {
			t.Fatalf("%s: %v, %d bytes", p.Name(), err, len(sig))
		}
		if err := p.Verify(key.Public(), data, sig); err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		flipped := bytes.Clone(sig)
		flipped[3] ^= 0x10
		for name, err := range map[string]error{
			"flipped":   p.Verify(key.Public(), data, flipped),
			"other key": p.Verify(other.Public(), data, sig),
			"truncated": p.Verify(key.Public(), data, sig[:len(sig)-1]),
		} {
			if err != ErrSecurityChecks {
				t.Errorf("%s %s: %v, want ErrSecurityChecks", p.Name(), name, err)
			}
		}
		if _, ok := p.CheckKey(other.Public()); !ok {
			t.Errorf("%s: CheckKey refuses a key of its own", p.Name())
		}
		for _, q := range AllECC {
			if q.certType == p.certType {
				continue
			}
			if _, ok := q.CheckKey(key.Public()); ok {
				t.Errorf("%s takes a key of %s", q.Name(), p.Name())
			}
			if _, err := q.Sign(key, data); err != ErrSecurityChecks {
				t.Errorf("%s signs with a key of %s: %v", q.Name(), p.Name(), err)
			}
		}
	}
}

func genKey(t *testing.T, p *ECC) crypto.Signer {
	if p.Curve() == nil {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k, err := ecdsa.GenerateKey(p.Curve(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestX25519LowOrder: an X25519 nonce of a low-order point (the shared
// secret would be zero) is refused.
func TestX25519LowOrder(t *testing.T) {
	k, n, _ := EccCurve25519.NewEphemeral()
	if _, _, err := EccCurve25519.DeriveKeys(k, n, make([]byte, 32), true); err != ErrSecurityChecks {
		t.Fatalf("a zero X25519 nonce: %v, want ErrSecurityChecks", err)
	}
}

// testAEADAgree: a chunk the server seals (both modes), the client opens
// with the sequence number before it; with another one, or damaged, it
// fails.
func testAEADAgree(t *testing.T, p *ECC, sLocal, sRemote, cLocal, cRemote Keys) {
	for _, enc := range []bool{false, true} {
		srv, err := p.NewAEAD(sLocal, sRemote, enc)
		if err != nil {
			t.Fatal(err)
		}
		cli, _ := p.NewAEAD(cLocal, cRemote, enc)
		body := []byte("a ChaCha20-Poly1305 chunk")
		chunk := []byte("MSGF\x00\x00\x00\x00\x07\x00\x00\x00\x02\x00\x00\x00") // channel 7, token 2
		chunk = append(chunk, 5, 0, 0, 0, 9, 0, 0, 0)                           // sequence 5, request 9
		chunk = append(chunk, body...)
		sealed, err := srv.Seal(bytes.Clone(chunk), 0)
		if err != nil || len(sealed) != len(chunk)+16 || int(binary.LittleEndian.Uint32(sealed[4:])) != len(sealed) {
			t.Fatalf("encrypt %v: sealed %d bytes, size field %d, %v", enc, len(sealed), binary.LittleEndian.Uint32(sealed[4:]), err)
		}
		if enc == bytes.Contains(sealed, body) {
			t.Fatalf("encrypt %v: the body is in the clear: %v", enc, !enc)
		}
		plain, err := cli.Open(bytes.Clone(sealed), 4)
		if err != nil || !bytes.Equal(plain[8:], body) {
			t.Fatalf("encrypt %v: the client does not open the server's chunk: %v", enc, err)
		}
		if _, err := cli.Open(bytes.Clone(sealed), 5); err != ErrSecurityChecks {
			t.Fatalf("encrypt %v: opened with the wrong previous sequence number: %v", enc, err)
		}
		bad := bytes.Clone(sealed)
		bad[20] ^= 1
		if _, err := cli.Open(bad, 4); err != ErrSecurityChecks {
			t.Fatalf("encrypt %v: a damaged chunk opened: %v", enc, err)
		}
		bad = bytes.Clone(sealed)
		bad[12] ^= 1 // the token id: authenticated, and in the nonce
		if _, err := cli.Open(bad, 4); err != ErrSecurityChecks {
			t.Fatalf("encrypt %v: a chunk with another token id opened: %v", enc, err)
		}
	}
}

// TestEccEncryptedSecret: a secret sealed for our ephemeral key opens
// with it, on every ECC policy; a flipped bit anywhere, another signer,
// or another ephemeral key of ours is ErrSecurityChecks.
func TestEccEncryptedSecret(t *testing.T) {
	for _, p := range AllECC {
		t.Run(p.Name(), func(t *testing.T) {
			ours, ourPub, _ := p.NewEphemeral()
			client := genKey(t, p)
			nonce := bytes.Repeat([]byte{0x4E}, 32)
			b, err := p.SealEccSecret([]byte("client certificate"), client, ourPub, nonce, []byte("pässwörd"), 133000000000000000)
			if err != nil {
				t.Fatal(err)
			}
			if !IsEccEncryptedSecret(b) || IsEncryptedSecret(b) {
				t.Fatal("not recognised as an EccEncryptedSecret")
			}
			n, s, err := p.OpenEccSecret(ours, client.Public(), b)
			if err != nil || !bytes.Equal(n, nonce) || string(s) != "pässwörd" {
				t.Fatalf("open: %q %q %v", n, s, err)
			}
			for i := 0; i < len(b); i += 7 {
				bad := bytes.Clone(b)
				bad[i] ^= 0x20
				if _, _, err := p.OpenEccSecret(ours, client.Public(), bad); err != ErrSecurityChecks {
					t.Fatalf("byte %d flipped: %v", i, err)
				}
			}
			if _, _, err := p.OpenEccSecret(ours, genKey(t, p).Public(), b); err != ErrSecurityChecks {
				t.Fatalf("another signer: %v", err)
			}
			other, _, _ := p.NewEphemeral()
			if _, _, err := p.OpenEccSecret(other, client.Public(), b); err != ErrSecurityChecks {
				t.Fatalf("another ephemeral key of ours: %v", err)
			}
		})
	}
}
