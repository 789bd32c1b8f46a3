package uasc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Coalescing of the responses to pipelined requests: Buffered,
// QueueResponse, Flush.

// countConn counts the writes to a connection and their sizes without
// allocating.
type countConn struct {
	net.Conn
	writes   atomic.Int64
	bytes    atomic.Int64
	maxWrite atomic.Int64
}

func (c *countConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	c.bytes.Add(int64(len(b)))
	if n := int64(len(b)); n > c.maxWrite.Load() {
		c.maxWrite.Store(n) // only the channel's flusher writes
	}
	return c.Conn.Write(b)
}

func (c *countConn) reset() {
	c.writes.Store(0)
	c.bytes.Store(0)
	c.maxWrite.Store(0)
}

// openCounted opens a channel over loopback TCP whose server side counts
// its writes (from after the handshake).
func openCounted(t testing.TB, cfg *Config, h hello) (*testClient, *Channel, *countConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	cn := &countConn{Conn: nc}
	res := make(chan opened, 1)
	go func() {
		ch, err := Open(context.Background(), cn, cfg)
		res <- opened{ch, err}
	}()
	tc := newTestClient(t, cc)
	tc.open(h, 60000)
	r := <-res
	if r.err != nil {
		t.Fatalf("Open: %v", r.err)
	}
	t.Cleanup(func() { r.ch.Close(status.Good, "") })
	cn.reset()
	return tc, r.ch, cn
}

// answer echoes req as a server does: queued while the next request is
// buffered, written otherwise.
func answer(ch *Channel, req Request) error {
	if ch.Buffered() {
		return ch.QueueResponse(req.RequestID, req.Message)
	}
	return ch.WriteResponse(req.RequestID, req.Message)
}

