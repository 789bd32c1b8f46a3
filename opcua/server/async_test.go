package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// Slow peers: one client that does not read, or one request waiting for
// a device, must not hold up the others.

// smallBufListener gives its connections the smallest socket send buffer
// the system allows, so that a client that does not read fills it fast.
type smallBufListener struct{ net.Listener }

func (l smallBufListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err == nil {
		nc.(*net.TCPConn).SetWriteBuffer(4096)
	}
	return nc, err
}

// startServerOn serves cfg on ln until the test ends.
func startServerOn(t testing.TB, cfg server.Config, ln net.Listener) (*server.Server, string) {
	t.Helper()
	cfg.EndpointURL = "opc.tcp://" + ln.Addr().String()
	srv, err := server.New(cfg)
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
	return srv, cfg.EndpointURL
}

// addVariable adds ns=1;s=name, read from src's handle h, to the Objects
// folder.
func addVariable(t *testing.T, as *addrspace.Space, name string, dataType uint32, src addrspace.SourceID, h uint32) {
	t.Helper()
	if err := as.AddNode(&addrspace.Node{
		ID: ua.NewStringNodeID(1, name), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: name},
		DataType: ua.NewNumericNodeID(0, dataType), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead), Source: src, Handle: h,
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
}

// rawSession is a session of a hand-driven client (rawConn).
type rawSession struct {
	*rawConn
	token  ua.NodeID
	handle uint32
}

// send writes req with the next request id and handle and the session's
// token, and returns the handle.
func (r *rawSession) send(req ua.Body) uint32 {
	r.t.Helper()
	r.handle++
	if h := reqHeader(req); h != nil {
		h.RequestHandle, h.AuthenticationToken = r.handle, r.token
	}
	if _, err := r.nc.Write(r.chunk('F', r.handle, ua.AppendMessage(nil, req))); err != nil {
		r.t.Fatalf("raw client write: %v", err)
	}
	return r.handle
}

// call sends req and reads its response.
func (r *rawSession) call(req ua.Body) ua.Body {
	r.t.Helper()
	return r.response(r.send(req))
}

// response reads the next response (within 30 s) and checks that it
// answers request id and handle h (the tests use the same number) and is
// no ServiceFault.
func (r *rawSession) response(h uint32) ua.Body {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	typ, body, err := r.readMsg()
	if err != nil || typ != "MSGF" {
		r.t.Fatalf("response to request %d: %q, %v", h, typ, err)
	}
	if got := binary.LittleEndian.Uint32(body[12:]); got != h {
		r.t.Fatalf("response to request %d, want %d", got, h)
	}
	m, err := ua.DecodeMessage(ua.NewDecoder(body[16:]))
	if err != nil {
		r.t.Fatal(err)
	}
	if f, ok := m.(*ua.ServiceFault); ok {
		r.t.Fatalf("request %d answered with %v", h, f.ResponseHeader.ServiceResult)
	}
	if rh := respHeader(m); rh == nil || rh.RequestHandle != h {
		r.t.Fatalf("response %T to request %d echoes handle %v", m, h, rh)
	}
	return m
}

// respHeader returns the ResponseHeader of the responses the tests read.
func respHeader(b ua.Body) *ua.ResponseHeader {
	switch r := b.(type) {
	case *ua.ReadResponse:
		return &r.ResponseHeader
	case *ua.WriteResponse:
		return &r.ResponseHeader
	case *ua.CallResponse:
		return &r.ResponseHeader
	case *ua.CreateSessionResponse:
		return &r.ResponseHeader
	case *ua.ActivateSessionResponse:
		return &r.ResponseHeader
	case *ua.CreateSubscriptionResponse:
		return &r.ResponseHeader
	case *ua.CreateMonitoredItemsResponse:
		return &r.ResponseHeader
	}
	return nil
}

