package uaclient

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func startServer(t *testing.T) string {
	t.Helper()
	return startServerWith(t, server.Config{})
}

// startServerWith serves cfg (its EndpointURL set) on a loopback port and
// returns the address.
func startServerWith(t *testing.T, cfg server.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.EndpointURL = "opc.tcp://" + ln.Addr().String()
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Shutdown(t.Context())
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func readNamespaces(c *Client) *ua.ReadRequest {
	return &ua.ReadRequest{
		RequestHeader: c.Header(),
		NodesToRead:   []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_NamespaceArray), AttributeID: uint32(ua.AttributeIDValue)}},
	}
}

// TestSession: the handshake, a synchronous Call, pipelined requests
// matched to their responses by request id, a bad ServiceResult as a
// StatusCode, and Close.
func TestSession(t *testing.T) {
	addr := startServer(t)
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Conn().SetDeadline(time.Now().Add(10 * time.Second)) // bounded, never a timing assertion
	if c.Token().IsNull() {
		t.Error("no authentication token after the handshake")
	}

	var resp ua.ReadResponse
	if err := c.Call(readNamespaces(c), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 || resp.Results[0].Status.IsBad() {
		t.Fatalf("Read results %+v", resp.Results)
	}
	if s, ok := resp.Results[0].Value.Value().([]string); !ok || len(s) < 2 || s[0] != "http://opcfoundation.org/UA/" {
		t.Errorf("NamespaceArray = %v", resp.Results[0].Value)
	}

	var ids [3]uint32
	for i := range ids {
		if ids[i], err = c.Send(readNamespaces(c)); err != nil {
			t.Fatal(err)
		}
	}
	// One chunk at a time: the first response's.
	if chunk, err := c.ReadChunk(); err != nil || RequestID(chunk) != ids[0] || string(chunk[:4]) != "MSGF" {
		t.Fatalf("ReadChunk: %v, request id %d, want %d", err, RequestID(chunk), ids[0])
	}
	if ids[0], err = c.Send(readNamespaces(c)); err != nil { // in its place, answered last
		t.Fatal(err)
	}
	ids = [3]uint32{ids[1], ids[2], ids[0]}
	for i := range ids {
		got, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if got != ids[i] {
			t.Errorf("response %d: request id %d, want %d", i, got, ids[i])
		}
		if err := c.Decode(msg, &resp); err != nil || len(resp.Results) != 1 {
			t.Errorf("response %d: %v, %d results", i, err, len(resp.Results))
		}
	}

	err = c.Call(&ua.ReadRequest{RequestHeader: c.Header()}, &resp) // no nodes
	if !errors.Is(err, status.BadNothingToDo) {
		t.Errorf("Read of no nodes: %v, want %v", err, status.BadNothingToDo)
	}
	if err := c.Close(5 * time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestReadMessageChunks: a response in several chunks is reassembled, an
// aborted one is an error with its status.
func TestReadMessageChunks(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := New(a, "opc.tcp://pipe")
	a.SetDeadline(time.Now().Add(10 * time.Second))
	chunk := func(typ string, reqID uint32, body []byte) []byte {
		ch := append([]byte(typ), make([]byte, MsgHeaderLen-len(typ))...)
		binary.LittleEndian.PutUint32(ch[OffRequestID:], reqID)
		ch = append(ch, body...)
		putSize(ch)
		return ch
	}
	abort := ua.AppendString(ua.AppendUint32(nil, uint32(status.BadEncodingLimitsExceeded)), "too big")
	go func() {
		var w []byte
		w = append(w, chunk("MSGC", 7, []byte("hel"))...)
		w = append(w, chunk("MSGC", 7, []byte("lo, "))...)
		w = append(w, chunk("MSGF", 7, []byte("world"))...)
		w = append(w, chunk("MSGF", 8, []byte("single"))...)
		w = append(w, chunk("MSGC", 9, []byte("part"))...)
		w = append(w, chunk("MSGA", 9, abort)...)
		b.Write(w)
	}()
	for _, want := range []struct {
		id  uint32
		msg string
	}{{7, "hello, world"}, {8, "single"}} {
		id, msg, err := c.ReadMessage()
		if err != nil || id != want.id || string(msg) != want.msg {
			t.Errorf("ReadMessage = %d, %q, %v; want %d, %q", id, msg, err, want.id, want.msg)
		}
	}
	if _, _, err := c.ReadMessage(); !errors.Is(err, status.BadEncodingLimitsExceeded) {
		t.Errorf("aborted response: %v", err)
	}
}

// TestDecodeAllocs: decoding a good response into the value of the
// previous one does not allocate; a ServiceFault is its status.
func TestDecodeAllocs(t *testing.T) {
	c := &Client{}
	msg := ua.AppendMessage(nil, &ua.PublishResponse{
		SubscriptionID: 3,
		NotificationMessage: ua.NotificationMessage{SequenceNumber: 9, NotificationData: []ua.ExtensionObject{{
			Body: &ua.DataChangeNotification{MonitoredItems: []ua.MonitoredItemNotification{{ClientHandle: 1, Value: ua.DataValue{Value: ua.MustVariant(uint32(42))}}}},
		}}},
		Results: []ua.StatusCode{status.Good},
	})
	var resp ua.PublishResponse
	if err := c.Decode(msg, &resp); err != nil {
		t.Fatal(err)
	}
	dc, ok := resp.NotificationMessage.NotificationData[0].Body.(*ua.DataChangeNotification)
	if !ok || len(dc.MonitoredItems) != 1 {
		t.Fatalf("decoded %+v", resp.NotificationMessage)
	}
	if v, _ := dc.MonitoredItems[0].Value.Value.Uint32(); v != 42 || resp.SubscriptionID != 3 {
		t.Errorf("value %v, subscription %d", dc.MonitoredItems[0].Value.Value, resp.SubscriptionID)
	}
	if n := testing.AllocsPerRun(100, func() { c.Decode(msg, &resp) }); n != 0 {
		t.Errorf("Decode: %v allocations, want 0", n)
	}
	fault := ua.AppendMessage(nil, &ua.ServiceFault{ResponseHeader: ua.ResponseHeader{ServiceResult: status.BadSessionIDInvalid}})
	if err := c.Decode(fault, &resp); !errors.Is(err, status.BadSessionIDInvalid) {
		t.Errorf("ServiceFault: %v", err)
	}
}
