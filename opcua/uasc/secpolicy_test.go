package uasc

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// A secured hand-driven client: the test client's chunks, signed and
// encrypted with the client's side of the keys, so that tests can replay,
// reorder and damage them. (The framing it uses is ours; that it agrees
// with an independent stack is TestGopcuaClientSecure's business.)

type secClient struct {
	*testClient
	p       *secpol.Policy // an RSA policy, or
	ecc     *secpol.ECC    // an ECC one
	eph     *ecdh.PrivateKey
	mode    ua.MessageSecurityMode
	cert    []byte
	srvCert []byte
	asym    ChunkCrypto // own: the client's key, peer: the server's
	sym     ChunkCrypto
	srvSeq  uint32 // the sequence number of the server's last chunk
	ikm     []byte // the enhanced policies' IKM of the last token
	scratch []byte
}

// testPol is an RSA or an ECC policy of these tests.
type testPol struct {
	rsa *secpol.Policy
	ecc *secpol.ECC
}

func (p testPol) Name() string {
	if p.ecc != nil {
		return p.ecc.Name()
	}
	return p.rsa.Name()
}

// allPols are the RSA and the ECC policies.
func allPols() []testPol {
	var out []testPol
	for _, p := range secpol.All {
		out = append(out, testPol{rsa: p})
	}
	for _, p := range secpol.AllECC {
		out = append(out, testPol{ecc: p})
	}
	return out
}

func (c *secClient) uri() string {
	if c.ecc != nil {
		return c.ecc.URI()
	}
	return c.p.URI()
}

// newNonce returns a client nonce: an ephemeral key's under ECC (kept
// for derive), random bytes else.
func (c *secClient) newNonce() []byte {
	if c.ecc != nil {
		k, n, err := c.ecc.NewEphemeral()
		if err != nil {
			c.t.Fatal(err)
		}
		c.eph = k
		return n
	}
	cn := make([]byte, secpol.NonceLength)
	rand.Read(cn)
	return cn
}

// derive returns the crypto of the token from the server nonce sn and
// the client nonce cn.
func (c *secClient) derive(sn, cn []byte) ChunkCrypto {
	c.t.Helper()
	enc := c.mode == ua.MessageSecurityModeSignAndEncrypt
	if c.ecc != nil {
		if len(sn) != c.ecc.NonceLength() {
			c.t.Fatalf("server nonce of %d bytes", len(sn))
		}
		local, remote, ikm, err := c.ecc.DeriveKeysChained(c.eph, cn, sn, false, c.ikm)
		if err != nil {
			c.t.Fatal(err)
		}
		c.ikm = ikm
		if c.ecc.AEAD() {
			a, err := c.ecc.NewAEAD(local, remote, enc)
			if err != nil {
				c.t.Fatal(err)
			}
			return AEADChunkCrypto(a)
		}
		s, err := c.ecc.NewSymmetric(local, remote, enc)
		if err != nil {
			c.t.Fatal(err)
		}
		return s
	}
	if len(sn) != secpol.NonceLength {
		c.t.Fatalf("server nonce of %d bytes", len(sn))
	}
	s, err := c.p.NewSymmetric(c.p.DeriveKeys(sn, cn), c.p.DeriveKeys(cn, sn), enc)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// secServerECC returns a Config offering the ECC policy p with a server
// certificate of its curve, and that certificate.
func secServerECC(t testing.TB, p *secpol.ECC, check CertificateCheck) (*Config, []byte) {
	der, key, err := pki.NewECCertificate(pki.Template{ApplicationURI: "urn:edged:test:server"}, p.Curve())
	if err != nil {
		t.Fatal(err)
	}
	own, err := NewECCredentials(der, key)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Policies: []SecurityPolicy{NewECCPolicy(p, func() *Credentials { return own }, check)}}, der
}

// newSecClientECC makes a client of the ECC policy p with a key of its
// curve for the server's certificate srvCert.
func newSecClientECC(tc *testClient, p *secpol.ECC, mode ua.MessageSecurityMode, srvCert []byte) *secClient {
	cert, key, err := pki.NewECCertificate(pki.Template{ApplicationURI: "urn:edged:test:client"}, p.Curve())
	if err != nil {
		tc.t.Fatal(err)
	}
	sc, err := x509.ParseCertificate(srvCert)
	if err != nil {
		tc.t.Fatal(err)
	}
	return &secClient{testClient: tc, ecc: p, mode: mode, cert: cert, srvCert: srvCert,
		asym: &eccAsym{p: p, own: key, peer: sc.PublicKey, client: true}}
}