// reqHeader returns the RequestHeader of the requests the tests send.
func reqHeader(b ua.Body) *ua.RequestHeader {
	switch r := b.(type) {
	case *ua.CreateSessionRequest:
		return &r.RequestHeader
	case *ua.ActivateSessionRequest:
		return &r.RequestHeader
	case *ua.CreateSubscriptionRequest:
		return &r.RequestHeader
	case *ua.CreateMonitoredItemsRequest:
		return &r.RequestHeader
	case *ua.PublishRequest:
		return &r.RequestHeader
	case *ua.ReadRequest:
		return &r.RequestHeader
	case *ua.WriteRequest:
		return &r.RequestHeader
	case *ua.CallRequest:
		return &r.RequestHeader
	}
	return nil
}

// openRawSession opens a channel and an anonymous session with a raw
// client whose socket receive buffer is as small as the system allows.
func openRawSession(t *testing.T, url string) *rawSession {
	t.Helper()
	r := &rawSession{rawConn: dialRaw(t, url)}
	r.nc.(*net.TCPConn).SetReadBuffer(4096)
	r.nc.SetDeadline(time.Time{})
	r.hello(url)
	r.open()
	cs := r.call(&ua.CreateSessionRequest{SessionName: "stalled", RequestedSessionTimeout: 600000}).(*ua.CreateSessionResponse)
	r.token = cs.AuthenticationToken
	r.call(&ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{
		TypeID:   (&ua.AnonymousIdentityToken{}).BinaryEncodingID(),
		Encoding: ua.ExtensionObjectBinary,
		Body:     &ua.AnonymousIdentityToken{PolicyID: server.AnonymousPolicyID},
	}})
	return r
}

// TestStalledClientDoesNotStallOthers: session 1, a raw client, subscribes
// to a large value that changes every cycle and keeps sending Publish
// requests, but never reads its socket; the server's writes to it stall
// (the channel's write timeout is far beyond the test's). Session 2, a
// gopcua client of the same server, still receives its data changes.
func TestStalledClientDoesNotStallOthers(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, url := startServerOn(t, server.Config{Channel: &uasc.Config{WriteTimeout: time.Hour}}, smallBufListener{inner})
	as := srv.AddressSpace()
	var count atomic.Uint32
	src := as.AddSource(addrspace.SourceFunc(func(h uint32, dv *ua.DataValue) {
		n := count.Load()
		switch h {
		case 1:
			dv.Value.SetUint32(n)
		case 2:
			b := make([]byte, 16<<10)
			binary.LittleEndian.PutUint32(b, n)
			dv.Value.SetByteString(b)
		}
	}))
	addVariable(t, as, "counter", id.UInt32, src, 1)
	addVariable(t, as, "blob", id.ByteString, src, 2)

	// Session 1: subscribes to the blob, then only writes.
	r := openRawSession(t, url)
	sub := r.call(&ua.CreateSubscriptionRequest{
		RequestedPublishingInterval: 5, RequestedMaxKeepAliveCount: 10, RequestedLifetimeCount: 1000, PublishingEnabled: true,
	}).(*ua.CreateSubscriptionResponse)
	mi := r.call(&ua.CreateMonitoredItemsRequest{
		SubscriptionID: sub.SubscriptionID, TimestampsToReturn: ua.TimestampsToReturnBoth,
		ItemsToCreate: []ua.MonitoredItemCreateRequest{{
			ItemToMonitor:       ua.ReadValueID{NodeID: ua.NewStringNodeID(1, "blob"), AttributeID: uint32(ua.AttributeIDValue)},
			MonitoringMode:      ua.MonitoringModeReporting,
			RequestedParameters: ua.MonitoringParameters{ClientHandle: 1, SamplingInterval: 5, QueueSize: 1, DiscardOldest: true},
		}},
	}).(*ua.CreateMonitoredItemsResponse)
	if mi.Results[0].StatusCode != status.Good {
		t.Fatalf("CreateMonitoredItems: %v", mi.Results[0].StatusCode)
	}
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		// Publish requests until the socket blocks (the server stopped
		// reading) or the test ends; the client never reads.
		defer close(writerDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			r.nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			msg := ua.AppendMessage(nil, &ua.PublishRequest{RequestHeader: ua.RequestHeader{RequestHandle: 1, AuthenticationToken: r.token}})
			if _, err := r.nc.Write(r.chunk('F', 1000, msg)); err != nil {
				// Closed, or the server stopped reading (its
				// connection's goroutine waits for the stalled write).
				return
			}
		}
	}()
	defer func() { close(stop); <-writerDone; r.nc.Close() }()

	// The values change every 5 ms, as the scan engine would publish them.
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			count.Add(1)
			srv.SourceChanged(src, []uint32{1, 2})
		}
	}()

	// Session 2: gopcua counts its data changes.
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)
	notes := make(chan *opcua.PublishNotificationData, 256)
	s2, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 5 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Cancel(ctx)
	res, err := s2.Monitor(ctx, gua.TimestampsToReturnBoth,
		opcua.NewMonitoredItemCreateRequestWithDefaults(gua.NewStringNodeID(1, "counter"), gua.AttributeIDValue, 1))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %v", err, res)
	}
	const want = 100
	seen := map[uint32]bool{}
	timeout := time.After(30 * time.Second)
	for len(seen) < want {
		select {
		case n := <-notes:
			if n.Error != nil {
				t.Fatal(n.Error)
			}
			if dcn, ok := n.Value.(*gua.DataChangeNotification); ok {
				for _, item := range dcn.MonitoredItems {
					seen[item.Value.Value.Value().(uint32)] = true
				}
			}
		case <-timeout:
			t.Fatalf("session 2 received %d changes in 30 s, want %d", len(seen), want)
		}
	}
}

