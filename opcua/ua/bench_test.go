package ua_test

import (
	"bytes"
	"testing"

	"github.com/edged/edged/opcua/ua"
)

// The read path of a server: decode a Read request into the request value
// the connection reuses, encode the response into the buffer it reuses.
// newReadRequest and newReadResponse (message_samples_test.go) are what a
// client polling n tags sends and gets: string NodeIds like
// ns=2;s=sim.Counter, attribute Value, TimestampsToReturn Both, an opaque
// 32-byte authentication token; Double, UInt32 and Boolean values with
// status, source and server timestamps.

// readPath holds the encoded request and the reused values of one path.
type readPath struct {
	reqBytes []byte
	req      ua.ReadRequest
	d        ua.Decoder

	resp *ua.ReadResponse
	buf  []byte
}

// newReadPath returns the path for n nodes, warmed up: the request
// decoded once into req and the response encoded once into buf, as on a
// connection past its first request.
func newReadPath(tb testing.TB, n int) *readPath {
	p := &readPath{
		reqBytes: ua.AppendMessage(nil, newReadRequest(n)),
		resp:     newReadResponse(n),
	}
	if err := p.decode(); err != nil {
		tb.Fatal(err)
	}
	if d := diff(&p.req, newReadRequest(n)); d != "" {
		tb.Fatalf("decoded request: %s", d)
	}
	p.encode()
	if !bytes.Equal(p.buf, ua.AppendMessage(nil, newReadResponse(n))) {
		tb.Fatal("encoding into the reused buffer differs")
	}
	return p
}

func (p *readPath) decode() error {
	p.d.Reset(p.reqBytes)
	return ua.DecodeMessageInto(&p.d, &p.req)
}

func (p *readPath) encode() { p.buf = ua.AppendMessage(p.buf[:0], p.resp) }

func benchmarkDecodeReadRequest(b *testing.B, n int) {
	p := newReadPath(b, n)
	b.ReportAllocs()
	b.SetBytes(int64(len(p.reqBytes)))
	for b.Loop() {
		if err := p.decode(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkEncodeReadResponse(b *testing.B, n int) {
	p := newReadPath(b, n)
	b.ReportAllocs()
	b.SetBytes(int64(len(p.buf)))
	for b.Loop() {
		p.encode()
	}
}

func BenchmarkDecodeReadRequest1(b *testing.B)    { benchmarkDecodeReadRequest(b, 1) }
func BenchmarkDecodeReadRequest100(b *testing.B)  { benchmarkDecodeReadRequest(b, 100) }
func BenchmarkEncodeReadResponse1(b *testing.B)   { benchmarkEncodeReadResponse(b, 1) }
func BenchmarkEncodeReadResponse100(b *testing.B) { benchmarkEncodeReadResponse(b, 100) }

// TestReadPathAllocs asserts that the read path allocates nothing once
// warm: decoding a Read request of 1 and of 100 nodes into the reused
// request (DecodeMessageInto), and encoding the response into the reused
// buffer (AppendMessage).
func TestReadPathAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not asserted")
	}
	for _, n := range []int{1, 100} {
		p := newReadPath(t, n)
		var err error
		if a := testing.AllocsPerRun(100, func() { err = p.decode() }); a != 0 || err != nil {
			t.Errorf("decoding a %d-node ReadRequest into a reused request: %v allocations (error %v), want 0", n, a, err)
		}
		if a := testing.AllocsPerRun(100, p.encode); a != 0 {
			t.Errorf("encoding a %d-node ReadResponse into a reused buffer: %v allocations, want 0", n, a)
		}
	}
}