// openPol starts a server of pol and a client of it, Hello and the
// secured OpenSecureChannel done.
func openPol(t *testing.T, pol testPol, mode ua.MessageSecurityMode) (*secClient, net.Conn, *Channel) {
	var cfg *Config
	var srvCert []byte
	if pol.ecc != nil {
		cfg, srvCert = secServerECC(t, pol.ecc, nil)
	} else {
		cfg, srvCert = secServer(t, pol.rsa, nil)
	}
	cc, res := serveTCP(t, cfg)
	var c *secClient
	if pol.ecc != nil {
		c = newSecClientECC(newTestClient(t, cc), pol.ecc, mode, srvCert)
	} else {
		c = newSecClient(newTestClient(t, cc), pol.rsa, mode, 2048, srvCert)
	}
	c.open()
	r := <-res
	if r.err != nil {
		t.Fatalf("Open: %v", r.err)
	}
	t.Cleanup(func() { r.ch.Close(status.Good, "") })
	return c, cc, r.ch
}

// secServer returns a Config offering p with a 2048-bit server key, and
// the server's certificate. check, when set, is the certificate check.
func secServer(t testing.TB, p *secpol.Policy, check CertificateCheck) (*Config, []byte) {
	der, key := testCert(t, 2048)
	own, err := NewCredentials(der, key)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Policies: []SecurityPolicy{NewSecurityPolicy(p, func() *Credentials { return own }, check)}}, der
}

// newSecClient makes a client with a key of bits for the server's
// certificate srvCert.
func newSecClient(tc *testClient, p *secpol.Policy, mode ua.MessageSecurityMode, bits int, srvCert []byte) *secClient {
	cert, key := testCert(tc.t, bits)
	sc, err := x509.ParseCertificate(srvCert)
	if err != nil {
		tc.t.Fatal(err)
	}
	return &secClient{testClient: tc, p: p, mode: mode, cert: cert, srvCert: srvCert,
		asym: &asymCrypto{p: p, own: key, peer: sc.PublicKey.(*rsa.PublicKey)}}
}

// opn builds a signed and encrypted OpenSecureChannel request.
func (c *secClient) opn(rt ua.SecurityTokenRequestType, clientNonce []byte) []byte {
	return c.opnChunks(rt, clientNonce, 1)[0]
}

// opnChunks builds a signed and encrypted OpenSecureChannel request in n
// chunks, each with the asymmetric security header.
func (c *secClient) opnChunks(rt ua.SecurityTokenRequestType, clientNonce []byte, n int) [][]byte {
	c.t.Helper()
	body := ua.AppendMessage(nil, &ua.OpenSecureChannelRequest{
		RequestType:       rt,
		SecurityMode:      c.mode,
		ClientNonce:       clientNonce,
		RequestedLifetime: 60000,
	})
	var out [][]byte
	for i := range n {
		part := body[i*len(body)/n : (i+1)*len(body)/n]
		ct := byte('C')
		if i == n-1 {
			ct = 'F'
		}
		out = append(out, c.opnChunk(ct, 1, part))
	}
	return out
}

