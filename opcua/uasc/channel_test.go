package uasc

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

func TestRoundTripTCP(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	if ch.ID() == 0 || ch.ID() != tc.chanID {
		t.Fatalf("channel id %d, client saw %d", ch.ID(), tc.chanID)
	}
	done := echo(ch)
	for i := uint32(1); i <= 3; i++ {
		body := bytes.Repeat([]byte{byte(i)}, int(i)*10)
		tc.request(100+i, body)
		id, got, n := tc.response()
		if id != 100+i || !bytes.Equal(got, body) || n != 1 {
			t.Fatalf("response %d: id %d, %d chunks, body %x", i, id, n, got)
		}
	}
	tc.write(tc.symChunk("CLO", 'F', 200, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{})))
	if err := <-done; err != ErrClosed {
		t.Fatalf("after CLO: %v, want ErrClosed", err)
	}
	tc.expectEOF()
	if _, err := ch.ReadRequest(); err != ErrClosed {
		t.Fatalf("sticky: %v", err)
	}
	if err := ch.WriteResponse(1, []byte{1}); err != ErrClosed {
		t.Fatalf("write after close: %v", err)
	}
}

func TestRoundTripPipe(t *testing.T) {
	sc, cc := net.Pipe()
	defer cc.Close()
	res := make(chan opened, 1)
	go func() {
		ch, err := Open(context.Background(), sc, &Config{})
		res <- opened{ch, err}
	}()
	tc := newTestClient(t, cc)
	resp := tc.open(defaultHello(), 0)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if resp.SecurityToken.RevisedLifetime != uint32(DefaultMaxTokenLifetime.Milliseconds()) {
		t.Errorf("lifetime %d for a request of 0", resp.SecurityToken.RevisedLifetime)
	}
	done := echo(r.ch)
	tc.request(7, []byte("hello"))
	if id, got, _ := tc.response(); id != 7 || string(got) != "hello" {
		t.Fatalf("got %d %q", id, got)
	}
	go r.ch.Close(status.BadShutdown, "bye") // net.Pipe: the write waits for our read
	tc.expectError(status.BadShutdown)
	if err := <-done; err != ErrClosed {
		t.Fatalf("ReadRequest after Close: %v", err)
	}
}

func TestTokenLifetimeRevised(t *testing.T) {
	cfg := &Config{MinTokenLifetime: 20e9, MaxTokenLifetime: 30e9}
	for _, c := range []struct{ req, want uint32 }{{1, 20000}, {25000, 25000}, {1 << 31, 30000}} {
		cc, res := serveTCP(t, cfg)
		tc := newTestClient(t, cc)
		resp := tc.open(defaultHello(), c.req)
		if got := resp.SecurityToken.RevisedLifetime; got != c.want {
			t.Errorf("requested %d: revised %d, want %d", c.req, got, c.want)
		}
		if r := <-res; r.err == nil {
			r.ch.Close(status.Good, "")
		}
	}
}

func TestNegotiation(t *testing.T) {
	cfg := &Config{ReceiveBufferSize: 32768, SendBufferSize: 16384, MaxMessageSize: 1 << 20, MaxChunkCount: 64}
	for _, c := range []struct {
		name string
		h    hello
		want acknowledge
	}{
		{"larger", hello{ReceiveBufferSize: 1 << 20, SendBufferSize: 1 << 20}, acknowledge{0, 32768, 16384, 1 << 20, 64}},
		{"smaller", hello{ReceiveBufferSize: 8192, SendBufferSize: 9000}, acknowledge{0, 9000, 8192, 1 << 20, 64}},
		{"absurd", hello{ProtocolVersion: 0xFFFFFFFF, ReceiveBufferSize: 0xFFFFFFFF, SendBufferSize: 0xFFFFFFFF, MaxMessageSize: 0xFFFFFFFF, MaxChunkCount: 0xFFFFFFFF}, acknowledge{0, 32768, 16384, 1 << 20, 64}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cc, res := serveTCP(t, cfg)
			tc := newTestClient(t, cc)
			if got := tc.helloAck(c.h); got != c.want {
				t.Errorf("ack %+v, want %+v", got, c.want)
			}
			cc.Close()
			openErr(t, res)
		})
	}
}