// servePipelined answers every request with answer until ReadRequest
// fails; the error is sent on the returned channel.
func servePipelined(ch *Channel) <-chan error {
	done := make(chan error, 1)
	go func() {
		for {
			req, err := ch.ReadRequest()
			if err == nil {
				err = answer(ch, req)
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

// pipeline returns n request chunks in one byte slice, request ids
// first, first+1, …, each body tagged with its index.
func (tc *testClient) pipeline(first uint32, n int, bodySize int) []byte {
	var all []byte
	for i := range n {
		body := make([]byte, max(bodySize, 4))
		binary.LittleEndian.PutUint32(body, uint32(i))
		all = append(all, tc.symChunk("MSG", 'F', first+uint32(i), body)...)
	}
	return all
}

// expectResponses reads n echoed responses to pipeline(first, n, …) and
// checks their order, request ids and sequence numbers.
func (tc *testClient) expectResponses(first uint32, n int) {
	tc.t.Helper()
	tc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var lastSeq uint32
	for i := range n {
		b := tc.mustChunk("MSG")
		seq := binary.LittleEndian.Uint32(b[16:])
		reqID := binary.LittleEndian.Uint32(b[20:])
		body := b[symHdrLen+seqHdrLen:]
		if reqID != first+uint32(i) || binary.LittleEndian.Uint32(body) != uint32(i) {
			tc.t.Fatalf("response %d: request id %d, body %d", i, reqID, binary.LittleEndian.Uint32(body))
		}
		if i > 0 && seq != lastSeq+1 {
			tc.t.Fatalf("response %d: sequence number %d after %d", i, seq, lastSeq)
		}
		lastSeq = seq
	}
}

func TestPipelinedResponsesOneWrite(t *testing.T) {
	tc, ch, cn := openCounted(t, &Config{}, defaultHello())
	done := servePipelined(ch)
	const n = 100
	tc.write(tc.pipeline(1, n, 40)) // one write: one read on the server
	tc.expectResponses(1, n)
	// The server reads the 100 requests with one Read (they arrived
	// together) and answers them with one Write; allow for a Read that
	// raced the arrival of the bytes.
	if w := cn.writes.Load(); w > 3 {
		t.Errorf("%d writes for %d pipelined requests, want 1 (at most 3)", w, n)
	} else {
		t.Logf("%d pipelined requests answered with %d write(s)", n, w)
	}

	// Again, after the first batch: buffers are reused.
	cn.reset()
	tc.write(tc.pipeline(n+1, n, 40))
	tc.expectResponses(n+1, n)
	if w := cn.writes.Load(); w > 3 {
		t.Errorf("second batch: %d writes, want 1 (at most 3)", w)
	}
	ch.Close(status.Good, "")
	<-done
}

func TestLoneRequestWrittenAtOnce(t *testing.T) {
	tc, ch, cn := openCounted(t, &Config{}, defaultHello())
	// On this goroutine: the response is on the wire when WriteResponse
	// returns, and nothing waits for a next request.
	for i := range uint32(5) {
		tc.request(10+i, smallRequest())
		req, err := ch.ReadRequest()
		if err != nil {
			t.Fatal(err)
		}
		if ch.Buffered() {
			t.Fatal("Buffered with no further request sent")
		}
		if err := answer(ch, req); err != nil {
			t.Fatal(err)
		}
		if w := cn.writes.Load(); w != int64(i+1) {
			t.Fatalf("request %d: %d writes after WriteResponse, want %d", i, w, i+1)
		}
		if id, _, _ := tc.response(); id != 10+i {
			t.Fatalf("response to %d, want %d", id, 10+i)
		}
	}

	// Served like a server does: request, response, request, … each
	// answered at once (the client waits for it before sending on).
	cn.reset()
	done := servePipelined(ch)
	for i := range uint32(20) {
		tc.request(100+i, smallRequest())
		tc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if id, _, _ := tc.response(); id != 100+i {
			t.Fatalf("response to %d, want %d", id, 100+i)
		}
	}
	if w := cn.writes.Load(); w != 20 {
		t.Errorf("%d writes for 20 requests one at a time, want 20", w)
	}
	ch.Close(status.Good, "")
	<-done
}

func TestBuffered(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	read := func() Request {
		t.Helper()
		req, err := ch.ReadRequest()
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	wait := func(n int) {
		// Reads until n bytes are buffered: the client's writes arrive
		// at their own pace.
		t.Helper()
		for ch.w-ch.r < n {
			if err := ch.fill(n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ch.Buffered() {
		t.Fatal("Buffered on an idle channel")
	}

	// A request followed by the first chunk of another: the next
	// ReadRequest would wait, so not Buffered.
	req1 := tc.symChunk("MSG", 'F', 1, []byte("one"))
	part := tc.symChunk("MSG", 'C', 2, []byte("two-a"))
	tc.write(append(append([]byte(nil), req1...), part...))
	wait(len(req1) + len(part))
	read()
	if ch.Buffered() {
		t.Fatal("Buffered with only an intermediate chunk of the next request")
	}
	// Its final chunk, then an abort of another and a whole request.
	fin := tc.symChunk("MSG", 'F', 2, []byte("two-b"))
	tc.write(fin)
	wait(len(part) + len(fin))
	if !ch.Buffered() {
		t.Fatal("not Buffered with the whole of a 2-chunk request")
	}
	if req := read(); string(req.Message) != "two-atwo-b" {
		t.Fatalf("reassembled %q", req.Message)
	}
	abort := append(tc.symChunk("MSG", 'C', 3, []byte("x")), tc.symChunk("MSG", 'A', 3, []byte("y"))...)
	req4 := tc.symChunk("MSG", 'F', 4, []byte("four"))
	tc.write(append(abort, req4...))
	wait(len(abort) + len(req4))
	if !ch.Buffered() {
		t.Fatal("not Buffered with an aborted request and a whole one")
	}
	if req := read(); req.RequestID != 4 {
		t.Fatalf("request %d, want 4", req.RequestID)
	}
	if ch.Buffered() {
		t.Fatal("Buffered with nothing left")
	}

	// CloseSecureChannel: the next ReadRequest ends without waiting.
	clo := tc.symChunk("CLO", 'F', 5, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{}))
	tc.write(clo)
	wait(len(clo))
	if !ch.Buffered() {
		t.Fatal("not Buffered with a CloseSecureChannel")
	}
	if _, err := ch.ReadRequest(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after CLO: %v", err)
	}
	if ch.Buffered() {
		t.Fatal("Buffered on a closed channel")
	}
}

func TestQueuedWrittenBeforeReadWaits(t *testing.T) {
	// A response left queued (as if more requests had been buffered) is
	// written when ReadRequest has to wait for the client.
	tc, ch, cn := openCounted(t, &Config{}, defaultHello())
	tc.request(1, []byte("abcd"))
	req, err := ch.ReadRequest()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueResponse(req.RequestID, req.Message); err != nil {
		t.Fatal(err)
	}
	if w := cn.writes.Load(); w != 0 {
		t.Fatalf("QueueResponse wrote (%d writes)", w)
	}
	next := make(chan Request, 1)
	go func() {
		req, _ := ch.ReadRequest()
		next <- req
	}()
	tc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if id, body, _ := tc.response(); id != 1 || string(body) != "abcd" {
		t.Fatalf("response %d %q", id, body)
	}
	tc.request(2, []byte("efgh"))
	if req := <-next; req.RequestID != 2 {
		t.Fatalf("request %d, want 2", req.RequestID)
	}

	// Flush writes what is queued, and with nothing queued does nothing.
	if err := ch.QueueResponse(2, []byte("efgh")); err != nil {
		t.Fatal(err)
	}
	cn.reset()
	if err := ch.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Flush(); err != nil {
		t.Fatal(err)
	}
	if w := cn.writes.Load(); w != 1 {
		t.Fatalf("%d writes for two Flushes of one response, want 1", w)
	}
	if id, _, _ := tc.response(); id != 2 {
		t.Fatalf("response %d, want 2", id)
	}

	// WriteResponse takes what is queued along, in order.
	cn.reset()
	ch.QueueResponse(3, []byte("3333"))
	ch.QueueResponse(4, []byte("4444"))
	if err := ch.WriteResponse(5, []byte("5555")); err != nil {
		t.Fatal(err)
	}
	if w := cn.writes.Load(); w != 1 {
		t.Fatalf("%d writes, want 1", w)
	}
	for want := uint32(3); want <= 5; want++ {
		if id, _, _ := tc.response(); id != want {
			t.Fatalf("response %d, want %d", id, want)
		}
	}

	// Close writes what is queued before it closes.
	ch.QueueResponse(6, []byte("6666"))
	if err := ch.Close(status.Good, ""); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := tc.response(); id != 6 {
		t.Fatalf("response %d, want 6", id)
	}
	tc.expectEOF()
}

func TestQueueBounded(t *testing.T) {
	// The client's receive buffer of 8192 bytes is our send buffer: at
	// most 8192 bytes of responses wait in the queue, then they are
	// written, whatever is still buffered.
	h := defaultHello()
	h.ReceiveBufferSize = 8192
	tc, ch, cn := openCounted(t, &Config{}, h)
	if ch.maxQueued != 8192 {
		t.Fatalf("maxQueued %d", ch.maxQueued)
	}
	const n, body = 300, 1000
	respSize := symHdrLen + seqHdrLen + body
	reqs := tc.pipeline(1, n, body)
	done := servePipelined(ch)
	go tc.nc.Write(reqs) // the server reads while this writes
	tc.expectResponses(1, n)
	w, maxW := cn.writes.Load(), cn.maxWrite.Load()
	t.Logf("%d responses of %d bytes in %d writes, the largest %d bytes", n, respSize, w, maxW)
	if limit := int64(ch.maxQueued + respSize); maxW > limit {
		t.Errorf("a write of %d bytes, want at most %d", maxW, limit)
	}
	if min := int64(n * respSize / (ch.maxQueued + respSize)); w < min {
		t.Errorf("%d writes, want at least %d", w, min)
	}
	ch.s.mu.Lock()
	bufCap, spareCap := cap(ch.s.buf), cap(ch.s.spare)
	ch.s.mu.Unlock()
	if limit := 2 * (ch.maxQueued + respSize); bufCap > limit || spareCap > limit {
		t.Errorf("send buffers grew to %d and %d bytes, want at most %d", bufCap, spareCap, limit)
	}
	ch.Close(status.Good, "")
	<-done
}

func TestPipelinedThenClose(t *testing.T) {
	// Requests and CloseSecureChannel in one write: the responses are
	// queued, and the queue is written before the channel ends.
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	done := servePipelined(ch)
	all := tc.pipeline(1, 5, 10)
	all = append(all, tc.symChunk("CLO", 'F', 6, ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{}))...)
	tc.write(all)
	tc.expectResponses(1, 5)
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("serve ended with %v, want ErrClosed", err)
	}
	tc.expectEOF()
}

func TestPipelinedThenViolation(t *testing.T) {
	// Requests and then a chunk with a wrong sequence number: the queued
	// responses precede the Error message.
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	done := servePipelined(ch)
	all := tc.pipeline(1, 5, 10)
	all = append(all, tc.symChunkSeq("MSG", 'F', tc.seq+5, 6, []byte("bad"))...)
	tc.write(all)
	tc.expectResponses(1, 5)
	tc.expectError(status.BadSequenceNumberInvalid)
	wantStatus(t, <-done, status.BadSequenceNumberInvalid)
}

func TestQueueResponseErrorsSticky(t *testing.T) {
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	tc.nc.Close()
	ch.Close(status.Good, "")
	if err := ch.QueueResponse(1, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("QueueResponse after Close: %v", err)
	}
	if err := ch.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v", err)
	}
}

func TestConcurrentQueueAndWrite(t *testing.T) {
	// One goroutine queues and flushes, others write: every response
	// arrives once, whole, in the order of its sequence number.
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	const writers, per = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				id := uint32(w*per + i + 1)
				var err error
				switch {
				case w == 0 && i%10 != 9:
					err = ch.QueueResponse(id, bytes.Repeat([]byte{byte(w)}, 100))
				case w == 0:
					err = ch.Flush()
				default:
					err = ch.WriteResponse(id, bytes.Repeat([]byte{byte(w)}, 100))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	got := 0
	want := writers*per - per/10
	var lastSeq uint32
	tc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for got < want {
		b := tc.mustChunk("MSG")
		if seq := binary.LittleEndian.Uint32(b[16:]); got > 0 && seq != lastSeq+1 {
			t.Fatalf("sequence number %d after %d", seq, lastSeq)
		} else {
			lastSeq = seq
		}
		got++
	}
	wg.Wait()
}

func TestZeroAllocsPipelined(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// As TestZeroAllocs, with 10 pipelined requests per step: one client
	// write, ten ReadRequests, nine QueueResponses, one WriteResponse, and
	// the client reads the ten responses.
	tc, ch, cn := openCounted(t, &Config{}, defaultHello())
	const batch = 10
	one := tc.symChunk("MSG", 'F', 1, smallRequest())
	tc.seq--
	all := bytes.Repeat(one, batch)
	resp := make([]byte, batch*len(one))
	step := func() {
		for i := range batch {
			tc.seq++
			binary.LittleEndian.PutUint32(all[i*len(one)+16:], tc.seq)
		}
		if _, err := tc.nc.Write(all); err != nil {
			t.Fatal(err)
		}
		for range batch {
			req, err := ch.ReadRequest()
			if err != nil {
				t.Fatal(err)
			}
			if err := answer(ch, req); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := io.ReadFull(tc.nc, resp); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		step()
	}

	other, peer := tcpPair(t)
	buf := make([]byte, len(all))
	base := testing.AllocsPerRun(200, func() {
		other.Write(all)
		io.ReadFull(peer, buf)
		peer.Write(buf)
		io.ReadFull(other, buf)
	})
	cn.reset()
	if n := testing.AllocsPerRun(200, step) - base; n > 0 {
		t.Fatalf("%.1f allocations per batch of %d pipelined requests", n, batch)
	}
	// 201 steps (AllocsPerRun warms up once); most are one write.
	if w := cn.writes.Load(); w > 2*201 {
		t.Errorf("%d writes for 201 batches", w)
	} else {
		t.Logf("%d writes for 201 batches of %d", w, batch)
	}
}

// TrimSendBuffers lets go of send buffers grown by one large response;
// the next responses grow them again as far as they need, and then keep
// them.
func TestTrimSendBuffers(t *testing.T) {
	tc, ch, _ := openCounted(t, &Config{}, defaultHello())
	defer ch.Close(status.Good, "")
	caps := func() (int, int) {
		ch.s.mu.Lock()
		defer ch.s.mu.Unlock()
		return cap(ch.s.buf), cap(ch.s.spare)
	}
	big := make([]byte, 20000)
	for id := uint32(1); id <= 2; id++ { // both buffers
		if err := ch.WriteResponse(id, big); err != nil {
			t.Fatal(err)
		}
		tc.response()
	}
	if b, s := caps(); b < len(big) || s < len(big) {
		t.Fatalf("after two large responses: buffers of %d and %d bytes", b, s)
	}
	ch.TrimSendBuffers()
	if b, s := caps(); b > trimmedSendBuffer || s > trimmedSendBuffer {
		t.Errorf("trimmed: buffers of %d and %d bytes", b, s)
	}
	small := make([]byte, 2000)
	id := uint32(3)
	write := func() {
		if err := ch.WriteResponse(id, small); err != nil {
			t.Fatal(err)
		}
		tc.response()
		id++
	}
	arrays := func() [2]*byte {
		ch.s.mu.Lock()
		defer ch.s.mu.Unlock()
		return [2]*byte{&ch.s.buf[:1][0], &ch.s.spare[:1][0]}
	}
	write()
	write()
	before := arrays()
	for range 50 {
		write()
	}
	if after := arrays(); after != before && after != [2]*byte{before[1], before[0]} {
		t.Errorf("the send buffers were allocated anew in steady state")
	}
	if b, s := caps(); b > trimmedSendBuffer || s > trimmedSendBuffer {
		t.Errorf("after small responses: buffers of %d and %d bytes", b, s)
	}
}
