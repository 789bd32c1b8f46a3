//go:build linux

package server_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/edged/edged/internal/uaclient"
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