func TestHelloRejected(t *testing.T) {
	for _, c := range []struct {
		name string
		msg  []byte
		cfg  Config
		want ua.StatusCode
	}{
		{"zero sizes", appendHello(nil, &hello{}), Config{}, status.BadTcpNotEnoughResources},
		{"small receive buffer", appendHello(nil, &hello{ReceiveBufferSize: 8191, SendBufferSize: 65535}), Config{}, status.BadTcpNotEnoughResources},
		{"small send buffer", appendHello(nil, &hello{ReceiveBufferSize: 65535, SendBufferSize: 1024}), Config{}, status.BadTcpNotEnoughResources},
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Config{}, status.BadTcpMessageTypeInvalid},
		{"reverse hello", []byte("RHEF\x10\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"), Config{}, status.BadTcpMessageTypeInvalid},
		{"ack", appendAcknowledge(nil, &acknowledge{}), Config{}, status.BadTcpMessageTypeInvalid},
		{"intermediate hello", []byte("HELC\x20\x00\x00\x00"), Config{}, status.BadTcpMessageTypeInvalid},
		{"MSG first", []byte("MSGF\x20\x00\x00\x00"), Config{}, status.BadTcpMessageTypeInvalid},
		{"huge size", []byte("HELF\xff\xff\xff\xff"), Config{}, status.BadTcpMessageTooLarge},
		{"long URL", appendHello(nil, &hello{ReceiveBufferSize: 65535, SendBufferSize: 65535, EndpointURL: string(bytes.Repeat([]byte{'a'}, 4097))}), Config{}, status.BadTcpMessageTooLarge},
		{"URL length beyond message", func() []byte {
			b := appendHello(nil, &hello{ReceiveBufferSize: 65535, SendBufferSize: 65535, EndpointURL: "opc.tcp://x"})
			b[hdrLen+20] = 0xF0 // EndpointUrl length
			return b
		}(), Config{}, status.BadTcpMessageTypeInvalid},
		{"URL rejected", appendHello(nil, &hello{ReceiveBufferSize: 65535, SendBufferSize: 65535, EndpointURL: "opc.tcp://elsewhere"}),
			Config{CheckEndpointURL: func(string) error { return errors.New("not ours") }}, status.BadTcpEndpointURLInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			cc, res := serveTCP(t, &c.cfg)
			tc := newTestClient(t, cc)
			tc.write(c.msg)
			tc.expectError(c.want)
			wantStatus(t, openErr(t, res), c.want)
		})
	}
}

func TestHelloTimeout(t *testing.T) {
	cc, res := serveTCP(t, &Config{HelloTimeout: 50e6})
	tc := newTestClient(t, cc)
	tc.expectError(status.BadTimeout)
	wantStatus(t, openErr(t, res), status.BadTimeout)
}

func TestHelloTimeoutCoversOPN(t *testing.T) {
	cc, res := serveTCP(t, &Config{HelloTimeout: 100e6})
	tc := newTestClient(t, cc)
	tc.helloAck(defaultHello())
	tc.expectError(status.BadTimeout)
	wantStatus(t, openErr(t, res), status.BadTimeout)
}

func TestOpenContextCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := Open(ctx, sc, &Config{})
		res <- err
	}()
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("Open: %v, want context.Canceled", err)
	}
}

