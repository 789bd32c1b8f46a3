package uasc

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"errors"
	"io"
	"testing"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// FuzzSecureChannel feeds a Basic256Sha256 SignAndEncrypt channel, opened
// with fixed nonces, whatever follows the handshake. The seeds are real
// chunks sealed with the client's keys of that channel: single and
// multi-chunk requests, an abort, a renewal and a close; the fuzzer's
// mutations of them are damaged ciphertext, signatures, padding, headers
// and sequence numbers. The channel must never panic, must hand out only
// requests that passed the checks, and its errors must be sticky and
// ua.StatusCodes (Bad_SecurityChecksFailed for anything that does not
// verify).
func FuzzSecureChannel(f *testing.F) { fuzzSecure(f, testPol{rsa: secpol.Basic256Sha256}) }

// fuzzSecure is a FuzzSecureChannel of pol.
func fuzzSecure(f *testing.F, pol testPol) {
	cfg, hs, seeds, allowed := secureRigOf(f, pol)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		serveSecure(t, cfg, hs, data, allowed)
	})
}

// FuzzSecureChannelECC is FuzzSecureChannel over ECC_nistP256
// SignAndEncrypt, opened with fixed ephemeral keys on both sides: its
// seeds are real ECC chunks (HMAC-SHA256, AES-128-CBC) and a renewal
// whose OpenSecureChannel is ECDSA-signed.
func FuzzSecureChannelECC(f *testing.F) { fuzzSecure(f, testPol{ecc: secpol.EccNistP256}) }

// FuzzSecureChannelAEAD is FuzzSecureChannel over ECC_curve25519
// SignAndEncrypt: ChaCha20-Poly1305 chunks, whose nonces hold the token
// id and the sequence number before, and an Ed25519-signed renewal.
func FuzzSecureChannelAEAD(f *testing.F) { fuzzSecure(f, testPol{ecc: secpol.EccCurve25519}) }

// FuzzSecureChannelEnhanced is FuzzSecureChannel over ECC_nistP256_AesGcm
// SignAndEncrypt: AES-128-GCM chunks of a channel whose first response
// was bound to the request's signature, and a renewal whose keys chain
// the first token's IKM.
func FuzzSecureChannelEnhanced(f *testing.F) { fuzzSecure(f, testPol{ecc: secpol.EccNistP256AesGcm}) }

// TestSecureRigSeeds: the fuzz seeds are accepted as what they are, so the
// fuzzer starts from chunks that pass every check.
func TestSecureRigSeeds(t *testing.T) {
	for _, pol := range []testPol{{rsa: secpol.Basic256Sha256}, {ecc: secpol.EccNistP256}, {ecc: secpol.EccCurve25519}, {ecc: secpol.EccNistP256AesGcm}} {
		cfg, hs, seeds, allowed := secureRigOf(t, pol)
		for i, want := range []int{1, 1, 0, 2, 0, 1} {
			if got := serveSecure(t, cfg, hs, seeds[i], allowed); got != want {
				t.Errorf("%s seed %d: %d requests, want %d", pol.Name(), i, got, want)
			}
		}
	}
}

// fixedEph is an ephemeral key of the curve from a fixed scalar.
func fixedEph(f testing.TB, p *secpol.ECC, b byte) *ecdh.PrivateKey {
	curve := ecdh.P256()
	n := 32
	switch p {
	case secpol.EccNistP384:
		curve, n = ecdh.P384(), 48
	case secpol.EccCurve25519:
		curve = ecdh.X25519()
	}
	k, err := curve.NewPrivateKey(bytes.Repeat([]byte{b}, n))
	if err != nil {
		f.Fatal(err)
	}
	return k
}

