package uasc

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/binary"
	"testing"

	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// TestECCOpenResponse: edged's OpenSecureChannel response over an ECC
// policy is signed and not encrypted: the body can be read as it is, one
// padding byte (0) comes before the signature, and its sequence number
// is 0 (the ECC policies' sequence numbers start at 0). Under an enhanced
// policy the signature covers the request's signature too and is the
// channel's ChannelThumbprint.
func TestECCOpenResponse(t *testing.T) {
	for _, p := range secpol.AllECC {
		t.Run(p.Name(), func(t *testing.T) {
			cfg, srvCert := secServerECC(t, p, nil)
			cc, res := serveTCP(t, cfg)
			c := newSecClientECC(newTestClient(t, cc), p, ua.MessageSecurityModeSign, srvCert)
			c.helloAck(defaultHello())
			cn := c.newNonce()
			req := c.opn(ua.SecurityTokenRequestTypeIssue, cn)
			c.write(req)
			b := c.mustChunk("OPN")
			d := ua.NewDecoder(b[chanHdrLen:])
			d.ReadString()
			d.ReadByteString(nil)
			d.ReadByteString(nil)
			secHdr := chanHdrLen + d.Offset()
			if seq := binary.LittleEndian.Uint32(b[secHdr:]); seq != 0 {
				t.Errorf("first sequence number %d, want 0", seq)
			}
			sig := p.SignatureSize()
			if b[len(b)-sig-1] != 0 {
				t.Errorf("padding byte %d before the signature, want 0", b[len(b)-sig-1])
			}
			var resp ua.OpenSecureChannelResponse
			if err := ua.DecodeMessageInto(ua.NewDecoder(b[secHdr+seqHdrLen:len(b)-sig-1]), &resp); err != nil {
				t.Fatalf("the body, read unencrypted: %v", err)
			}
			if len(resp.ServerNonce) != p.NonceLength() {
				t.Fatalf("server nonce of %d bytes", len(resp.ServerNonce))
			}
			if _, err := p.ParseNonce(resp.ServerNonce); err != nil {
				t.Fatal("the server nonce is not a point of the curve")
			}
			pub, _ := p.CheckKey(mustCert(t, srvCert).PublicKey)
			signed := b[:len(b)-sig]
			if p.Enhanced() {
				signed = append(bytes.Clone(signed), req[len(req)-sig:]...)
			}
			if err := p.Verify(pub, signed, b[len(b)-sig:]); err != nil {
				t.Fatal("the response's signature does not verify with the server's certificate")
			}
			r := <-res
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.ch.Close(status.Good, "")
			if tp := r.ch.ChannelThumbprint(); p.Enhanced() != bytes.Equal(tp, b[len(b)-sig:]) || (!p.Enhanced() && tp != nil) {
				t.Fatalf("ChannelThumbprint %x, enhanced %v", tp, p.Enhanced())
			}
		})
	}
}

// TestECCHandshakeRejected: what an ECC policy refuses in the handshake.
func TestECCHandshakeRejected(t *testing.T) {
	p := secpol.EccNistP256
	cases := []struct {
		name  string
		build func(c *secClient) []byte
		want  ua.StatusCode
	}{
		{"RSA certificate", func(c *secClient) []byte {
			der, _ := testCert(t, 2048)
			c.cert = der
			c.asym = &eccAsym{p: p, own: mustECKey(t, p), peer: c.asym.(*eccAsym).peer}
			return c.opn(ua.SecurityTokenRequestTypeIssue, c.newNonce())
		}, status.BadCertificatePolicyCheckFailed},
		{"P-384 certificate", func(c *secClient) []byte {
			der, key, err := pki.NewECCertificate(pki.Template{ApplicationURI: "urn:p384"}, secpol.EccNistP384.Curve())
			if err != nil {
				t.Fatal(err)
			}
			c.cert = der // signed with its P-384 key: ECDSA-SHA384
			c.asym = &eccAsym{p: secpol.EccNistP384, own: key, peer: c.asym.(*eccAsym).peer}
			return c.opn(ua.SecurityTokenRequestTypeIssue, c.newNonce())
		}, status.BadCertificatePolicyCheckFailed},
		{"damaged signature", func(c *secClient) []byte {
			b := c.opn(ua.SecurityTokenRequestTypeIssue, c.newNonce())
			b[len(b)-3] ^= 0x80
			return b
		}, status.BadSecurityChecksFailed},
		{"damaged body", func(c *secClient) []byte {
			b := c.opn(ua.SecurityTokenRequestTypeIssue, c.newNonce())
			b[len(b)-p.SignatureSize()-4] ^= 0x01
			return b
		}, status.BadSecurityChecksFailed},
		{"short nonce", func(c *secClient) []byte {
			return c.opn(ua.SecurityTokenRequestTypeIssue, c.newNonce()[:32])
		}, status.BadNonceInvalid},
		{"nonce off the curve", func(c *secClient) []byte {
			n := c.newNonce()
			n[63] ^= 1
			return c.opn(ua.SecurityTokenRequestTypeIssue, n)
		}, status.BadNonceInvalid},
		{"RSA-sized random nonce", func(c *secClient) []byte {
			return c.opn(ua.SecurityTokenRequestTypeIssue, bytes.Repeat([]byte{7}, secpol.NonceLength))
		}, status.BadNonceInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, srvCert := secServerECC(t, p, nil)
			cc, res := serveTCP(t, cfg)
			c := newSecClientECC(newTestClient(t, cc), p, ua.MessageSecurityModeSignAndEncrypt, srvCert)
			c.helloAck(defaultHello())
			c.write(tc.build(c))
			c.expectError(tc.want)
			wantStatus(t, openErr(t, res), tc.want)
		})
	}
}

func mustECKey(t *testing.T, p *secpol.ECC) crypto.Signer {
	_, key, err := pki.NewECCertificate(pki.Template{}, p.Curve())
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func mustCert(t *testing.T, der []byte) *x509.Certificate {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
