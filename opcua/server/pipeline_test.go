package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Pipelined requests over loopback TCP: the responses come back in order
// and leave the server in few writes; a lone request is answered at once.

// countingListener hands out connections that count their writes.
type countingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*writeCounter
}

func (l *countingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	wc := &writeCounter{Conn: nc}
	l.mu.Lock()
	l.conns = append(l.conns, wc)
	l.mu.Unlock()
	return wc, nil
}

func (l *countingListener) last() *writeCounter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns[len(l.conns)-1]
}

type writeCounter struct {
	net.Conn
	writes atomic.Int64
}

func (c *writeCounter) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// startCountingServer is startServer with a countingListener.
func startCountingServer(t *testing.T) (*countingListener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: inner}
	url := "opc.tcp://" + inner.Addr().String()
	srv, err := server.New(server.Config{EndpointURL: url})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return ln, url
}

// readResponses reads n GetEndpoints responses and checks that they
// answer request ids and handles first, first+1, … in order.
func (r *rawConn) readResponses(first uint32, n int) {
	r.t.Helper()
	for i := range uint32(n) {
		typ, body, err := r.readMsg()
		if err != nil || typ != "MSGF" {
			r.t.Fatalf("response %d: %q, %v", i, typ, err)
		}
		if id := binary.LittleEndian.Uint32(body[12:]); id != first+i {
			r.t.Fatalf("response %d: request id %d, want %d", i, id, first+i)
		}
		m, err := ua.DecodeMessage(ua.NewDecoder(body[16:]))
		if err != nil {
			r.t.Fatal(err)
		}
		resp, ok := m.(*ua.GetEndpointsResponse)
		if !ok {
			r.t.Fatalf("response %d: %T", i, m)
		}
		if h := resp.ResponseHeader.RequestHandle; h != first+i {
			r.t.Fatalf("response %d: handle %d, want %d", i, h, first+i)
		}
	}
}

func getEndpoints(handle uint32) []byte {
	return ua.AppendMessage(nil, &ua.GetEndpointsRequest{RequestHeader: ua.RequestHeader{RequestHandle: handle}})
}

func TestPipelinedRequestsCoalesced(t *testing.T) {
	ln, url := startCountingServer(t)
	r := dialRaw(t, url)
	r.hello(url)
	r.open()
	wc := ln.last()

	// One request at a time: each answered at once, with one write.
	before := wc.writes.Load()
	for i := uint32(1); i <= 10; i++ {
		r.nc.Write(r.chunk('F', i, getEndpoints(i)))
		r.readResponses(i, 1)
	}
	if w := wc.writes.Load() - before; w != 10 {
		t.Errorf("%d writes for 10 requests one at a time, want 10", w)
	}

	// 50 pipelined in one write: the server reads them together and
	// answers with one write (a few if a read raced their arrival).
	const n = 50
	var all []byte
	for i := uint32(100); i < 100+n; i++ {
		all = append(all, r.chunk('F', i, getEndpoints(i))...)
	}
	before = wc.writes.Load()
	r.nc.Write(all)
	r.readResponses(100, n)
	w := wc.writes.Load() - before
	t.Logf("%d pipelined requests answered with %d write(s)", n, w)
	if w > 3 {
		t.Errorf("%d writes for %d pipelined requests, want 1 (at most 3)", w, n)
	}
}

func TestResponseTooLargeKeepsChannel(t *testing.T) {
	// The client accepts responses of at most 200 bytes: a GetEndpoints
	// response is larger and is replaced by a ServiceFault, and the
	// connection goes on serving.
	_, url := startCountingServer(t)
	r := dialRaw(t, url)
	r.nc.Write(header("HELF", helloBody(65535, 65535, 200, 0, url)))
	if typ, _, err := r.readMsg(); err != nil || typ != "ACKF" {
		t.Fatalf("Hello answered with %q, %v", typ, err)
	}
	r.open()
	unknown := ua.AppendMessage(nil, &ua.CloseSecureChannelRequest{RequestHeader: ua.RequestHeader{RequestHandle: 3}})
	for i, want := range []ua.StatusCode{status.BadResponseTooLarge, status.BadResponseTooLarge, status.BadServiceUnsupported} {
		req := getEndpoints(uint32(i + 1))
		if i == 2 {
			req = unknown
		}
		r.nc.Write(r.chunk('F', uint32(i+1), req))
		typ, body, err := r.readMsg()
		if err != nil || typ != "MSGF" {
			t.Fatalf("request %d: %q, %v", i+1, typ, err)
		}
		m, err := ua.DecodeMessage(ua.NewDecoder(body[16:]))
		if err != nil {
			t.Fatal(err)
		}
		f, ok := m.(*ua.ServiceFault)
		if !ok || f.ResponseHeader.ServiceResult != want || f.ResponseHeader.RequestHandle != uint32(i+1) {
			t.Fatalf("request %d: %T %+v, want a ServiceFault %v", i+1, m, m, want)
		}
	}
}