// secureRigOf returns the server configuration of a SignAndEncrypt
// channel of pol, the handshake bytes, the seeds and the requests they
// carry.
func secureRigOf(f testing.TB, pol testPol) (*Config, []byte, [][]byte, map[string]bool) {
	var cfg *Config
	var srvCert, cliNonce []byte
	var c *secClient
	mode := ua.MessageSecurityModeSignAndEncrypt
	if pol.ecc != nil {
		srvEph := fixedEph(f, pol.ecc, 0x5E)
		cfg, srvCert = secServerECC(f, pol.ecc, nil)
		cfg.Policies[0].(*eccPolicy).eph = func() *ecdh.PrivateKey { return srvEph }
		c = newSecClientECC(&testClient{t: f}, pol.ecc, mode, srvCert)
		c.eph = fixedEph(f, pol.ecc, 0xC1)
		cliNonce = pol.ecc.EphemeralNonce(c.eph)
	} else {
		srvNonce := bytes.Repeat([]byte{0x5E}, secpol.NonceLength)
		cliNonce = bytes.Repeat([]byte{0xC1}, secpol.NonceLength)
		cfg, srvCert = secServer(f, pol.rsa, nil)
		cfg.Policies[0].(*rsaPolicy).nonce = func() []byte { return srvNonce }
		c = newSecClient(&testClient{t: f}, pol.rsa, mode, 2048, srvCert)
	}
	cfg.NextChannelID = func() uint32 { return 5 }
	cfg.MaxMessageSize, cfg.MaxChunkCount = 1<<16, 8
	cfg.Limits = ua.Limits{MaxStringLength: 256, MaxByteStringLength: 4096, MaxArrayLength: 16}

	h := defaultHello()
	hs := appendHello(nil, &h)
	hs = append(hs, c.opn(ua.SecurityTokenRequestTypeIssue, cliNonce)...)
	c.chanID, c.tokID = 5, 1
	if pol.ecc != nil {
		c.sym = c.derive(pol.ecc.EphemeralNonce(cfg.Policies[0].(*eccPolicy).eph()), cliNonce)
	} else {
		c.sym = c.derive(bytes.Repeat([]byte{0x5E}, secpol.NonceLength), cliNonce)
	}
	seal := c.chunk
	var seeds [][]byte
	add := func(b []byte) { seeds = append(seeds, b) }
	// The OPN of the handshake had sequence number 1.
	add(seal("MSG", 'F', 2, 7, smallRequest()))
	add(append(seal("MSG", 'C', 2, 8, []byte("first half ")), seal("MSG", 'F', 3, 8, []byte("second half"))...))
	add(append(seal("MSG", 'C', 2, 9, []byte("abc")), seal("MSG", 'A', 3, 9, AppendError(nil, status.BadRequestInterrupted, "x")[hdrLen:])...))
	add(append(seal("MSG", 'F', 2, 10, smallRequest()), seal("MSG", 'F', 3, 11, bytes.Repeat([]byte{0xAB}, 1000))...))
	add(seal("CLO", 'F', 2, 12, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{})))
	c.seq = 1
	add(append(c.opn(ua.SecurityTokenRequestTypeRenew, cliNonce), seal("MSG", 'F', 3, 13, smallRequest())...))
	// What the seeds' chunks carry: a mutation can drop, repeat or move
	// whole chunks, but not make a new one that verifies.
	allowed := map[string]bool{
		string(smallRequest()): true, "first half second half": true, string(bytes.Repeat([]byte{0xAB}, 1000)): true,
	}

	return cfg, hs, seeds, allowed
}

// serveSecure opens the channel on hs and data and echoes its requests;
// it returns how many there were.
func serveSecure(t testing.TB, cfg *Config, hs, data []byte, allowed map[string]bool) int {
	in := append(append([]byte(nil), hs...), data...)
	ch, err := Open(context.Background(), &memConn{bytes.NewReader(in)}, cfg)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	for n := 0; n < 100; n++ {
		req, err := ch.ReadRequest()
		if err != nil {
			var code ua.StatusCode
			if !errors.Is(err, ErrClosed) && !errors.As(err, &code) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("error without a status code: %v", err)
			}
			if _, err2 := ch.ReadRequest(); err2 != err {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
			return n
		}
		if !allowed[string(req.Message)] {
			t.Fatalf("a request that no sealed chunk carried: %q", req.Message)
		}
		if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
			t.Fatalf("WriteResponse: %v", err)
		}
	}
	return 100
}

// BenchmarkChannelPathSecure is BenchmarkChannelPath under each policy
// and mode: the server's cost of one single-chunk request (ReadRequest:
// decrypt, verify, unpad) and its response (WriteResponse: pad, sign,
// encrypt), without the network. The client's chunks are sealed in
// batches outside the timer.
func BenchmarkChannelPathSecure(b *testing.B) {
	for _, p := range secpol.All {
		for _, mode := range modes {
			b.Run(p.Name()+"/"+mode.String(), func(b *testing.B) {
				srvNonce := bytes.Repeat([]byte{0x5E}, secpol.NonceLength)
				cliNonce := bytes.Repeat([]byte{0xC1}, secpol.NonceLength)
				cfg, srvCert := secServer(b, p, nil)
				cfg.NextChannelID = func() uint32 { return 5 }
				cfg.Policies[0].(*rsaPolicy).nonce = func() []byte { return srvNonce }
				c := newSecClient(&testClient{t: b}, p, mode, 2048, srvCert)
				h := defaultHello()
				hs := append(appendHello(nil, &h), c.opn(ua.SecurityTokenRequestTypeIssue, cliNonce)...)
				c.chanID, c.tokID = 5, 1
				var err error
				if c.sym, err = p.NewSymmetric(p.DeriveKeys(srvNonce, cliNonce), p.DeriveKeys(cliNonce, srvNonce), mode == ua.MessageSecurityModeSignAndEncrypt); err != nil {
					b.Fatal(err)
				}
				r := bytes.NewReader(hs)
				ch, err := Open(context.Background(), &memConn{r}, cfg)
				if err != nil {
					b.Fatal(err)
				}
				body := smallRequest()
				batch := make([][]byte, 4096)
				next := len(batch)
				b.ReportAllocs()
				for b.Loop() {
					if next == len(batch) {
						b.StopTimer()
						for i := range batch {
							c.seq++
							batch[i] = c.msg(c.seq, c.seq, body)
						}
						next = 0
						b.StartTimer()
					}
					r.Reset(batch[next])
					next++
					req, err := ch.ReadRequest()
					if err != nil {
						b.Fatal(err)
					}
					if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
