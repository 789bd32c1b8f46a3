package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
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
func startServerOn(t *testing.T, cfg server.Config, ln net.Listener) (*server.Server, string) {
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
	h := r.send(req)
	typ, body, err := r.readMsg()
	if err != nil || typ != "MSGF" {
		r.t.Fatalf("response: %q, %v", typ, err)
	}
	if got := binary.LittleEndian.Uint32(body[12:]); got != h {
		r.t.Fatalf("response to request %d, want %d", got, h)
	}
	m, err := ua.DecodeMessage(ua.NewDecoder(body[16:]))
	if err != nil {
		r.t.Fatal(err)
	}
	if f, ok := m.(*ua.ServiceFault); ok {
		r.t.Fatalf("%T answered with %v", req, f.ResponseHeader.ServiceResult)
	}
	return m
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
	if mi.Results[0].StatusCode != ua.StatusGood {
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
			if _, err := r.nc.Write(r.chunk('F', 1000, msg)); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					return
				}
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
	s2, err := c.Subscribe(ctx, &opcua.SubscriptionParameters{Interval: 5 * time.Millisecond}, notes)
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
