//go:build linux

package server_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/uasc"
)

// readVia reads Server_ServerStatus_State over c's session.
func readVia(c *uaclient.Client) error {
	var resp ua.ReadResponse
	return c.Call(&ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{
		{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}}, &resp)
}

// Sessions between requests are the poller's, not goroutines': 40 idle
// sessions add no goroutine each, and each is answered, Reads on the
// poller, session services and writes on a goroutine handed the
// connection and back; both ways without the poller too.
func TestPollerServes(t *testing.T) {
	for _, noPoller := range []bool{false, true} {
		_, url := startServer(t, server.Config{Poller: !noPoller, MaxConnections: 100})
		addr := url[len("opc.tcp://"):]
		base := runtime.NumGoroutine()
		var cs []*uaclient.Client
		for range 40 {
			c, err := uaclient.Dial(addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Conn().Close() })
			cs = append(cs, c)
		}
		for round := range 3 {
			for i, c := range cs {
				if err := readVia(c); err != nil {
					t.Fatalf("without the poller %v, round %d, client %d: Read: %v", noPoller, round, i, err)
				}
			}
		}
		// A Write (refused: not writable) goes through a goroutine.
		var wr ua.WriteResponse
		v, _ := ua.NewVariant(int32(0))
		err := cs[0].Call(&ua.WriteRequest{RequestHeader: cs[0].Header(), NodesToWrite: []ua.WriteValue{{
			NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue),
			Value: ua.DataValue{Value: v}}}}, &wr)
		if err != nil || len(wr.Results) != 1 || !wr.Results[0].IsBad() {
			t.Fatalf("without the poller %v: Write: %v %v", noPoller, err, wr.Results)
		}
		if err := readVia(cs[0]); err != nil {
			t.Fatalf("without the poller %v: Read after the Write: %v", noPoller, err)
		}
		time.Sleep(50 * time.Millisecond) // goroutines hand their connections back
		added := runtime.NumGoroutine() - base
		t.Logf("without the poller %v: %d goroutines more with 40 idle sessions", noPoller, added)
		if !noPoller && added >= 20 {
			t.Errorf("40 idle sessions on the poller added %d goroutines", added)
		}
		if noPoller && added < 40 {
			t.Errorf("40 idle sessions without the poller added %d goroutines, want one each", added)
		}
	}
}

// A client that sends and never reads fills its socket's send buffer:
// its connection leaves the poller before a write would wait, and the
// poller goes on serving the others.
func TestPollerSlowReader(t *testing.T) {
	// A write may wait a minute: far longer than the others' reads below.
	_, url := startServer(t, server.Config{Poller: true, Channel: &uasc.Config{WriteTimeout: time.Minute}})
	addr := url[len("opc.tcp://"):]
	slow, err := uaclient.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Conn().Close()
	other, err := uaclient.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Conn().Close()
	// Both between requests, on the poller.
	for _, c := range []*uaclient.Client{slow, other} {
		if err := readVia(c); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	// A Read of many nodes (34 KB of response), sent over and over, never
	// read back: far more than the socket buffers hold.
	req := &ua.ReadRequest{RequestHeader: slow.Header()}
	for range 1000 {
		req.NodesToRead = append(req.NodesToRead, ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, id.Server_ServerArray), AttributeID: uint32(ua.AttributeIDValue)})
	}
	tpl, err := slow.Template(req)
	if err != nil {
		t.Fatal(err)
	}
	// One request per write, a millisecond apart: each arrives whole and
	// the poller answers it, until the responses fill the socket.
	sent := 0
	for i := range 2000 { // 70 MB of responses
		slow.Conn().SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := slow.Conn().Write(slow.AppendStamped(nil, tpl, uint32(1000+i))); err != nil {
			break // the server stopped reading: its writes wait
		}
		sent++
		time.Sleep(time.Millisecond)
	}
	if sent == 2000 {
		t.Fatal("the server read every request: its writes never waited, so this test tests nothing")
	}
	t.Logf("%d requests sent before the server stopped reading", sent)
	for i := range 20 {
		other.Conn().SetDeadline(time.Now().Add(20 * time.Second))
		if err := readVia(other); err != nil {
			t.Fatalf("Read %d of another client while one does not read: %v", i, err)
		}
	}
}

