package uasc

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Allocation assertions, fuzz targets and benchmarks.

// smallRequest is a single-node ReadRequest as a service message.
func smallRequest() []byte {
	return ua.AppendMessage(nil, &ua.ReadRequest{
		RequestHeader: ua.RequestHeader{RequestHandle: 1, TimeoutHint: 1000},
		NodesToRead:   []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(2, 1001), AttributeID: 13}},
	})
}

// rawRoundTrip prepares a client that writes one request chunk (with the
// next sequence number patched in place) and reads the response into a
// fixed buffer, without allocating.
type rawRoundTrip struct {
	tc   *testClient
	req  []byte
	resp []byte
}

func newRawRoundTrip(tc *testClient, body []byte) *rawRoundTrip {
	req := tc.symChunk("MSG", 'F', 1, body)
	tc.seq-- // send() assigns it
	return &rawRoundTrip{tc: tc, req: req, resp: make([]byte, len(req))}
}

func (r *rawRoundTrip) send() {
	r.tc.seq++
	binary.LittleEndian.PutUint32(r.req[16:], r.tc.seq)
	if _, err := r.tc.nc.Write(r.req); err != nil {
		panic(err)
	}
}

func (r *rawRoundTrip) recv() {
	if _, err := io.ReadFull(r.tc.nc, r.resp); err != nil {
		panic(err)
	}
}

func TestZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// Real TCP loopback: net.Pipe allocates per Write. Everything runs on
	// this goroutine, so AllocsPerRun counts only this round trip: client
	// write, ReadRequest, WriteResponse, client read.
	tc, ch := openTCP(t, &Config{}, defaultHello())
	rt := newRawRoundTrip(tc, smallRequest())
	step := func() {
		rt.send()
		req, err := ch.ReadRequest()
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
			t.Fatal(err)
		}
		rt.recv()
	}
	for range 10 {
		step() // warm up: buffers reach their size
	}

	// The client's side alone, as a baseline: does net allocate?
	other, peer := tcpPair(t)
	buf := make([]byte, len(rt.req))
	base := testing.AllocsPerRun(200, func() {
		other.Write(rt.req)
		io.ReadFull(peer, buf)
		peer.Write(buf)
		io.ReadFull(other, buf)
	})
	t.Logf("net alone: %.1f allocations per round trip (subtracted)", base)

	if n := testing.AllocsPerRun(200, step) - base; n > 0 {
		t.Fatalf("%.1f allocations per ReadRequest+WriteResponse round trip", n)
	}
}

func tcpPair(t testing.TB) (net.Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestZeroAllocsMultiChunkRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// A 3-chunk request, reassembled into the reused buffer, and its
	// single-chunk answer.
	tc, ch := openTCP(t, &Config{}, defaultHello())
	var all []byte
	for i, ct := range []byte{'C', 'C', 'F'} {
		all = append(all, tc.symChunkSeq("MSG", ct, uint32(i), 3, make([]byte, 1000))...)
	}
	resp := make([]byte, 24+10)
	step := func() {
		for i := range 3 {
			tc.seq++
			binary.LittleEndian.PutUint32(all[i*1024+16:], tc.seq)
		}
		tc.nc.Write(all)
		req, err := ch.ReadRequest()
		if err != nil || len(req.Message) != 3000 {
			t.Fatal(err, len(req.Message))
		}
		ch.WriteResponse(req.RequestID, req.Message[:10])
		io.ReadFull(tc.nc, resp)
	}
	for range 10 {
		step()
	}
	if n := testing.AllocsPerRun(200, step); n > 0 {
		t.Fatalf("%.1f allocations", n)
	}
}

// memConn is a net.Conn reading from a byte slice and discarding writes;
// its deadlines do nothing. It makes fuzzing fast and deterministic.
type memConn struct {
	r *bytes.Reader
}