// opnChunk seals one OPN chunk of type ct carrying body.
func (c *secClient) opnChunk(ct byte, reqID uint32, body []byte) []byte {
	c.t.Helper()
	c.seq++
	b := appendHeader(nil, "OPN", ct)
	b = ua.AppendUint32(b, c.chanID)
	b = ua.AppendString(b, c.uri())
	b = ua.AppendByteString(b, c.cert)
	b = ua.AppendByteString(b, secpol.Thumbprint(c.srvCert))
	secHdr := len(b)
	b = ua.AppendUint32(b, c.seq)
	b = ua.AppendUint32(b, reqID)
	b = append(b, body...)
	b, err := sealChunk(b, 0, secHdr, c.asym, &c.scratch)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// open runs Hello and a secured OpenSecureChannel and derives the keys.
func (c *secClient) open() {
	c.t.Helper()
	c.helloAck(defaultHello())
	cn := c.newNonce()
	c.write(c.opn(ua.SecurityTokenRequestTypeIssue, cn))
	c.opened(cn)
}

// opened reads the OpenSecureChannel response, in one chunk or more,
// checks it and derives the keys from it and the client nonce cn. It
// returns how many chunks the response took.
func (c *secClient) opened(cn []byte) int {
	c.t.Helper()
	var body []byte
	chunks := 0
	for {
		b := c.mustChunk("OPN")
		chunks++
		d := ua.NewDecoder(b[chanHdrLen:])
		if uri := d.ReadString(); uri != c.uri() {
			c.t.Fatalf("policy %q", uri)
		}
		if cert := d.ReadByteString(nil); !bytes.Equal(cert, c.srvCert) {
			c.t.Fatal("the response's sender certificate is not the server's")
		}
		if th := d.ReadByteString(nil); !bytes.Equal(th, secpol.Thumbprint(c.cert)) {
			c.t.Fatal("the response's receiver thumbprint is not our certificate's")
		}
		plain, err := openChunk(b, chanHdrLen+d.Offset(), c.asym, 0)
		if err != nil {
			c.t.Fatalf("the OpenSecureChannel response fails our checks: %v", err)
		}
		c.srvSeq = binary.LittleEndian.Uint32(plain)
		body = append(body, plain[seqHdrLen:]...)
		if b[3] == 'F' {
			break
		}
		if b[3] != 'C' {
			c.t.Fatalf("OPN chunk type %q", b[3])
		}
	}
	var resp ua.OpenSecureChannelResponse
	if err := ua.DecodeMessageInto(ua.NewDecoder(body), &resp); err != nil {
		c.t.Fatal(err)
	}
	c.chanID, c.tokID = resp.SecurityToken.ChannelID, resp.SecurityToken.TokenID
	c.sym = c.derive(resp.ServerNonce, cn)
	return chunks
}

// msg builds a sealed MSG chunk with sequence number seq.
func (c *secClient) msg(seq, reqID uint32, body []byte) []byte {
	return c.chunk("MSG", 'F', seq, reqID, body)
}

// chunk builds a sealed chunk of type typ and chunk type ct.
func (c *secClient) chunk(typ string, ct byte, seq, reqID uint32, body []byte) []byte {
	c.t.Helper()
	b := appendHeader(nil, typ, ct)
	b = ua.AppendUint32(b, c.chanID)
	b = ua.AppendUint32(b, c.tokID)
	b = ua.AppendUint32(b, seq)
	b = ua.AppendUint32(b, reqID)
	b = append(b, body...)
	b, err := sealChunk(b, 0, symHdrLen, c.sym, &c.scratch)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// openMSG opens a symmetric chunk of the server's and notes its sequence
// number (the AEAD policies' nonces count on it).
func (c *secClient) openMSG(b []byte) ([]byte, error) {
	plain, err := openChunk(b, symHdrLen, c.sym, c.srvSeq)
	if err == nil {
		c.srvSeq = binary.LittleEndian.Uint32(plain)
	}
	return plain, err
}

// echoed sends body and checks that the echo server answers it.
func (c *secClient) echoed(body []byte) {
	c.t.Helper()
	c.seq++
	c.write(c.msg(c.seq, c.seq, body))
	b := c.mustChunk("MSG")
	plain, err := c.openMSG(b)
	if err != nil {
		c.t.Fatalf("the response fails our checks: %v", err)
	}
	if !bytes.Equal(plain[seqHdrLen:], body) {
		c.t.Fatal("the echo differs")
	}
}

var modes = []ua.MessageSecurityMode{ua.MessageSecurityModeSign, ua.MessageSecurityModeSignAndEncrypt}

// secOpen opens a secured channel to an echo server.
func secOpen(t *testing.T, p testPol, mode ua.MessageSecurityMode) (*secClient, <-chan error) {
	c, _, ch := openPol(t, p, mode)
	return c, echo(ch)
}

// TestSecuredChunkDamaged: a bit flipped anywhere in a secured chunk
// after the headers (ciphertext, padding, signature), or a padding that
// is wrong under a valid signature, gets the one Bad_SecurityChecksFailed
// and closes the channel.
func TestSecuredChunkDamaged(t *testing.T) {
	for _, p := range allPols() {
		for _, mode := range modes {
			damages := []string{"body", "last byte", "signature start"}
			if mode == ua.MessageSecurityModeSignAndEncrypt && (p.ecc == nil || !p.ecc.AEAD()) {
				damages = append(damages, "bad padding") // Sign and the AEAD policies have none
			}
			for _, where := range damages {
				t.Run(p.Name()+"/"+mode.String()+"/"+where, func(t *testing.T) {
					c, served := secOpen(t, p, mode)
					c.echoed([]byte("a request before the damage"))
					c.seq++
					var b []byte
					if where == "bad padding" {
						b = c.badPadding(c.seq, []byte("0123456789"))
					} else {
						b = c.msg(c.seq, c.seq, bytes.Repeat([]byte{0xAB}, 100))
						i := map[string]int{"body": symHdrLen + 20, "last byte": len(b) - 1, "signature start": len(b) - c.sym.SignatureSize()}[where]
						b[i] ^= 0x01
					}
					c.write(b)
					c.expectError(status.BadSecurityChecksFailed)
					wantStatus(t, <-served, status.BadSecurityChecksFailed)
				})
			}
		}
	}
}

// badPadding seals a chunk whose padding bytes disagree with its padding
// size, signed and encrypted correctly.
func (c *secClient) badPadding(seq uint32, body []byte) []byte {
	b := appendHeader(nil, "MSG", 'F')
	b = ua.AppendUint32(b, c.chanID)
	b = ua.AppendUint32(b, c.tokID)
	b = ua.AppendUint32(b, seq)
	b = ua.AppendUint32(b, seq)
	b = append(b, body...)
	pb, _ := c.sym.EncryptBlockSizes()
	n := len(b) - symHdrLen + c.sym.SignatureSize() + 1
	pad := (pb - n%pb) % pb
	for i := 0; i < pad; i++ {
		b = append(b, byte(pad+1)) // wrong: each byte must be pad
	}
	b = append(b, byte(pad))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)+c.sym.SignatureSize()))
	b, _ = c.sym.Sign(b, b)
	plain := append([]byte(nil), b[symHdrLen:]...)
	out, _ := c.sym.Encrypt(b[:symHdrLen], plain)
	return out
}

