package uasc

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// toyCrypto is a stand-in for a real policy's primitives, to exercise the
// framing's padding, signature and encryption paths: a SHA-256
// "signature" and an XOR "cipher" whose cipher blocks are larger than its
// plain blocks, as RSA's are. It is not security.
type toyCrypto struct {
	pb, cb int
	extra  bool
}

func (c toyCrypto) SignatureSize() int            { return sha256.Size }
func (c toyCrypto) RemoteSignatureSize() int      { return sha256.Size }
func (c toyCrypto) EncryptBlockSizes() (int, int) { return c.pb, c.cb }
func (c toyCrypto) DecryptBlockSizes() (int, int) { return c.pb, c.cb }
func (c toyCrypto) ExtraPadding() (bool, bool)    { return c.extra, c.extra }
func (c toyCrypto) Sign(dst, data []byte) ([]byte, error) {
	s := sha256.Sum256(data)
	return append(dst, s[:]...), nil
}
func (c toyCrypto) Verify(data, sig []byte) error {
	s := sha256.Sum256(data)
	if !bytes.Equal(s[:], sig) {
		return errors.New("bad signature")
	}
	return nil
}

// Encrypt turns each plain block into a cipher block: the XORed bytes
// followed by cb-pb zero bytes.
func (c toyCrypto) Encrypt(dst, plain []byte) ([]byte, error) {
	for i := 0; i < len(plain); i += c.pb {
		for _, v := range plain[i : i+c.pb] {
			dst = append(dst, v^0x5A)
		}
		dst = append(dst, make([]byte, c.cb-c.pb)...)
	}
	return dst, nil
}

func (c toyCrypto) Decrypt(b []byte) ([]byte, error) {
	n := 0
	for i := 0; i < len(b); i += c.cb {
		for j := range c.pb {
			b[n] = b[i+j] ^ 0x5A
			n++
		}
	}
	return b[:n], nil
}

func TestSealOpenWithPolicySteps(t *testing.T) {
	for _, cr := range []ChunkCrypto{
		cryptoNone{},
		toyCrypto{pb: 16, cb: 16},
		toyCrypto{pb: 190, cb: 256},              // RSA-2048 OAEP-like
		toyCrypto{pb: 446, cb: 512, extra: true}, // a key above 2048 bits
	} {
		maxBody := maxBodySize(8192, symHdrLen, cr)
		for _, n := range []int{0, 1, 15, 16, 17, 100, 189, 190, 1000, maxBody} {
			var scratch []byte
			b := appendHeader(nil, "MSG", 'F')
			b = ua.AppendUint32(b, 7)
			b = ua.AppendUint32(b, 1)
			b = ua.AppendUint32(b, 42) // sequence number
			b = ua.AppendUint32(b, 9)  // request id
			body := bytes.Repeat([]byte{0xA5}, n)
			b = append(b, body...)
			b, err := sealChunk(b, 0, symHdrLen, cr, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			if size := int(b[4]) | int(b[5])<<8 | int(b[6])<<16; size != len(b) {
				t.Fatalf("%T %d: MessageSize %d, chunk %d bytes", cr, n, size, len(b))
			}
			if len(b) > 8192 {
				t.Fatalf("%T: body of maxBodySize %d makes a %d-byte chunk", cr, n, len(b))
			}
			plain, err := openChunk(b, symHdrLen, cr, 0)
			if err != nil {
				t.Fatalf("%T %d: %v", cr, n, err)
			}
			if !bytes.Equal(plain[seqHdrLen:], body) || plain[0] != 42 {
				t.Fatalf("%T %d: round trip changed the plaintext", cr, n)
			}
		}
		if _, ok := cr.(toyCrypto); !ok {
			continue
		}
		// A flipped bit anywhere fails the security checks.
		var scratch []byte
		b := append(appendHeader(nil, "MSG", 'F'), make([]byte, 8+8+50)...)
		b, _ = sealChunk(b, 0, symHdrLen, cr, &scratch)
		for i := symHdrLen; i < len(b); i += 7 {
			c := bytes.Clone(b)
			c[i] ^= 1
			if _, err := openChunk(c, symHdrLen, cr, 0); err != status.BadSecurityChecksFailed {
				// Bits of the toy cipher's zero filler are not covered.
				pb, cb := cr.DecryptBlockSizes()
				if (i-symHdrLen)%cb >= pb {
					continue
				}
				t.Fatalf("%T: bit flipped at %d: %v", cr, i, err)
			}
		}
	}
}