func (m *memConn) Read(b []byte) (int, error)       { return m.r.Read(b) }
func (m *memConn) Write(b []byte) (int, error)      { return len(b), nil }
func (m *memConn) Close() error                     { return nil }
func (m *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (m *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (m *memConn) SetDeadline(time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(time.Time) error { return nil }

// handshakeBytes is what a client sends to open a channel: Hello and
// OpenSecureChannel. The channel id the server assigns is fixed by
// fuzzConfig.
func handshakeBytes(tc *testClient) []byte {
	h := defaultHello()
	b := appendHello(nil, &h)
	return append(b, tc.opnChunk(ua.SecurityTokenRequestTypeIssue, 1, 60000)...)
}

func fuzzConfig() *Config {
	return &Config{
		NextChannelID:  func() uint32 { return 5 },
		MaxMessageSize: 1 << 16,
		MaxChunkCount:  8,
		Limits:         ua.Limits{MaxStringLength: 256, MaxByteStringLength: 256, MaxArrayLength: 16},
	}
}

func FuzzChannel(f *testing.F) {
	tc := &testClient{}
	hs := handshakeBytes(tc)
	tc.chanID, tc.tokID = 5, 1
	// Seeds from our own encoder: requests, multi-chunk, abort, renew,
	// close, and a few broken ones.
	f.Add(tc.symChunk("MSG", 'F', 2, smallRequest()))
	f.Add(append(tc.symChunk("MSG", 'C', 3, []byte("abc")), tc.symChunk("MSG", 'F', 3, []byte("def"))...))
	f.Add(append(tc.symChunk("MSG", 'C', 4, []byte("abc")), tc.symChunk("MSG", 'A', 4, AppendError(nil, status.BadRequestInterrupted, "x")[hdrLen:])...))
	f.Add(tc.opnChunk(ua.SecurityTokenRequestTypeRenew, 5, 60000))
	f.Add(tc.symChunk("CLO", 'F', 6, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{})))
	f.Add([]byte("MSGF\xff\xff\xff\xff"))
	f.Add([]byte("HELF\x20\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := append(append([]byte(nil), hs...), data...)
		ch, err := Open(t.Context(), &memConn{bytes.NewReader(in)}, fuzzConfig())
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		for range 100 {
			req, err := ch.ReadRequest()
			if err != nil {
				if _, err2 := ch.ReadRequest(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				return
			}
			if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
				t.Fatalf("WriteResponse: %v", err)
			}
		}
	})
}

func FuzzHello(f *testing.F) {
	h := defaultHello()
	f.Add(appendHello(nil, &h))
	f.Add(handshakeBytes(&testClient{}))
	f.Add(appendHello(nil, &hello{ReceiveBufferSize: 0xFFFFFFFF, SendBufferSize: 0xFFFFFFFF, MaxMessageSize: 0xFFFFFFFF, MaxChunkCount: 0xFFFFFFFF}))
	f.Add([]byte("RHEF\x10\x00\x00\x00"))
	f.Add(AppendError(nil, status.BadTcpMessageTypeInvalid, "no reverse connect"))
	f.Add([]byte("ERRF\x10\x00\x00\x00\x00\x00\x00\x80\xff\xff\xff\xff"))
	// Each input as the client's answer on a connection the client
	// opened, and on one the server opened (after its ReverseHello).
	f.Fuzz(func(t *testing.T, data []byte) {
		ch, err := Open(t.Context(), &memConn{bytes.NewReader(data)}, fuzzConfig())
		if err == nil {
			ch.Close(status.Good, "")
		}
		ch, err = OpenReverse(t.Context(), &memConn{bytes.NewReader(data)}, fuzzConfig(), "urn:edged:fuzz", "opc.tcp://fuzz:4840")
		if err == nil {
			ch.Close(status.Good, "")
		}
	})
}

// BenchmarkRoundTrip: one single-chunk request and its response through
// the channel, both sides in this process over loopback TCP. The server
// side runs in its own goroutine, as in production.
func BenchmarkRoundTrip(b *testing.B) {
	tc, ch := openTCP(b, &Config{}, defaultHello())
	go func() {
		for {
			req, err := ch.ReadRequest()
			if err != nil {
				return
			}
			if ch.WriteResponse(req.RequestID, req.Message) != nil {
				return
			}
		}
	}()
	rt := newRawRoundTrip(tc, smallRequest())
	b.ReportAllocs()
	b.SetBytes(int64(len(rt.req)))
	for b.Loop() {
		rt.send()
		rt.recv()
	}
}

// BenchmarkChannelPath is the channel's own cost without the network: a
// request chunk read from memory, ReadRequest, WriteResponse into a
// discarding connection.
func BenchmarkChannelPath(b *testing.B) {
	tc := &testClient{}
	hs := handshakeBytes(tc)
	tc.chanID, tc.tokID = 5, 1
	chunk := tc.symChunk("MSG", 'F', 2, smallRequest())
	r := bytes.NewReader(hs)
	ch, err := Open(b.Context(), &memConn{r}, fuzzConfig())
	if err != nil {
		b.Fatal(err)
	}
	seq := tc.seq
	b.ReportAllocs()
	for b.Loop() {
		binary.LittleEndian.PutUint32(chunk[16:], seq)
		seq++
		r.Reset(chunk)
		req, err := ch.ReadRequest()
		if err != nil {
			b.Fatal(err)
		}
		if err := ch.WriteResponse(req.RequestID, req.Message); err != nil {
			b.Fatal(err)
		}
	}
}
