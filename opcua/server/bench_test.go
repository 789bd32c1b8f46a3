package server

import (
	"context"
	"encoding/binary"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// The benchmarks run the whole server path of a request, from the bytes of
// its MSG chunk to the bytes of the response chunk, without a network:
// memConn is a net.Conn whose Read hands out Hello, OpenSecureChannel and
// then, forever, the same MSG chunk with the next sequence number and
// request id patched in; its Write discards the responses (after keeping
// those of the handshake). Per request the benchmark does what
// conn.serve does: uasc's ReadRequest (chunk header, security header,
// sequence checks), the connection's handle (decode, session check,
// address space, encode) and uasc's WriteResponse (framing, Write).

// memConn is an in-memory net.Conn for one benchmark connection.
type memConn struct {
	in      []byte // bytes still to be read
	queue   [][]byte
	msg     []byte // the MSG chunk repeated once queue is empty
	batch   int    // copies of msg handed out per Read (pipelining); 0: 1
	pending []byte // the batch being handed out
	seq     uint32
	keep    bool   // keep written bytes (during the handshake)
	written []byte // kept writes
	nWrites int
}

func (m *memConn) Read(p []byte) (int, error) {
	if len(m.in) == 0 {
		if len(m.queue) > 0 {
			m.in, m.queue = m.queue[0], m.queue[1:]
		} else {
			m.pending = m.pending[:0]
			for range max(m.batch, 1) {
				m.seq++
				binary.LittleEndian.PutUint32(m.msg[16:], m.seq) // SequenceNumber
				binary.LittleEndian.PutUint32(m.msg[20:], m.seq) // RequestId
				m.pending = append(m.pending, m.msg...)
			}
			m.in = m.pending
		}
	}
	n := copy(p, m.in)
	m.in = m.in[n:]
	return n, nil
}

func (m *memConn) Write(p []byte) (int, error) {
	m.nWrites++
	if m.keep {
		m.written = append(m.written, p...)
	}
	return len(p), nil
}

func (m *memConn) Close() error                       { return nil }
func (m *memConn) LocalAddr() net.Addr                { return memAddr{} }
func (m *memConn) RemoteAddr() net.Addr               { return memAddr{} }
func (m *memConn) SetDeadline(t time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(t time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

func chunkHeader(typ string, body []byte) []byte {
	b := append([]byte(typ), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], uint32(8+len(body)))
	return append(b, body...)
}

// benchConn is a server connection over a memConn with an activated
// session, ready for the requests of a benchmark.
type benchConn struct {
	srv *Server
	mc  *memConn
	ch  *uasc.Channel
	c   *conn
	tok ua.ChannelSecurityToken
}

// newBenchConn opens a channel over a memConn (handshake included),
// creates an activated session for it and prepares the MSG chunk of req
// (which gets the session's token).
func newBenchConn(tb testing.TB, req *ua.ReadRequest) *benchConn {
	tb.Helper()
	return openBenchConn(tb, newTestServer(tb, Config{}), req, &req.RequestHeader)
}

// openBenchConn is newBenchConn on srv for any request, h its header.
func openBenchConn(tb testing.TB, srv *Server, req ua.Body, h *ua.RequestHeader) *benchConn {
	tb.Helper()
	url := srv.cfg.EndpointURL
	var hel []byte
	hel = ua.AppendUint32(hel, 0)
	hel = ua.AppendUint32(hel, 65535)
	hel = ua.AppendUint32(hel, 65535)
	hel = ua.AppendUint32(hel, 0)
	hel = ua.AppendUint32(hel, 0)
	hel = ua.AppendString(hel, url)
	var opn []byte
	opn = ua.AppendUint32(opn, 0)
	opn = ua.AppendString(opn, SecurityPolicyNone)
	opn = ua.AppendByteString(opn, nil)
	opn = ua.AppendByteString(opn, nil)
	opn = ua.AppendUint32(opn, 1)
	opn = ua.AppendUint32(opn, 1)
	opn = ua.AppendMessage(opn, &ua.OpenSecureChannelRequest{RequestType: ua.SecurityTokenRequestTypeIssue,
		SecurityMode: ua.MessageSecurityModeNone, RequestedLifetime: 3600000})
	mc := &memConn{queue: [][]byte{chunkHeader("HELF", hel), chunkHeader("OPNF", opn)}, keep: true, seq: 1}
	ch, err := uasc.Open(context.Background(), mc, srv.cfg.Channel)
	if err != nil {
		tb.Fatalf("uasc.Open: %v", err)
	}
	// The token id from the OpenSecureChannel response (after ACK).
	w := mc.written
	w = w[binary.LittleEndian.Uint32(w[4:]):] // skip ACK
	d := ua.NewDecoder(w[8:binary.LittleEndian.Uint32(w[4:])])
	d.ReadUint32()
	d.ReadString()
	d.ReadByteString(nil)
	d.ReadByteString(nil)
	d.ReadUint32()
	d.ReadUint32()
	m, err := ua.DecodeMessage(d)
	if err != nil {
		tb.Fatal(err)
	}
	tok := m.(*ua.OpenSecureChannelResponse).SecurityToken
	mc.keep, mc.written = false, nil

	s, err := srv.sessions.create("bench", clientKey{}, time.Hour, ch.ID(), srv.clock())
	if err != nil {
		tb.Fatal(err)
	}
	s.activated.Store(true)
	s.roles.Store(uint32(OperatorRights))
	h.AuthenticationToken = s.token
	bc := &benchConn{srv: srv, mc: mc, ch: ch, c: newConn(srv, ch), tok: tok}
	bc.setRequest(req)
	return bc
}

// setRequest makes req the request the connection reads from now on.
// Its buffer is reused: no allocation once it is large enough.
func (bc *benchConn) setRequest(req ua.Body) {
	m := append(bc.mc.msg[:0], "MSGF\x00\x00\x00\x00"...)
	m = ua.AppendUint32(m, bc.tok.ChannelID)
	m = ua.AppendUint32(m, bc.tok.TokenID)
	m = ua.AppendUint32(m, 0) // patched per read
	m = ua.AppendUint32(m, 0)
	m = ua.AppendMessage(m, req)
	binary.LittleEndian.PutUint32(m[4:], uint32(len(m)))
	bc.mc.msg = m
}

// step serves one request: what conn.serve does per iteration.
func (bc *benchConn) step(tb testing.TB) {
	r, err := bc.ch.ReadRequest()
	if err != nil {
		tb.Fatal(err)
	}
	if err := bc.c.answer(r); err != nil {
		tb.Fatal(err)
	}
}

// readRequest returns a Read of n nodes: the Gateway's Setpoint and Model
// and the server's CurrentTime and State in turn.
func readRequest(srv *Server, n int) *ua.ReadRequest {
	ids := []ua.NodeID{
		srv.GatewayNodeID("Setpoint"),
		ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime),
		srv.GatewayNodeID("Model"),
		ua.NewNumericNodeID(0, id.Server_ServerStatus_State),
	}
	req := &ua.ReadRequest{TimestampsToReturn: ua.TimestampsToReturnBoth}
	for i := range n {
		req.NodesToRead = append(req.NodesToRead, ua.ReadValueID{NodeID: ids[i%len(ids)], AttributeID: uint32(ua.AttributeIDValue)})
	}
	return req
}

func benchmarkRead(b *testing.B, n int) {
	// The server is needed for the node ids; the gateway namespace is
	// always 1, so one made for the ids matches the one of the conn.
	req := readRequest(newTestServer(b, Config{}), n)
	bc := newBenchConn(b, req)
	bc.step(b) // warm up: buffers and results grow once
	checkReadResponse(b, bc, n)
	b.ReportAllocs()
	b.SetBytes(int64(len(bc.mc.msg)))
	b.ResetTimer()
	for b.Loop() {
		bc.step(b)
	}
}

// checkReadResponse checks that the last response was a good Read
// response of n good results.
func checkReadResponse(tb testing.TB, bc *benchConn, n int) {
	tb.Helper()
	resp := bc.c.vals[serviceByRequest(id.ReadRequest_Encoding_DefaultBinary).index].resp.(*ua.ReadResponse)
	if len(bc.c.out) == 0 || len(resp.Results) != n {
		tb.Fatalf("no Read response (%d results)", len(resp.Results))
	}
	m, err := ua.DecodeMessage(ua.NewDecoder(bc.c.out))
	if err != nil {
		tb.Fatal(err)
	}
	rr, ok := m.(*ua.ReadResponse)
	if !ok {
		tb.Fatalf("response %T %v", m, subtest.FaultOf(m))
	}
	for i, r := range rr.Results {
		if r.Status != status.Good {
			tb.Fatalf("result %d: %v", i, r.Status)
		}
	}
}

func BenchmarkServerRead1(b *testing.B)   { benchmarkRead(b, 1) }
func BenchmarkServerRead100(b *testing.B) { benchmarkRead(b, 100) }

// TestServerReadAllocs asserts that a single-node Read allocates nothing
// on the whole server path, chunk bytes in to chunk bytes out.
func TestServerReadAllocs(t *testing.T) {
	for _, n := range []int{1, 100} {
		req := readRequest(newTestServer(t, Config{}), n)
		bc := newBenchConn(t, req)
		bc.step(t)
		checkReadResponse(t, bc, n)
		allocs := testing.AllocsPerRun(1000, func() { bc.step(t) })
		if n == 1 && allocs != 0 {
			t.Errorf("a %d-node Read allocates %v times per request, want 0", n, allocs)
		} else {
			t.Logf("a %d-node Read allocates %v times per request", n, allocs)
		}
	}
}

// BenchmarkServerRead1Pipelined is BenchmarkServerRead1 with the requests
// arriving 10 at a time, as from a pipelining client: their responses are
// queued and leave in one Write per 10.
func BenchmarkServerRead1Pipelined(b *testing.B) {
	req := readRequest(newTestServer(b, Config{}), 1)
	bc := newBenchConn(b, req)
	bc.mc.batch = 10
	bc.step(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(bc.mc.msg)))
	for b.Loop() {
		bc.step(b)
	}
}

// TestServerReadAllocsPipelined asserts that the pipelined path (requests
// read 10 per Read, responses queued and written once per 10) allocates
// nothing either, and that it writes once per batch.
func TestServerReadAllocsPipelined(t *testing.T) {
	const batch = 10
	req := readRequest(newTestServer(t, Config{}), 1)
	bc := newBenchConn(t, req)
	bc.mc.batch = batch
	for range batch {
		bc.step(t)
	}
	checkReadResponse(t, bc, 1)
	bc.mc.nWrites = 0
	allocs := testing.AllocsPerRun(100, func() {
		for range batch {
			bc.step(t)
		}
	})
	if allocs != 0 {
		t.Errorf("a batch of %d pipelined 1-node Reads allocates %v times, want 0", batch, allocs)
	}
	// AllocsPerRun runs the function once more to warm up.
	if got, want := bc.mc.nWrites, 101; got != want {
		t.Errorf("%d writes for %d batches of %d requests, want %d", got, want, batch, want)
	}
}