// slowSink is a device that answers each write when the test says so.
type slowSink struct {
	started chan ua.Variant         // the value of each write started
	answers chan chan ua.StatusCode // the Pending result of each
}

func newSlowSink() *slowSink {
	return &slowSink{started: make(chan ua.Variant, 64), answers: make(chan chan ua.StatusCode, 64)}
}

func (s *slowSink) WriteValue(_ uint32, wv *ua.WriteValue) (ua.StatusCode, addrspace.Pending) {
	p := make(chan ua.StatusCode, 1)
	s.answers <- p
	s.started <- wv.Value.Value
	return status.Good, p
}

// next waits (up to 30 s) for the next write to start and returns its
// value and the channel that answers it.
func (s *slowSink) next(t *testing.T) (ua.Variant, chan ua.StatusCode) {
	t.Helper()
	select {
	case v := <-s.started:
		return v, <-s.answers
	case <-time.After(30 * time.Second):
		t.Fatal("no write reached the device in 30 s")
	}
	return ua.Variant{}, nil
}

// TestWriteWaitingForDeviceDoesNotBlockConnection: a Write to a device
// that has not answered yet is pending while a Read on the same session
// and channel is answered; then the device answers, and the Write's
// response arrives with its handle and the device's status.
func TestWriteWaitingForDeviceDoesNotBlockConnection(t *testing.T) {
	srv, url := startServer(t, server.Config{WriteTimeout: time.Hour})
	as := srv.AddressSpace()
	src := as.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) { dv.Value.SetFloat64(1.5) }))
	sink := newSlowSink()
	if err := as.AddNode(&addrspace.Node{
		ID: ua.NewStringNodeID(1, "setpoint"), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "setpoint"},
		DataType: ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeCurrentWrite), Source: src, Handle: 1, Sink: sink,
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	r := openRawSession(t, url)
	nid := ua.NewStringNodeID(1, "setpoint")
	write := func(v float64) uint32 {
		return r.send(&ua.WriteRequest{NodesToWrite: []ua.WriteValue{{
			NodeID: nid, AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant(v)},
		}}})
	}
	w1 := write(42)
	v1, answer1 := sink.next(t)
	if v1.Value() != 42.0 {
		t.Fatalf("the device got %v, want 42", v1.Value())
	}
	// The first Write waits for the device; the connection goes on: a
	// second Write reaches the device, and a Read is answered.
	w2 := write(43)
	v2, answer2 := sink.next(t)
	if v2.Value() != 43.0 {
		t.Fatalf("the device got %v, want 43", v2.Value())
	}
	rd := r.send(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: nid, AttributeID: uint32(ua.AttributeIDValue)}}})
	read := r.response(rd).(*ua.ReadResponse)
	if len(read.Results) != 1 || read.Results[0].Value.Value() != 1.5 {
		t.Fatalf("Read: %+v", read.Results)
	}
	// The device answers the second Write first: its response leaves
	// first, with its own handle.
	answer2 <- status.Good
	if res := r.response(w2).(*ua.WriteResponse).Results; len(res) != 1 || res[0] != status.Good {
		t.Fatalf("second Write: %v", res)
	}
	answer1 <- status.BadCommunicationError
	if res := r.response(w1).(*ua.WriteResponse).Results; len(res) != 1 || res[0] != status.BadCommunicationError {
		t.Fatalf("first Write: %v, want [BadCommunicationError]", res)
	}
}