func TestOPNRejected(t *testing.T) {
	for _, c := range []struct {
		name string
		opn  func(tc *testClient) []byte
		want ua.StatusCode
	}{
		{"renew first", func(tc *testClient) []byte { return tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 1, 0) }, status.BadRequestTypeInvalid},
		{"unknown policy", func(tc *testClient) []byte {
			b := appendHeader(nil, "OPN", 'F')
			b = ua.AppendUint32(b, 0)
			b = ua.AppendString(b, "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256")
			b = ua.AppendByteString(b, nil)
			b = ua.AppendByteString(b, nil)
			b = ua.AppendUint32(b, 1)
			b = ua.AppendUint32(b, 1)
			b = ua.AppendMessage(b, &ua.OpenSecureChannelRequest{SecurityMode: ua.MessageSecurityModeSignAndEncrypt})
			putSize(b, 0)
			return b
		}, status.BadSecurityPolicyRejected},
		{"mode sign under None", func(tc *testClient) []byte {
			b := tc.opnChunk(ua.SecurityTokenRequestTypeIssue, 1, 0)
			// SecurityMode sits 12 bytes before the end: mode, nonce (-1), lifetime.
			b[len(b)-12] = byte(ua.MessageSecurityModeSign)
			return b
		}, status.BadSecurityModeRejected},
		{"not an OPN request", func(tc *testClient) []byte {
			b := appendHeader(nil, "OPN", 'F')
			b = ua.AppendUint32(b, 0)
			b = ua.AppendString(b, SecurityPolicyURINone)
			b = ua.AppendByteString(b, nil)
			b = ua.AppendByteString(b, nil)
			b = ua.AppendUint32(b, 1)
			b = ua.AppendUint32(b, 1)
			b = ua.AppendMessage(b, &ua.CloseSecureChannelRequest{})
			putSize(b, 0)
			return b
		}, status.BadDecodingError},
		{"truncated header", func(tc *testClient) []byte {
			b := appendHeader(nil, "OPN", 'F')
			b = ua.AppendUint32(b, 0)
			b = ua.AppendInt32(b, 1000) // policy URI longer than the chunk
			b = append(b, make([]byte, 20)...)
			putSize(b, 0)
			return b
		}, status.BadDecodingError},
	} {
		t.Run(c.name, func(t *testing.T) {
			cc, res := serveTCP(t, &Config{})
			tc := newTestClient(t, cc)
			tc.helloAck(defaultHello())
			tc.write(c.opn(tc))
			tc.expectError(c.want)
			wantStatus(t, openErr(t, res), c.want)
		})
	}
}

// TestRequestReceived: a request, in one chunk or several, carries the
// time the channel read its last chunk, between the client's send and the
// server's return; the requests of one read share it.
func TestRequestReceived(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	before := time.Now()
	tc.request(1, []byte("one chunk"))
	r, err := ch.ReadRequest()
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if r.Received.Before(before) || r.Received.After(after) {
		t.Fatalf("one chunk: Received %v, not within [%v, %v]", r.Received, before, after)
	}
	// The server waits in ReadRequest while the first chunk arrives and
	// is taken; the last comes later.
	got := make(chan Request, 1)
	go func() {
		r, err := ch.ReadRequest()
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	tc.write(tc.symChunk("MSG", 'C', 2, []byte("first ")))
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	tc.write(tc.symChunk("MSG", 'F', 2, []byte("last")))
	r = <-got
	after = time.Now()
	if string(r.Message) != "first last" {
		t.Fatalf("two chunks: %q", r.Message)
	}
	if r.Received.Before(mid) || r.Received.After(after) {
		t.Fatalf("two chunks: Received %v, not within [%v, %v] (after the first chunk)", r.Received, mid, after)
	}
	// Two requests in one write, in the socket before the channel reads:
	// one read, one time.
	tc.write(append(tc.symChunk("MSG", 'F', 3, []byte("a")), tc.symChunk("MSG", 'F', 4, []byte("b"))...))
	time.Sleep(20 * time.Millisecond)
	r3, err := ch.ReadRequest()
	if err != nil {
		t.Fatal(err)
	}
	r4, err := ch.ReadRequest()
	if err != nil {
		t.Fatal(err)
	}
	if r3.RequestID != 3 || r4.RequestID != 4 || !r3.Received.Equal(r4.Received) || !r3.Received.After(r.Received) {
		t.Fatalf("pipelined: requests %d at %v and %d at %v (the previous at %v)", r3.RequestID, r3.Received, r4.RequestID, r4.Received, r.Received)
	}
}