// Connections on the poller stay in its epoll set, edge-triggered, and
// are re-armed without a system call after a read that emptied their
// socket; so no request may be lost between that read and the next
// wait. Eight clients each send lone Reads, two Reads in one write, a
// Read split over two writes (its connection goes to its goroutine and
// back) and a refused Write (the same), many times over; every response
// must come, in order. A lost wake-up leaves a client waiting until its
// deadline.
func TestPollerEdgeTriggered(t *testing.T) {
	_, url := startServer(t, server.Config{Poller: true, MaxConnections: 100})
	addr := url[len("opc.tcp://"):]
	read := func(c *uaclient.Client) *ua.ReadRequest {
		return &ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{
			{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}}
	}
	errs := make(chan error, 8)
	for k := range 8 {
		go func() {
			errs <- func() error {
				c, err := uaclient.Dial(addr, 10*time.Second)
				if err != nil {
					return err
				}
				defer c.Conn().Close()
				expect := func(ids ...uint32) error {
					for _, want := range ids {
						got, msg, err := c.ReadMessage()
						if err != nil {
							return err
						}
						if got != want {
							return fmt.Errorf("response to request %d, want %d", got, want)
						}
						var resp ua.ReadResponse
						if err := c.Decode(msg, &resp); err != nil {
							return err
						}
					}
					return nil
				}
				var b []byte
				for i := range 300 {
					c.Conn().SetDeadline(time.Now().Add(20 * time.Second))
					switch i % 4 {
					case 0: // a lone Read
						if err := readVia(c); err != nil {
							return fmt.Errorf("client %d, step %d: lone Read: %w", k, i, err)
						}
					case 1: // two Reads in one write
						a, z := c.NextRequestID(), c.NextRequestID()
						b = c.AppendRequest(b[:0], a, read(c))
						b = c.AppendRequest(b, z, read(c))
						if _, err := c.Conn().Write(b); err != nil {
							return err
						}
						if err := expect(a, z); err != nil {
							return fmt.Errorf("client %d, step %d: two Reads: %w", k, i, err)
						}
					case 2: // a Read in two writes
						a := c.NextRequestID()
						b = c.AppendRequest(b[:0], a, read(c))
						if _, err := c.Conn().Write(b[:10]); err != nil {
							return err
						}
						time.Sleep(100 * time.Microsecond)
						if _, err := c.Conn().Write(b[10:]); err != nil {
							return err
						}
						if err := expect(a); err != nil {
							return fmt.Errorf("client %d, step %d: split Read: %w", k, i, err)
						}
					case 3: // a Write, refused, answered on a goroutine
						var wr ua.WriteResponse
						v, _ := ua.NewVariant(int32(0))
						err := c.Call(&ua.WriteRequest{RequestHeader: c.Header(), NodesToWrite: []ua.WriteValue{{
							NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue),
							Value: ua.DataValue{Value: v}}}}, &wr)
						if err != nil || len(wr.Results) != 1 || !wr.Results[0].IsBad() {
							return fmt.Errorf("client %d, step %d: Write: %v %v", k, i, err, wr.Results)
						}
					}
				}
				return nil
			}()
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A read that fills the connection's receive buffer with whole requests
// leaves the rest in the socket, of which the edge-triggered epoll set
// says nothing more: the poller registers the socket anew, which
// reports it. Three Reads of exactly 8 KiB together, the channel's first
// receive buffer, and a fourth in the same write: all four are answered.
func TestPollerFullRead(t *testing.T) {
	_, url := startServer(t, server.Config{Poller: true})
	addr := url[len("opc.tcp://"):]
	c, err := uaclient.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Conn().Close()
	if err := readVia(c); err != nil { // on the poller from here
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	readOf := func(name string) *ua.ReadRequest {
		return &ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{
			{NodeID: ua.NewStringNodeID(1, name), AttributeID: uint32(ua.AttributeIDValue)}}}
	}
	size := func(name string) int {
		tpl, err := c.Template(readOf(name))
		if err != nil {
			t.Fatal(err)
		}
		return len(tpl)
	}
	const fill = 8192 // uasc's initialRecvBuf
	base := size("x") - 1
	names := []string{strings.Repeat("a", fill/3-base), strings.Repeat("b", fill/3-base)}
	names = append(names, strings.Repeat("c", fill-size(names[0])-size(names[1])-base))
	if got := size(names[0]) + size(names[1]) + size(names[2]); got != fill {
		t.Fatalf("three requests of %d bytes, want %d", got, fill)
	}
	names = append(names, "d")
	var b []byte
	var ids []uint32
	for _, n := range names {
		ids = append(ids, c.NextRequestID())
		b = c.AppendRequest(b, ids[len(ids)-1], readOf(n))
	}
	c.Conn().SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Conn().Write(b); err != nil {
		t.Fatal(err)
	}
	for _, want := range ids {
		got, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for the response to request %d: %v", want, err)
		}
		var resp ua.ReadResponse
		if got != want || c.Decode(msg, &resp) != nil || len(resp.Results) != 1 {
			t.Fatalf("response to request %d (%v), want %d", got, resp.Results, want)
		}
	}
}
