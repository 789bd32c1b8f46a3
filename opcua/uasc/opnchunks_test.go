package uasc

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// TestSecuredOPNInChunks: an OpenSecureChannel request may come in
// several chunks, each with the asymmetric security header and secured
// on its own (OPC 10000-6 §6.7.2): the Issue and a Renew, under every
// policy, open and renew the channel; an abort chunk drops what came
// before it.
func TestSecuredOPNInChunks(t *testing.T) {
	policies, counts := secpol.All, []int{2, 5}
	if os.Getenv("EDGED_TEST_EMULATED") != "" {
		// Every chunk is an RSA decryption: under an emulator one
		// policy and two chunks; natively all.
		policies, counts = policies[1:2], counts[:1]
	}
	for _, p := range policies {
		for _, n := range counts {
			t.Run(fmt.Sprintf("%s/%d", p.Name(), n), func(t *testing.T) {
				cfg, srvCert := secServer(t, p, nil)
				cc, res := serveTCP(t, cfg)
				c := newSecClient(newTestClient(t, cc), p, ua.MessageSecurityModeSignAndEncrypt, 2048, srvCert)
				c.helloAck(defaultHello())
				cn := make([]byte, secpol.NonceLength)
				rand.Read(cn)
				// An aborted request first: its chunk is dropped.
				c.write(c.opnChunk('C', 1, []byte("the start of a request")))
				c.write(c.opnChunk('A', 1, nil))
				for _, b := range c.opnChunks(ua.SecurityTokenRequestTypeIssue, cn, n) {
					c.write(b)
				}
				c.opened(cn)
				r := <-res
				if r.err != nil {
					t.Fatalf("Open: %v", r.err)
				}
				t.Cleanup(func() { r.ch.Close(status.Good, "") })
				echo(r.ch)
				c.echoed([]byte("issued in chunks"))

				rand.Read(cn)
				for _, b := range c.opnChunks(ua.SecurityTokenRequestTypeRenew, cn, n) {
					c.write(b)
				}
				old := c.tokID
				c.opened(cn)
				if c.tokID == old {
					t.Fatal("the renewal kept the token id")
				}
				c.echoed([]byte("renewed in chunks"))
			})
		}
	}
}

// TestSecuredOPNChunksRejected: chunks of one OpenSecureChannel request
// must share their security header and request id, keep their sequence,
// stay within maxOPNChunks, and no request chunk may come between them.
func TestSecuredOPNChunksRejected(t *testing.T) {
	p := secpol.Basic256Sha256
	nonce := bytes.Repeat([]byte{1}, secpol.NonceLength)
	body := ua.AppendMessage(nil, &ua.OpenSecureChannelRequest{
		RequestType: ua.SecurityTokenRequestTypeIssue, SecurityMode: ua.MessageSecurityModeSignAndEncrypt,
		ClientNonce: nonce, RequestedLifetime: 60000,
	})
	cases := []struct {
		name  string
		build func(c *secClient) [][]byte
		want  ua.StatusCode
	}{
		{"another certificate", func(c *secClient) [][]byte {
			a := c.opnChunk('C', 1, body[:10])
			c.cert, _ = testCert(t, 3072)
			return [][]byte{a, c.opnChunk('F', 1, body[10:])}
		}, status.BadSecurityChecksFailed},
		{"another request id", func(c *secClient) [][]byte {
			return [][]byte{c.opnChunk('C', 1, body[:10]), c.opnChunk('F', 2, body[10:])}
		}, status.BadTcpMessageTypeInvalid},
		{"replayed chunk", func(c *secClient) [][]byte {
			a := c.opnChunk('C', 1, body[:10])
			return [][]byte{a, a}
		}, status.BadSequenceNumberInvalid},
		{"too many chunks", func(c *secClient) [][]byte {
			var out [][]byte
			for range maxOPNChunks {
				out = append(out, c.opnChunk('C', 1, body[:1]))
			}
			return out
		}, status.BadTcpMessageTooLarge},
		{"too large", func(c *secClient) [][]byte {
			big := make([]byte, 6000)
			return [][]byte{c.opnChunk('C', 1, big), c.opnChunk('C', 1, big), c.opnChunk('C', 1, big)}
		}, status.BadTcpMessageTooLarge},
	}
	for _, tc := range cases {
		if os.Getenv("EDGED_TEST_EMULATED") != "" && strings.HasPrefix(tc.name, "too ") {
			continue // dozens of RSA decryptions: natively only
		}
		t.Run(tc.name, func(t *testing.T) {
			cfg, srvCert := secServer(t, p, nil)
			cc, res := serveTCP(t, cfg)
			c := newSecClient(newTestClient(t, cc), p, ua.MessageSecurityModeSignAndEncrypt, 2048, srvCert)
			c.helloAck(defaultHello())
			for _, b := range tc.build(c) {
				c.write(b)
			}
			c.expectError(tc.want)
			wantStatus(t, openErr(t, res), tc.want)
		})
	}

	t.Run("request chunk inside", func(t *testing.T) {
		c, served := secOpen(t, testPol{rsa: p}, ua.MessageSecurityModeSignAndEncrypt)
		renew := c.opnChunks(ua.SecurityTokenRequestTypeRenew, nonce, 2)
		c.write(renew[0])
		c.seq++
		c.write(c.msg(c.seq, 5, []byte("in between")))
		c.expectError(status.BadTcpMessageTypeInvalid)
		wantStatus(t, <-served, status.BadTcpMessageTypeInvalid)
	})
}
