package server

import (
	"github.com/edged/edged/opcua/server/internal/subtest"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// sinkFunc is a ValueSink from a function.
type sinkFunc func(h uint32, wv *ua.WriteValue) (ua.StatusCode, addrspace.Pending)

func (f sinkFunc) WriteValue(h uint32, wv *ua.WriteValue) (ua.StatusCode, addrspace.Pending) {
	return f(h, wv)
}

// writeFixture is a test server with ns=1;s=dev, a Double variable whose
// writes go to sink, and a session on a fake channel.
func writeFixture(t *testing.T, sink addrspace.ValueSink) *testConn {
	s := newTestServer(t, Config{WriteTimeout: time.Hour})
	src := s.as.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) { dv.Value.SetFloat64(0) }))
	if err := s.as.AddNode(&addrspace.Node{
		ID: ua.NewStringNodeID(1, "dev"), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "dev"},
		DataType: ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeCurrentWrite), Source: src, Handle: 1, Sink: sink,
	}); err != nil {
		t.Fatal(err)
	}
	tc := newTestConn(t, s, 1)
	tc.openSession()
	return tc
}

// writeMsg encodes a Write of v to ns=1;s=dev with handle.
func (tc *testConn) writeMsg(handle uint32, v float64) []byte {
	return ua.AppendMessage(nil, &ua.WriteRequest{
		RequestHeader: ua.RequestHeader{RequestHandle: handle, AuthenticationToken: tc.token},
		NodesToWrite: []ua.WriteValue{{
			NodeID: ua.NewStringNodeID(1, "dev"), AttributeID: uint32(ua.AttributeIDValue),
			Value: ua.DataValue{Value: ua.MustVariant(v)},
		}},
	})
}

// TestWriteAnsweredAtOnceIsSynchronous: a Write whose sink answers at
// once is answered by the connection itself, without allocating.
func TestWriteAnsweredAtOnceIsSynchronous(t *testing.T) {
	tc := writeFixture(t, sinkFunc(func(uint32, *ua.WriteValue) (ua.StatusCode, addrspace.Pending) {
		return status.BadOutOfRange, nil
	}))
	msg := tc.writeMsg(9, 1)
	out := tc.c.handle(msg, time.Time{})
	if out == nil {
		t.Fatal("Write answered later")
	}
	resp := subtest.WantOK[ua.WriteResponse](t, tc.raw(msg))
	if resp.ResponseHeader.RequestHandle != 9 || len(resp.Results) != 1 || resp.Results[0] != status.BadOutOfRange {
		t.Fatalf("WriteResponse %+v", resp)
	}
	if n := testing.AllocsPerRun(100, func() { tc.c.handle(msg, time.Time{}) }); n != 0 {
		t.Errorf("a Write answered at once allocates %v times", n)
	}
}

// TestAsyncWritesBounded: up to maxAsync Writes waiting for a device are
// answered later; the next one waits inline and is answered by the
// connection; then the others are answered, each with its handle and
// its device result.
func TestAsyncWritesBounded(t *testing.T) {
	pend := make(chan chan ua.StatusCode, maxAsync+1)
	tc := writeFixture(t, sinkFunc(func(uint32, *ua.WriteValue) (ua.StatusCode, addrspace.Pending) {
		p := make(chan ua.StatusCode, 1)
		pend <- p
		return status.Good, p
	}))
	var answers []chan ua.StatusCode
	for i := range maxAsync {
		if out := tc.c.handle(tc.writeMsg(uint32(100+i), float64(i)), time.Time{}); out != nil {
			t.Fatalf("Write %d answered at once", i)
		}
		answers = append(answers, <-pend)
	}
	if n := tc.c.async.Load(); n != maxAsync {
		t.Fatalf("%d requests in progress, want %d", n, maxAsync)
	}
	inline := make(chan []byte, 1)
	go func() { inline <- tc.c.handle(tc.writeMsg(99, 0), time.Time{}) }()
	select {
	case p := <-pend:
		p <- status.BadCommunicationError
	case <-time.After(30 * time.Second):
		t.Fatal("the Write beyond the bound did not reach the device")
	}
	var out []byte
	select {
	case out = <-inline:
	case <-time.After(30 * time.Second):
		t.Fatal("the Write beyond the bound was not answered")
	}
	if out == nil {
		t.Fatal("the Write beyond the bound was answered later, want inline")
	}
	r := subtest.WantOK[ua.WriteResponse](t, must(ua.DecodeMessage(ua.NewDecoder(out))))
	if r.ResponseHeader.RequestHandle != 99 || r.Results[0] != status.BadCommunicationError {
		t.Fatalf("inline Write: %+v", r)
	}
	for i, p := range answers {
		st := status.Good
		if i%2 == 1 {
			st = status.BadTimeout
		}
		p <- st
	}
	seen := map[uint32]bool{}
	for range maxAsync {
		r := subtest.WantOK[ua.WriteResponse](t, tc.async())
		h := r.ResponseHeader.RequestHandle
		want := status.Good
		if (h-100)%2 == 1 {
			want = status.BadTimeout
		}
		if h < 100 || h >= 100+maxAsync || seen[h] || len(r.Results) != 1 || r.Results[0] != want {
			t.Fatalf("WriteResponse %+v (handles seen %v)", r, seen)
		}
		seen[h] = true
	}
	waitFor(t, "the asynchronous Writes to end", func() bool { return tc.c.async.Load() == 0 })
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}
