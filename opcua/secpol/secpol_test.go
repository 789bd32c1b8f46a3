package secpol_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/gopcua/opcua/uapolicy"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/secpol"
)

// key returns the fixed test key of bits.
func key(_ testing.TB, bits int) *rsa.PrivateKey { return testkeys.RSA(bits) }

func nonce(t testing.TB) []byte {
	b := make([]byte, secpol.NonceLength)
	rand.Read(b)
	return b
}

// TestPSHA256Vector checks P_SHA256 against the test vector published for
// the TLS 1.2 PRF (secret, "test label" + seed, 100 bytes).
func TestPSHA256Vector(t *testing.T) {
	secret, _ := hex.DecodeString("9bbe436ba940f017b17652849a71db35")
	seed, _ := hex.DecodeString("a0ba9f936cda311827a6f796ffd5198c")
	want, _ := hex.DecodeString("e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a" +
		"6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab" +
		"4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701" +
		"87347b66")
	got := secpol.PSHA256(secret, append([]byte("test label"), seed...), len(want))
	if !bytes.Equal(got, want) {
		t.Fatalf("P_SHA256 = %x\nwant        %x", got, want)
	}
}

// TestSymmetricWithGopcua secures chunks with the server's side of a token
// and opens them with gopcua's client side, and the other way round: the
// key derivation, HMACs and AES-CBC agree with an independent stack.
func TestSymmetricWithGopcua(t *testing.T) {
	for _, p := range secpol.All {
		t.Run(p.Name(), func(t *testing.T) {
			cn, sn := nonce(t), nonce(t)
			// The server sends with DeriveKeys(clientNonce, serverNonce).
			srv, err := p.NewSymmetric(p.DeriveKeys(cn, sn), p.DeriveKeys(sn, cn), true)
			if err != nil {
				t.Fatal(err)
			}
			cli, err := uapolicy.Symmetric(p.URI(), cn, sn)
			if err != nil {
				t.Fatal(err)
			}
			plain := bytes.Repeat([]byte("0123456789abcdef"), 5)

			// Server → client.
			sig, _ := srv.Sign(nil, plain)
			if err := cli.VerifySignature(plain, sig); err != nil {
				t.Fatalf("gopcua rejects our HMAC: %v", err)
			}
			ct, err := srv.Encrypt(nil, plain)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := cli.Decrypt(ct); err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("gopcua decrypts our chunk to %x, %v", got, err)
			}
			// A second chunk starts from the IV again, as OPC UA wants.
			ct2, _ := srv.Encrypt(nil, plain)
			if !bytes.Equal(ct, ct2) {
				t.Fatal("the second chunk was not encrypted from the token's IV")
			}

			// Client → server.
			csig, err := cli.Signature(plain)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Verify(plain, csig); err != nil {
				t.Fatalf("we reject gopcua's HMAC: %v", err)
			}
			cct, err := cli.Encrypt(plain)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := srv.Decrypt(cct); err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("we decrypt gopcua's chunk to %x, %v", got, err)
			}
			csig[0] ^= 1
			if err := srv.Verify(plain, csig); err != secpol.ErrSecurityChecks {
				t.Fatalf("a flipped signature bit: %v, want ErrSecurityChecks", err)
			}
		})
	}
}

// TestAsymmetricWithGopcua signs and encrypts with gopcua's asymmetric
// algorithms for each policy and key size and checks that we verify and
// decrypt, and the other way round.
func TestAsymmetricWithGopcua(t *testing.T) {
	for _, p := range secpol.All {
		for _, bits := range []int{2048, 3072, 4096} {
			t.Run(fmt.Sprintf("%s/%d", p.Name(), bits), func(t *testing.T) {
				ours := key(t, 2048)
				theirs := key(t, bits)
				cli, err := uapolicy.Asymmetric(p.URI(), theirs, &ours.PublicKey)
				if err != nil {
					t.Fatal(err)
				}
				// gopcua v0.8.0 takes 2 × 64 + 2 bytes of OAEP-SHA256
				// overhead, not 2 × 32 + 2: smaller blocks, still valid
				// OAEP, and our Decrypt takes blocks of any length.
				if got := p.PlainBlockSize(&ours.PublicKey); got != cli.PlaintextBlockSize() && p != secpol.Aes256Sha256RsaPss {
					t.Fatalf("plain block size %d, gopcua %d", got, cli.PlaintextBlockSize())
				}
				msg := bytes.Repeat([]byte{7}, 700) // several blocks
				ct, err := cli.Encrypt(msg)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := p.Decrypt(ours, ct); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("decrypting gopcua's blocks: %v", err)
				}
				sig, err := cli.Signature(msg)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Verify(&theirs.PublicKey, msg, sig); err != nil {
					t.Fatalf("verifying gopcua's signature: %v", err)
				}

				// Ours, checked by gopcua from the other side.
				back, err := uapolicy.Asymmetric(p.URI(), theirs, &ours.PublicKey)
				if err != nil {
					t.Fatal(err)
				}
				sig, err = p.Sign(ours, msg)
				if err != nil {
					t.Fatal(err)
				}
				if err := back.VerifySignature(msg, sig); err != nil {
					t.Fatalf("gopcua rejects our signature: %v", err)
				}
				ct, err = p.Encrypt(nil, &theirs.PublicKey, msg)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := back.Decrypt(ct); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("gopcua decrypts our blocks to %d bytes, %v", len(got), err)
				}
				ct[len(ct)-1] ^= 1
				if _, err := p.Decrypt(theirs, ct); err != secpol.ErrSecurityChecks {
					t.Fatalf("a flipped ciphertext bit: %v, want ErrSecurityChecks", err)
				}
			})
		}
	}
}

// TestSymmetricAllocs: a token's chunk crypto allocates nothing.
func TestSymmetricAllocs(t *testing.T) {
	p := secpol.Basic256Sha256
	cn, sn := nonce(t), nonce(t)
	s, err := p.NewSymmetric(p.DeriveKeys(cn, sn), p.DeriveKeys(sn, cn), true)
	if err != nil {
		t.Fatal(err)
	}
	peer, _ := p.NewSymmetric(p.DeriveKeys(sn, cn), p.DeriveKeys(cn, sn), true)
	plain := make([]byte, 1024)
	buf := make([]byte, 0, 2048)
	sig := make([]byte, 0, 32)
	n := testing.AllocsPerRun(100, func() {
		ct, _ := peer.Encrypt(buf[:0], plain)
		sg, _ := peer.Sign(sig[:0], ct)
		if err := s.Verify(ct, sg); err != nil {
			t.Fatal(err)
		}
		s.Decrypt(ct)
		s.Sign(sig[:0], ct)
	})
	if n != 0 {
		t.Fatalf("%v allocations per chunk, want 0", n)
	}
}
