package uasc

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// A hand-driven client for the tests: it writes exactly the bytes a test
// wants and reads the server's chunks back.

type testClient struct {
	t      testing.TB
	nc     net.Conn
	seq    uint32 // last sequence number sent
	chanID uint32
	tokID  uint32
	buf    []byte
}

func newTestClient(t testing.TB, nc net.Conn) *testClient {
	return &testClient{t: t, nc: nc, seq: 0}
}

func (tc *testClient) write(b []byte) {
	tc.t.Helper()
	if _, err := tc.nc.Write(b); err != nil {
		tc.t.Fatalf("client write: %v", err)
	}
}

// readChunk reads one whole message of the server.
func (tc *testClient) readChunk() ([]byte, error) {
	var h [hdrLen]byte
	if _, err := io.ReadFull(tc.nc, h[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(h[4:])
	if size < hdrLen || size > 1<<24 {
		return nil, errors.New("bad size")
	}
	b := make([]byte, size)
	copy(b, h[:])
	if _, err := io.ReadFull(tc.nc, b[hdrLen:]); err != nil {
		return nil, err
	}
	return b, nil
}

func (tc *testClient) mustChunk(typ string) []byte {
	tc.t.Helper()
	b, err := tc.readChunk()
	if err != nil {
		tc.t.Fatalf("client read (want %s): %v", typ, err)
	}
	if string(b[:3]) != typ {
		if string(b[:3]) == "ERR" {
			tc.t.Fatalf("got Error %v, want %s", ua.StatusCode(binary.LittleEndian.Uint32(b[8:])), typ)
		}
		tc.t.Fatalf("got %q, want %s", b[:4], typ)
	}
	return b
}

// expectError reads an Error message and then the end of the connection.
func (tc *testClient) expectError(want ua.StatusCode) {
	tc.t.Helper()
	tc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := tc.mustChunk("ERR")
	if got := ua.StatusCode(binary.LittleEndian.Uint32(b[8:])); got != want {
		tc.t.Fatalf("Error %v, want %v", got, want)
	}
	tc.expectEOF()
	tc.nc.Close() // as a client does after an Error (OPC 10000-6 §7.1.2.5)
}

// expectEOF checks that the server closes the connection (after
// discarding anything else it sends).
func (tc *testClient) expectEOF() {
	tc.t.Helper()
	tc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, tc.nc); err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		tc.t.Fatalf("want EOF, got %v", err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

func defaultHello() hello {
	return hello{
		ReceiveBufferSize: 65535,
		SendBufferSize:    65535,
		EndpointURL:       "opc.tcp://127.0.0.1:4840",
	}
}

// helloAck sends h and reads the Acknowledge.
func (tc *testClient) helloAck(h hello) acknowledge {
	tc.t.Helper()
	tc.write(appendHello(nil, &h))
	b := tc.mustChunk("ACK")
	d := ua.NewDecoder(b[hdrLen:])
	return acknowledge{d.ReadUint32(), d.ReadUint32(), d.ReadUint32(), d.ReadUint32(), d.ReadUint32()}
}

// opnChunk builds an OpenSecureChannel request chunk under policy None.
func (tc *testClient) opnChunk(rt ua.SecurityTokenRequestType, reqID, lifetimeMS uint32) []byte {
	tc.seq++
	b := appendHeader(nil, "OPN", 'F')
	b = ua.AppendUint32(b, tc.chanID)
	b = ua.AppendString(b, SecurityPolicyURINone)
	b = ua.AppendByteString(b, nil)
	b = ua.AppendByteString(b, nil)
	b = ua.AppendUint32(b, tc.seq)
	b = ua.AppendUint32(b, reqID)
	b = ua.AppendMessage(b, &ua.OpenSecureChannelRequest{
		RequestHeader:     ua.RequestHeader{RequestHandle: reqID},
		RequestType:       rt,
		SecurityMode:      ua.MessageSecurityModeNone,
		RequestedLifetime: lifetimeMS,
	})
	putSize(b, 0)
	return b
}

// readOPN reads an OpenSecureChannel response and adopts its ids.
func (tc *testClient) readOPN() *ua.OpenSecureChannelResponse {
	tc.t.Helper()
	b := tc.mustChunk("OPN")
	d := ua.NewDecoder(b[chanHdrLen:])
	if uri := d.ReadString(); uri != SecurityPolicyURINone {
		tc.t.Fatalf("policy %q", uri)
	}
	d.ReadByteString(nil)
	d.ReadByteString(nil)
	d.ReadUint32() // sequence number
	d.ReadUint32() // request id
	var resp ua.OpenSecureChannelResponse
	if err := ua.DecodeMessageInto(ua.NewDecoder(d.Rest()), &resp); err != nil {
		tc.t.Fatalf("OPN response: %v", err)
	}
	tc.chanID = resp.SecurityToken.ChannelID
	tc.tokID = resp.SecurityToken.TokenID
	return &resp
}

// open runs Hello and OpenSecureChannel (Issue).
func (tc *testClient) open(h hello, lifetimeMS uint32) *ua.OpenSecureChannelResponse {
	tc.t.Helper()
	tc.helloAck(h)
	tc.write(tc.opnChunk(ua.SecurityTokenRequestTypeIssue, 1, lifetimeMS))
	return tc.readOPN()
}

// symChunk builds a MSG or CLO chunk with the next sequence number.
func (tc *testClient) symChunk(typ string, ct byte, reqID uint32, body []byte) []byte {
	tc.seq++
	return tc.symChunkSeq(typ, ct, tc.seq, reqID, body)
}

func (tc *testClient) symChunkSeq(typ string, ct byte, seq, reqID uint32, body []byte) []byte {
	b := appendHeader(nil, typ, ct)
	b = ua.AppendUint32(b, tc.chanID)
	b = ua.AppendUint32(b, tc.tokID)
	b = ua.AppendUint32(b, seq)
	b = ua.AppendUint32(b, reqID)
	b = append(b, body...)
	putSize(b, 0)
	return b
}

// request sends body as one MSG chunk.
func (tc *testClient) request(reqID uint32, body []byte) {
	tc.t.Helper()
	tc.write(tc.symChunk("MSG", 'F', reqID, body))
}

// response reads the chunks of one response and returns its request id,
// body and chunk count.
func (tc *testClient) response() (uint32, []byte, int) {
	tc.t.Helper()
	var body []byte
	var reqID uint32
	for n := 1; ; n++ {
		b := tc.mustChunk("MSG")
		if got := binary.LittleEndian.Uint32(b[8:]); got != tc.chanID {
			tc.t.Fatalf("channel id %d, want %d", got, tc.chanID)
		}
		reqID = binary.LittleEndian.Uint32(b[20:])
		body = append(body, b[symHdrLen+seqHdrLen:]...)
		if b[3] == 'F' {
			return reqID, body, n
		}
		if b[3] != 'C' {
			tc.t.Fatalf("chunk type %q", b[3])
		}
	}
}

// serve starts a loopback TCP listener whose first connection is opened
// with cfg; it returns the client's connection and a channel that yields
// the server's Channel (or nil and the error of Open).
type opened struct {
	ch  *Channel
	err error
}

func serveTCP(t testing.TB, cfg *Config) (net.Conn, <-chan opened) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	res := make(chan opened, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			res <- opened{nil, err}
			return
		}
		ch, err := Open(context.Background(), nc, cfg)
		res <- opened{ch, err}
	}()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc, res
}

// openTCP opens a channel over loopback TCP with the test client.
func openTCP(t testing.TB, cfg *Config, h hello) (*testClient, *Channel) {
	t.Helper()
	cc, res := serveTCP(t, cfg)
	tc := newTestClient(t, cc)
	tc.open(h, 60000)
	r := <-res
	if r.err != nil {
		t.Fatalf("Open: %v", r.err)
	}
	t.Cleanup(func() { r.ch.Close(status.Good, "") })
	return tc, r.ch
}

// openErr waits for Open to fail and returns its error.
func openErr(t testing.TB, res <-chan opened) error {
	t.Helper()
	r := <-res
	if r.err == nil {
		r.ch.Close(status.Good, "")
		t.Fatal("Open succeeded")
	}
	return r.err
}

// echo serves ch: every request is answered with its own message, until
// ReadRequest fails; the error is sent on the returned channel.
func echo(ch *Channel) <-chan error {
	done := make(chan error, 1)
	go func() {
		for {
			req, err := ch.ReadRequest()
			if err != nil {
				done <- err
				return
			}
			if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

func wantStatus(t testing.TB, err error, want ua.StatusCode) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}