// TestSecuredReplay: a chunk sent again, or one sent ahead of its
// predecessor, passes the signature and fails the sequence number: the
// channel closes. Under an AEAD policy the chunk's nonce holds the
// sequence number before it, so such a chunk fails the tag already:
// Bad_SecurityChecksFailed.
func TestSecuredReplay(t *testing.T) {
	for _, p := range allPols() {
		want := status.BadSequenceNumberInvalid
		if p.ecc != nil && p.ecc.AEAD() {
			want = status.BadSecurityChecksFailed
		}
		for _, mode := range modes {
			t.Run(p.Name()+"/"+mode.String()+"/replay", func(t *testing.T) {
				c, served := secOpen(t, p, mode)
				c.seq++
				b := c.msg(c.seq, 7, []byte("once"))
				c.write(b)
				c.mustChunk("MSG")
				c.write(b)
				c.expectError(want)
				wantStatus(t, <-served, want)
			})
			t.Run(p.Name()+"/"+mode.String()+"/reorder", func(t *testing.T) {
				c, served := secOpen(t, p, mode)
				c.echoed([]byte("first"))
				later := c.msg(c.seq+2, 9, []byte("third"))
				c.write(later)
				c.expectError(want)
				wantStatus(t, <-served, want)
			})
		}
	}
}

// TestSecuredHandshakeRejected: what a server refuses in the asymmetric
// header and the OpenSecureChannel request, with its status code.
func TestSecuredHandshakeRejected(t *testing.T) {
	p := secpol.Basic256Sha256
	mode := ua.MessageSecurityModeSignAndEncrypt
	nonce := bytes.Repeat([]byte{1}, secpol.NonceLength)
	cases := []struct {
		name  string
		check CertificateCheck
		build func(c *secClient) []byte
		want  ua.StatusCode
	}{
		{"untrusted", func(*x509.Certificate, []*x509.Certificate) error { return status.BadCertificateUntrusted },
			func(c *secClient) []byte { return c.opn(ua.SecurityTokenRequestTypeIssue, nonce) }, status.BadCertificateUntrusted},
		{"wrong thumbprint", nil, func(c *secClient) []byte {
			other, _ := testCert(t, 3072)
			c.srvCert = other
			return c.opn(ua.SecurityTokenRequestTypeIssue, nonce)
		}, status.BadCertificateInvalid},
		{"no certificate", nil, func(c *secClient) []byte {
			c.cert = nil
			return c.opn(ua.SecurityTokenRequestTypeIssue, nonce)
		}, status.BadCertificateInvalid},
		{"garbage certificate", nil, func(c *secClient) []byte {
			c.cert = []byte("not DER")
			return c.opn(ua.SecurityTokenRequestTypeIssue, nonce)
		}, status.BadCertificateInvalid},
		{"1024-bit key", nil, func(c *secClient) []byte {
			der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: "urn:small", Bits: 1024})
			if err != nil {
				t.Fatal(err)
			}
			c.cert = der
			c.asym = &asymCrypto{p: p, own: key, peer: c.asym.(*asymCrypto).peer}
			return c.opn(ua.SecurityTokenRequestTypeIssue, nonce)
		}, status.BadCertificatePolicyCheckFailed},
		{"damaged", nil, func(c *secClient) []byte {
			b := c.opn(ua.SecurityTokenRequestTypeIssue, nonce)
			b[len(b)-3] ^= 0x80
			return b
		}, status.BadSecurityChecksFailed},
		{"short nonce", nil, func(c *secClient) []byte {
			return c.opn(ua.SecurityTokenRequestTypeIssue, nonce[:16])
		}, status.BadNonceInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, srvCert := secServer(t, p, tc.check)
			cc, res := serveTCP(t, cfg)
			c := newSecClient(newTestClient(t, cc), p, mode, 2048, srvCert)
			c.helloAck(defaultHello())
			c.write(tc.build(c))
			c.expectError(tc.want)
			wantStatus(t, openErr(t, res), tc.want)
		})
	}
}

