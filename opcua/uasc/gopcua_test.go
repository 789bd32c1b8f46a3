package uasc

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	gua "github.com/gopcua/opcua/ua"
	guacp "github.com/gopcua/opcua/uacp"
	guasc "github.com/gopcua/opcua/uasc"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
)

// Interoperability with an independent client: gopcua v0.8.0's uacp and
// uasc talk to our Channel over loopback TCP: Hello, OpenSecureChannel,
// Read requests (single and multi-chunk responses), a renewal, and
// CloseSecureChannel.

// readServer answers ReadRequests with a ReadResponse of n Int32 values
// for the same request handle, where n is the request's MaxAge.
func readServer(t *testing.T, ch *Channel) <-chan error {
	done := make(chan error, 1)
	go func() {
		var d ua.Decoder
		var req ua.ReadRequest
		for {
			r, err := ch.ReadRequest()
			if err != nil {
				done <- err
				return
			}
			d.Reset(r.Message)
			if err := ua.DecodeMessageInto(&d, &req); err != nil {
				done <- err
				return
			}
			resp := ua.ReadResponse{
				ResponseHeader: ua.ResponseHeader{Timestamp: time.Now(), RequestHandle: req.RequestHeader.RequestHandle},
				Results:        make([]ua.DataValue, int(req.MaxAge)),
			}
			for i := range resp.Results {
				resp.Results[i].Value.SetInt32(int32(i))
			}
			if err := ch.WriteResponse(r.RequestID, ua.AppendMessage(nil, &resp)); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

func TestGopcuaClient(t *testing.T) {
	gopcuaSession(t, &Config{}, &guasc.Config{
		SecurityPolicyURI: gua.SecurityPolicyURINone,
		SecurityMode:      gua.MessageSecurityModeNone,
	})
}

// TestGopcuaClientSecure runs the same exchange over each policy and mode,
// with client keys of 2048, 3072 and 4096 bits against a server key of
// 2048 and 4096 bits (whose padding carries ExtraPaddingSize).
func TestGopcuaClientSecure(t *testing.T) {
	for _, p := range secpol.All {
		for _, mode := range []gua.MessageSecurityMode{gua.MessageSecurityModeSign, gua.MessageSecurityModeSignAndEncrypt} {
			for _, bits := range [][2]int{{2048, 2048}, {3072, 2048}, {4096, 2048}, {2048, 4096}} {
				t.Run(fmt.Sprintf("%s/%s/client%d/server%d", p.Name(), mode, bits[0], bits[1]), func(t *testing.T) {
					srvCert, srvKey := testCert(t, bits[1])
					cliCert, cliKey := testCert(t, bits[0])
					own, err := NewCredentials(srvCert, srvKey)
					if err != nil {
						t.Fatal(err)
					}
					var seen []byte
					pol := NewSecurityPolicy(p, func() *Credentials { return own }, func(leaf *x509.Certificate, _ []*x509.Certificate) error {
						seen = leaf.Raw
						return nil
					})
					ch := gopcuaSession(t, &Config{Policies: []SecurityPolicy{pol}, ReceiveBufferSize: 65536}, &guasc.Config{
						SecurityPolicyURI: p.URI(),
						SecurityMode:      mode,
						Certificate:       cliCert,
						LocalKey:          cliKey,
						RemoteCertificate: srvCert,
						Thumbprint:        secpol.Thumbprint(srvCert),
					})
					if !bytes.Equal(seen, cliCert) || !bytes.Equal(ch.PeerCertificate(), cliCert) {
						t.Fatalf("the client's certificate was not checked or not kept: %d, %d, %d bytes", len(seen), len(ch.PeerCertificate()), len(cliCert))
					}
					if ch.SecurityMode() != ua.MessageSecurityMode(mode) || ch.SecurityPolicyURI() != p.URI() {
						t.Fatalf("channel %v %s", ch.SecurityMode(), ch.SecurityPolicyURI())
					}
				})
			}
		}
	}
}

var (
	certMu sync.Mutex
	certs  = map[int]struct {
		der []byte
		key *rsa.PrivateKey
	}{}
)

// testCert returns a self-signed certificate with a key of bits, made
// once per test binary.
func testCert(t testing.TB, bits int) ([]byte, *rsa.PrivateKey) {
	certMu.Lock()
	defer certMu.Unlock()
	if c, ok := certs[bits]; ok {
		return c.der, c.key
	}
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: "urn:edged:test", CommonName: "test", Key: testkeys.RSA(bits)})
	if err != nil {
		t.Fatal(err)
	}
	certs[bits] = struct {
		der []byte
		key *rsa.PrivateKey
	}{der, key}
	return der, key
}

// gopcuaSession serves one gopcua secure channel under cfg and runs the
// Reads, the renewal and the close on it; it returns the server's channel.
func gopcuaSession(t *testing.T, cfg *Config, ccfg *guasc.Config) *Channel {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	endpoint := "opc.tcp://" + ln.Addr().String()
	served := make(chan error, 1)
	chc := make(chan *Channel, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		cfg.CheckEndpointURL = func(u string) error {
			if u != endpoint {
				t.Errorf("endpoint %q", u)
			}
			return nil
		}
		ch, err := Open(context.Background(), nc, cfg)
		if err != nil {
			served <- err
			return
		}
		chc <- ch
		served <- <-readServer(t, ch)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// gopcua v0.8.0 sizes the chunks of an encrypted multi-chunk
	// request one AES block beyond a buffer that is not a multiple of 16
	// bytes (its default, 65535): buffers of 65536 then.
	dialer := &guacp.Dialer{ClientACK: &guacp.Acknowledge{ReceiveBufSize: 1 << 16, SendBufSize: 1 << 16}}
	conn, err := dialer.Dial(ctx, endpoint)
	if err != nil {
		t.Fatalf("uacp.Dial: %v", err)
	}
	defer conn.Close()
	errCh := make(chan error, 10)
	ccfg.Lifetime = 60000
	ccfg.RequestTimeout = 5 * time.Second
	sc, err := guasc.NewSecureChannel(endpoint, conn, ccfg, errCh)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Open(ctx); err != nil {
		t.Fatalf("Open: %v (server: %v)", err, <-served)
	}
	ch := <-chc

	read := func(n, nodes int) {
		t.Helper()
		req := &gua.ReadRequest{MaxAge: float64(n)}
		for range nodes {
			req.NodesToRead = append(req.NodesToRead, &gua.ReadValueID{
				NodeID:      gua.NewNumericNodeID(0, 2258),
				AttributeID: gua.AttributeIDValue,
				// Must be set: gopcua writes nothing for a nil one.
				DataEncoding: &gua.QualifiedName{},
			})
		}
		var got *gua.ReadResponse
		err := sc.SendRequest(ctx, req, nil, func(r gua.Response) error {
			got, _ = r.(*gua.ReadResponse)
			return nil
		})
		if err != nil {
			select {
			case serr := <-served:
				t.Fatalf("Read(%d): %v (server: %v)", n, err, serr)
			case <-time.After(time.Second):
				t.Fatalf("Read(%d): %v", n, err)
			}
		}
		if got == nil || len(got.Results) != n {
			t.Fatalf("Read(%d): response %+v", n, got)
		}
		if n > 0 {
			if v, _ := got.Results[n-1].Value.Value().(int32); v != int32(n-1) {
				t.Fatalf("Read(%d): last value %v", n, got.Results[n-1].Value.Value())
			}
		}
	}
	read(1, 1)
	read(20000, 1) // a response of ≈ 200 KB: several chunks of 64 KiB
	read(1, 8000)  // a request of ≈ 170 KB: several chunks
	if err := sc.Renew(ctx); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	read(3, 1)
	read(4, 1)
	// gopcua's Close reports io.EOF after sending CloseSecureChannel.
	if err := sc.Close(); err != nil && err != io.EOF {
		t.Fatalf("Close: %v", err)
	}
	if err := <-served; err != ErrClosed {
		t.Fatalf("server: %v, want ErrClosed", err)
	}
	select {
	case err := <-errCh:
		t.Logf("client error channel: %v", err)
	default:
	}
	return ch
}