// TestCallWaitingDoesNotBlockConnection: two Calls of a method whose
// handler waits are in progress while a Read on the same session and
// channel is answered; each handler still sees its own input argument
// (the connection reused its request values for the requests that
// followed), and each response echoes its handle.
func TestCallWaitingDoesNotBlockConnection(t *testing.T) {
	srv, url := startServer(t, server.Config{WriteTimeout: time.Hour})
	as := srv.AddressSpace()
	started := make(chan uint32, 2)
	release := make(chan struct{})
	if err := as.AddMethod(&addrspace.Method{
		ID: ua.NewStringNodeID(1, "Slow"), BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "Slow"},
		Object:          ua.NewNumericNodeID(0, id.ObjectsFolder),
		InputArguments:  []ua.Argument{{Name: "x", DataType: ua.NewNumericNodeID(0, id.UInt32), ValueRank: addrspace.ValueRankScalar}},
		OutputArguments: []ua.Argument{{Name: "y", DataType: ua.NewNumericNodeID(0, id.UInt32), ValueRank: addrspace.ValueRankScalar}},
		Handler: func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			x, _ := in[0].Uint32()
			started <- x
			select {
			case <-release:
			case <-ctx.Done():
				return status.BadTimeout, nil
			}
			x, _ = in[0].Uint32() // after the requests that followed
			return status.Good, []ua.Variant{ua.MustVariant(x + 1)}
		},
	}); err != nil {
		t.Fatal(err)
	}
	r := openRawSession(t, url)
	call := func(x uint32) uint32 {
		return r.send(&ua.CallRequest{MethodsToCall: []ua.CallMethodRequest{{
			ObjectID: ua.NewNumericNodeID(0, id.ObjectsFolder), MethodID: ua.NewStringNodeID(1, "Slow"),
			InputArguments: []ua.Variant{ua.MustVariant(x)},
		}}})
	}
	waitStart := func(want uint32) {
		t.Helper()
		select {
		case x := <-started:
			if x != want {
				t.Fatalf("handler started with %d, want %d", x, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no handler started in 30 s")
		}
	}
	c1 := call(5)
	waitStart(5)
	c2 := call(7)
	waitStart(7)
	rd := r.send(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}})
	if read := r.response(rd).(*ua.ReadResponse); len(read.Results) != 1 || read.Results[0].Status != status.Good {
		t.Fatalf("Read: %+v", read.Results)
	}
	close(release)
	got := map[uint32]uint32{}
	for range 2 {
		// The two answers may leave in either order.
		r.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		typ, body, err := r.readMsg()
		if err != nil || typ != "MSGF" {
			t.Fatalf("Call response: %q, %v", typ, err)
		}
		reqID := binary.LittleEndian.Uint32(body[12:])
		m, err := ua.DecodeMessage(ua.NewDecoder(body[16:]))
		if err != nil {
			t.Fatal(err)
		}
		cr, ok := m.(*ua.CallResponse)
		if !ok || cr.ResponseHeader.RequestHandle != reqID || len(cr.Results) != 1 || cr.Results[0].StatusCode != status.Good ||
			len(cr.Results[0].OutputArguments) != 1 {
			t.Fatalf("response to request %d: %T %+v", reqID, m, m)
		}
		y, _ := cr.Results[0].OutputArguments[0].Uint32()
		got[reqID] = y
	}
	if got[c1] != 6 || got[c2] != 8 {
		t.Fatalf("outputs by request %v, want %d: 6, %d: 8", got, c1, c2)
	}
}