// TestSecuredRenewal: a renewal with fresh nonces works, and the old
// token stays valid until the client uses the new one.
func TestSecuredRenewal(t *testing.T) {
	for _, p := range allPols() {
		t.Run(p.Name(), func(t *testing.T) {
			c, _ := secOpen(t, p, ua.MessageSecurityModeSignAndEncrypt)
			c.echoed([]byte("before"))
			oldSym, oldTok := c.sym, c.tokID
			cn := c.newNonce()
			c.write(c.opn(ua.SecurityTokenRequestTypeRenew, cn))
			b := c.mustChunk("OPN")
			d := ua.NewDecoder(b[chanHdrLen:])
			d.ReadString()
			d.ReadByteString(nil)
			d.ReadByteString(nil)
			plain, err := openChunk(b, chanHdrLen+d.Offset(), c.asym, 0)
			if err != nil {
				t.Fatal(err)
			}
			c.srvSeq = binary.LittleEndian.Uint32(plain)
			var resp ua.OpenSecureChannelResponse
			if err := ua.DecodeMessageInto(ua.NewDecoder(plain[seqHdrLen:]), &resp); err != nil {
				t.Fatal(err)
			}
			newSym := c.derive(resp.ServerNonce, cn)
			// Still the old token: answered under it.
			c.echoed([]byte("old token"))
			// The new one: answered under it from now on.
			c.sym, c.tokID = newSym, resp.SecurityToken.TokenID
			if c.tokID == oldTok {
				t.Fatal("the renewal kept the token id")
			}
			c.echoed([]byte("new token"))
			// The old one is gone now.
			c.sym, c.tokID = oldSym, oldTok
			c.seq++
			c.write(c.msg(c.seq, 1, []byte("old again")))
			c.expectError(status.BadSecureChannelTokenUnknown)
		})
	}
}

// TestZeroAllocsSecure: under each policy, in Sign and SignAndEncrypt, a
// single-chunk request and its response cost the channel no allocation:
// the token's HMACs and block modes are reused, and so are the buffers.
// The client's chunks are sealed before the count; the client checks
// each response's signature (and decrypts it) inside it.
func TestZeroAllocsSecure(t *testing.T) {
	for _, p := range allPols() {
		for _, mode := range modes {
			t.Run(p.Name()+"/"+mode.String(), func(t *testing.T) {
				c, cc, ch := openPol(t, p, mode)
				const runs = 200
				body := smallRequest()
				chunks := make([][]byte, runs+20)
				for i := range chunks {
					c.seq++
					chunks[i] = c.msg(c.seq, c.seq, body)
				}
				resp := make([]byte, 0, 1024)
				hdr := make([]byte, hdrLen)
				next := 0
				step := func() {
					if _, err := cc.Write(chunks[next]); err != nil {
						t.Fatal(err)
					}
					next++
					req, err := ch.ReadRequest()
					if err != nil {
						t.Fatal(err)
					}
					if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
						t.Fatal(err)
					}
					if _, err := io.ReadFull(cc, hdr); err != nil {
						t.Fatal(err)
					}
					n := int(binary.LittleEndian.Uint32(hdr[4:]))
					resp = append(resp[:0], hdr...)
					resp = resp[:n]
					if _, err := io.ReadFull(cc, resp[hdrLen:]); err != nil {
						t.Fatal(err)
					}
					plain, err := c.openMSG(resp)
					if err != nil || !bytes.Equal(plain[seqHdrLen:], body) {
						t.Fatalf("response: %v", err)
					}
				}
				for range 10 {
					step()
				}
				if n := testing.AllocsPerRun(runs, step); n > 0 {
					t.Fatalf("%.1f allocations per secured round trip", n)
				}
			})
		}
	}
}
