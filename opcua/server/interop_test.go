package server_test

// Interop tests against the independent client github.com/gopcua/opcua
// v0.8.0, and robustness tests through the whole server with raw UA-TCP
// clients. Everything runs on loopback; every wait is bounded.

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gid "github.com/gopcua/opcua/id"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// startServer serves cfg on a loopback port until the test ends.
func startServer(t testing.TB, cfg server.Config) (*server.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startServerOn(t, cfg, ln)
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a gopcua client with SecurityPolicy None and anonymous.
func connect(t testing.TB, ctx context.Context, url string) *opcua.Client {
	t.Helper()
	c, err := opcua.NewClient(url,
		opcua.SecurityPolicy("None"),
		opcua.SecurityMode(gua.MessageSecurityModeNone),
		opcua.AuthAnonymous(),
		opcua.AutoReconnect(false),
		opcua.SessionTimeout(time.Minute),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c
}

func TestInteropGetEndpoints(t *testing.T) {
	_, url := startServer(t, server.Config{})
	ctx := testCtx(t)
	eps, err := opcua.GetEndpoints(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 {
		t.Fatalf("%d endpoints, want 1", len(eps))
	}
	e := eps[0]
	if e.EndpointURL != url || e.SecurityPolicyURI != gua.SecurityPolicyURINone || e.SecurityMode != gua.MessageSecurityModeNone ||
		len(e.UserIdentityTokens) != 1 || e.UserIdentityTokens[0].TokenType != gua.UserTokenTypeAnonymous {
		t.Errorf("endpoint %+v", e)
	}
	servers, err := opcua.FindServers(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].ApplicationURI != server.DefaultApplicationURI {
		t.Errorf("FindServers: %+v", servers)
	}
}

// browseAll browses node forward over hierarchical references, following
// continuation points with BrowseNext.
func browseAll(t *testing.T, ctx context.Context, c *opcua.Client, node *gua.NodeID, maxRefs uint32) []*gua.ReferenceDescription {
	t.Helper()
	resp, err := c.Browse(ctx, &gua.BrowseRequest{
		View:                          &gua.ViewDescription{ViewID: gua.NewTwoByteNodeID(0)},
		RequestedMaxReferencesPerNode: maxRefs,
		NodesToBrowse: []*gua.BrowseDescription{{
			NodeID: node, BrowseDirection: gua.BrowseDirectionForward,
			ReferenceTypeID: gua.NewNumericNodeID(0, gid.HierarchicalReferences), IncludeSubtypes: true,
			ResultMask: uint32(gua.BrowseResultMaskAll),
		}},
	})
	if err != nil {
		t.Fatalf("Browse %v: %v", node, err)
	}
	res := resp.Results[0]
	if res.StatusCode != gua.StatusOK {
		t.Fatalf("Browse %v: %v", node, res.StatusCode)
	}
	refs := res.References
	for cp := res.ContinuationPoint; len(cp) > 0; {
		if maxRefs > 0 && uint32(len(res.References)) > maxRefs {
			t.Fatalf("%d references, more than %d", len(res.References), maxRefs)
		}
		next, err := c.BrowseNext(ctx, &gua.BrowseNextRequest{ContinuationPoints: [][]byte{cp}})
		if err != nil {
			t.Fatalf("BrowseNext: %v", err)
		}
		res = next.Results[0]
		if res.StatusCode != gua.StatusOK {
			t.Fatalf("BrowseNext: %v", res.StatusCode)
		}
		refs = append(refs, res.References...)
		cp = res.ContinuationPoint
	}
	return refs
}

func findRef(refs []*gua.ReferenceDescription, name string) *gua.ReferenceDescription {
	for _, r := range refs {
		if r.BrowseName.Name == name {
			return r
		}
	}
	return nil
}

func TestInteropBrowseReadWrite(t *testing.T) {
	srv, url := startServer(t, server.Config{})
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)

	// Root → Objects → Gateway → Setpoint, Model.
	objects := findRef(browseAll(t, ctx, c, gua.NewNumericNodeID(0, gid.RootFolder), 0), "Objects")
	if objects == nil {
		t.Fatal("Root has no Objects")
	}
	objRefs := browseAll(t, ctx, c, objects.NodeID.NodeID, 0)
	gw := findRef(objRefs, server.GatewayFolderName)
	if gw == nil {
		t.Fatalf("Objects has no Gateway folder: %v", objRefs)
	}
	gwRefs := browseAll(t, ctx, c, gw.NodeID.NodeID, 0)
	setpoint, model := findRef(gwRefs, "Setpoint"), findRef(gwRefs, "Model")
	if setpoint == nil || model == nil {
		t.Fatalf("Gateway lacks Setpoint or Model: %v", gwRefs)
	}
	if setpoint.NodeID.NodeID.String() != srv.GatewayNodeID("Setpoint").String() {
		t.Errorf("Setpoint is %v, want %v", setpoint.NodeID.NodeID, srv.GatewayNodeID("Setpoint"))
	}

	// BrowseNext: Objects one reference at a time gives the same list.
	small := browseAll(t, ctx, c, objects.NodeID.NodeID, 1)
	if len(small) != len(objRefs) || len(small) < 2 {
		t.Errorf("browsing Objects one reference at a time gave %d references, at once %d", len(small), len(objRefs))
	}

	// ServerStatus/CurrentTime and the whole ServerStatus.
	rr, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
		{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus_CurrentTime), AttributeID: gua.AttributeIDValue},
		{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus), AttributeID: gua.AttributeIDValue},
		{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerCapabilities_OperationLimits_MaxNodesPerRead), AttributeID: gua.AttributeIDValue},
	}, TimestampsToReturn: gua.TimestampsToReturnBoth})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Results[0].Status != gua.StatusOK {
		t.Fatalf("CurrentTime: %v", rr.Results[0].Status)
	}
	if now, ok := rr.Results[0].Value.Value().(time.Time); !ok || time.Since(now).Abs() > time.Minute {
		t.Errorf("CurrentTime = %v", rr.Results[0].Value.Value())
	}
	if st, ok := rr.Results[1].Value.Value().(*gua.ExtensionObject); !ok {
		t.Errorf("ServerStatus = %T %v (%v)", rr.Results[1].Value.Value(), rr.Results[1].Value.Value(), rr.Results[1].Status)
	} else if ss, ok := st.Value.(*gua.ServerStatusDataType); !ok || ss.State != gua.ServerStateRunning || ss.BuildInfo.ProductName != "edged" {
		t.Errorf("ServerStatus = %+v", st.Value)
	}
	if n, ok := rr.Results[2].Value.Value().(uint32); !ok || n != server.DefaultMaxNodesPerRequest {
		t.Errorf("MaxNodesPerRead = %v", rr.Results[2].Value.Value())
	}

	// Write Setpoint and read it back; Model is read-only.
	v, _ := gua.NewVariant(42.5)
	wr, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{
		{NodeID: setpoint.NodeID.NodeID, AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: v}},
		{NodeID: model.NodeID.NodeID, AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: v}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if wr.Results[0] != gua.StatusOK || wr.Results[1] != gua.StatusBadNotWritable {
		t.Errorf("Write results %v, want [Good BadNotWritable]", wr.Results)
	}
	rr, err = c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
		{NodeID: setpoint.NodeID.NodeID, AttributeID: gua.AttributeIDValue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := rr.Results[0].Value.Value().(float64); !ok || f != 42.5 {
		t.Errorf("Setpoint read back as %v (%v)", rr.Results[0].Value.Value(), rr.Results[0].Status)
	}
	if d := srv.Diagnostics(); d.CurrentSessionCount != 1 {
		t.Errorf("CurrentSessionCount %d, want 1", d.CurrentSessionCount)
	}
}

// waitFor polls cond until it holds or a generous bound passes (the bound
// only stops a hung test; no duration is asserted).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestInteropConnectCycles(t *testing.T) {
	if testing.Short() {
		t.Skip("100 connections")
	}
	srv, url := startServer(t, server.Config{})
	ctx := testCtx(t)
	cycle := func() {
		c := connect(t, ctx, url)
		if _, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus_CurrentTime), AttributeID: gua.AttributeIDValue}}}); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
	}
	// Warm up (gopcua starts process-wide goroutines once), then measure.
	cycle()
	waitFor(t, "sessions closed", func() bool { return srv.Diagnostics().CurrentSessionCount == 0 })
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	baseline := runtime.NumGoroutine()

	for range 100 {
		cycle()
	}
	waitFor(t, "sessions back to 0", func() bool { return srv.Diagnostics().CurrentSessionCount == 0 })
	if d := srv.Diagnostics(); d.CumulatedSessionCount != 101 || d.SessionAbortCount != 0 || d.SessionTimeoutCount != 0 {
		t.Errorf("diagnostics %+v", d)
	}
	waitFor(t, "goroutines back to baseline", func() bool { return runtime.NumGoroutine() <= baseline })
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 4<<20 {
		t.Errorf("heap grew by %d bytes over 100 connections", grow)
	}
}

// ---- robustness ----

// rawConn is a hand-driven UA-TCP client for the robustness tests.
type rawConn struct {
	t         testing.TB
	nc        net.Conn
	channelID uint32
	tokenID   uint32
	seq       uint32
}

func dialRaw(t testing.TB, url string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", url[len("opc.tcp://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	return &rawConn{t: t, nc: nc}
}

func header(typ string, body []byte) []byte {
	b := append([]byte(typ), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], uint32(8+len(body)))
	return append(b, body...)
}

func helloBody(recv, send, maxMsg, maxChunks uint32, url string) []byte {
	var b []byte
	b = ua.AppendUint32(b, 0)
	b = ua.AppendUint32(b, recv)
	b = ua.AppendUint32(b, send)
	b = ua.AppendUint32(b, maxMsg)
	b = ua.AppendUint32(b, maxChunks)
	return ua.AppendString(b, url)
}

// readMsg reads one message: its type (4 bytes) and body.
func (r *rawConn) readMsg() (string, []byte, error) {
	var h [8]byte
	if _, err := io.ReadFull(r.nc, h[:]); err != nil {
		return "", nil, err
	}
	n := binary.LittleEndian.Uint32(h[4:])
	if n < 8 || n > 1<<20 {
		r.t.Fatalf("message size %d", n)
	}
	body := make([]byte, n-8)
	_, err := io.ReadFull(r.nc, body)
	return string(h[:4]), body, err
}

// wantError reads until an Error message with code and then the end of
// the connection.
func (r *rawConn) wantError(code ua.StatusCode) {
	r.t.Helper()
	for {
		typ, body, err := r.readMsg()
		if err != nil {
			r.t.Fatalf("no Error %v before the connection ended: %v", code, err)
		}
		if typ != "ERRF" {
			continue
		}
		if got := ua.StatusCode(binary.LittleEndian.Uint32(body)); got != code {
			r.t.Fatalf("Error %v, want %v", got, code)
		}
		break
	}
	r.wantClosed()
}

func (r *rawConn) wantClosed() {
	r.t.Helper()
	if _, err := io.Copy(io.Discard, r.nc); err != nil && !errors.Is(err, io.EOF) && !isReset(err) {
		r.t.Fatalf("connection not closed: %v", err)
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

func (r *rawConn) hello(url string) {
	r.t.Helper()
	r.nc.Write(header("HELF", helloBody(65535, 65535, 0, 0, url)))
	typ, _, err := r.readMsg()
	if err != nil || typ != "ACKF" {
		r.t.Fatalf("Hello answered with %q, %v", typ, err)
	}
}

// open runs OpenSecureChannel with SecurityPolicy None.
func (r *rawConn) open() {
	r.t.Helper()
	var b []byte
	b = ua.AppendUint32(b, 0)
	b = ua.AppendString(b, server.SecurityPolicyNone)
	b = ua.AppendByteString(b, nil)
	b = ua.AppendByteString(b, nil)
	r.seq++
	b = ua.AppendUint32(b, r.seq)
	b = ua.AppendUint32(b, r.seq)
	b = ua.AppendMessage(b, &ua.OpenSecureChannelRequest{RequestType: ua.SecurityTokenRequestTypeIssue,
		SecurityMode: ua.MessageSecurityModeNone, RequestedLifetime: 600000})
	r.nc.Write(header("OPNF", b))
	typ, body, err := r.readMsg()
	if err != nil || typ != "OPNF" {
		r.t.Fatalf("OpenSecureChannel answered with %q, %v", typ, err)
	}
	d := ua.NewDecoder(body)
	d.ReadUint32()
	d.ReadString()
	d.ReadByteString(nil)
	d.ReadByteString(nil)
	d.ReadUint32()
	d.ReadUint32()
	m, err := ua.DecodeMessage(d)
	if err != nil {
		r.t.Fatal(err)
	}
	tok := m.(*ua.OpenSecureChannelResponse).SecurityToken
	r.channelID, r.tokenID = tok.ChannelID, tok.TokenID
}

// chunk returns a MSG chunk of type typ ('F', 'C') with body.
func (r *rawConn) chunk(typ byte, requestID uint32, body []byte) []byte {
	var b []byte
	b = ua.AppendUint32(b, r.channelID)
	b = ua.AppendUint32(b, r.tokenID)
	r.seq++
	b = ua.AppendUint32(b, r.seq)
	b = ua.AppendUint32(b, requestID)
	return header("MSG"+string(typ), append(b, body...))
}

// reader is a gopcua client that keeps reading CurrentTime until stopped,
// counting its successes and failures.
type reader struct {
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	ok, fail int
	lastErr  error
}

func startReader(t *testing.T, ctx context.Context, url string) *reader {
	c := connect(t, ctx, url)
	r := &reader{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer c.Close(ctx)
		for {
			select {
			case <-r.stop:
				return
			default:
			}
			_, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
				{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus_CurrentTime), AttributeID: gua.AttributeIDValue}}})
			r.mu.Lock()
			if err != nil {
				r.fail++
				r.lastErr = err
			} else {
				r.ok++
			}
			r.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	return r
}

func (r *reader) okCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok
}

// finish stops the reader and checks that it never failed and kept
// reading during the test.
func (r *reader) finish(t *testing.T, before int) {
	t.Helper()
	waitFor(t, "reads after the attack", func() bool { return r.okCount() > before+5 })
	close(r.stop)
	<-r.done
	if r.fail > 0 {
		t.Errorf("the well-behaved client failed %d reads: %v", r.fail, r.lastErr)
	}
}

func TestRobustness(t *testing.T) {
	// Not paced: the 1000 connections below come at once, and this
	// test is about their answers (TestAcceptPacing checks the pacing).
	cfg := server.Config{MaxConnections: 20, AcceptRate: -1}
	cfg.Channel = &uasc.Config{MessageTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		HelloTimeout: 500 * time.Millisecond, CloseTimeout: 100 * time.Millisecond}
	_, url := startServer(t, cfg)
	ctx := testCtx(t)
	rd := startReader(t, ctx, url)
	waitFor(t, "first reads", func() bool { return rd.okCount() > 0 })

	t.Run("garbage", func(t *testing.T) {
		r := dialRaw(t, url)
		r.nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		r.wantError(status.BadTcpMessageTypeInvalid)
	})
	t.Run("absurd hello size", func(t *testing.T) {
		r := dialRaw(t, url)
		h := header("HELF", helloBody(65535, 65535, 0, 0, url))
		binary.LittleEndian.PutUint32(h[4:], math.MaxUint32)
		r.nc.Write(h)
		r.wantError(status.BadTcpMessageTooLarge)
	})
	t.Run("absurd hello buffers", func(t *testing.T) {
		// Buffers below the 8192 bytes of Part 6 are refused (uasc says
		// Bad_TcpNotEnoughResources); huge ones are revised down to ours.
		r := dialRaw(t, url)
		r.nc.Write(header("HELF", helloBody(1, 1, 0, 0, url)))
		r.wantError(status.BadTcpNotEnoughResources)

		r = dialRaw(t, url)
		r.nc.Write(header("HELF", helloBody(math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32, url)))
		typ, body, err := r.readMsg()
		if err != nil || typ != "ACKF" {
			t.Fatalf("Hello with huge buffers: %q, %v", typ, err)
		}
		if recv := binary.LittleEndian.Uint32(body[4:]); recv > 1<<20 {
			t.Errorf("ReceiveBufferSize %d taken from the client", recv)
		}
	})
	t.Run("silent", func(t *testing.T) {
		// Connects and sends nothing: the Hello timeout ends it.
		r := dialRaw(t, url)
		r.wantError(status.BadTimeout)
	})
	t.Run("chunks never complete", func(t *testing.T) {
		r := dialRaw(t, url)
		r.hello(url)
		r.open()
		msg := ua.AppendMessage(nil, &ua.ReadRequest{})
		r.nc.Write(r.chunk('C', 7, msg[:4]))
		r.wantError(status.BadTimeout)
	})
	t.Run("stops reading", func(t *testing.T) {
		r := dialRaw(t, url)
		r.hello(url)
		r.open()
		req := ua.AppendMessage(nil, &ua.GetEndpointsRequest{})
		// Send requests without reading responses until the server gives
		// up on us (its writes time out) and closes the connection.
		var err error
		for i := uint32(1); i < 1_000_000 && err == nil; i++ {
			_, err = r.nc.Write(r.chunk('F', i, req))
		}
		if err == nil {
			t.Fatal("the server never stopped reading a client that does not read")
		}
	})
	t.Run("1000 connections", func(t *testing.T) {
		var wg, answered sync.WaitGroup
		var mu sync.Mutex
		got := map[string]int{}
		answered.Add(1000)
		for range 1000 {
			wg.Go(func() {
				nc, err := net.Dial("tcp", url[len("opc.tcp://"):])
				if err != nil {
					answered.Done()
					mu.Lock()
					got["dial error"]++
					mu.Unlock()
					return
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(30 * time.Second))
				nc.Write(header("HELF", helloBody(65535, 65535, 0, 0, url)))
				r := &rawConn{t: t, nc: nc}
				typ, body, err := r.readMsg()
				key := typ
				switch {
				case err != nil:
					key = "closed"
				case typ == "ERRF":
					key = ua.StatusCode(binary.LittleEndian.Uint32(body)).String()
				}
				mu.Lock()
				got[key]++
				mu.Unlock()
				answered.Done()
				if typ == "ACKF" {
					answered.Wait() // hold the slot until every connection has its answer
				}
			})
		}
		wg.Wait()
		t.Logf("1000 connections: %v", got)
		// None of them has a session: each new one may take the place of
		// the oldest of them (OPC 10000-4 §5.5.2), never the reader's,
		// whose session keeps it (rd.finish checks it went on reading).
		if got["ACKF"] == 0 || got["ACKF"]+got["BadTcpNotEnoughResources"]+got["closed"] != 1000 {
			t.Errorf("answers %v: want each connection answered (ACK, Bad_TcpNotEnoughResources or closed)", got)
		}
	})
	rd.finish(t, rd.okCount())
}

// TestShutdownClosesConnections: a connected channel gets a UA-TCP Error
// Bad_Shutdown and is closed, its session is closed, and Serve returns.
func TestShutdownClosesConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "opc.tcp://" + ln.Addr().String()
	srv, err := server.New(server.Config{EndpointURL: url})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)
	r := dialRaw(t, url)
	r.hello(url)
	r.open()

	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r.wantError(status.BadShutdown)
	if err := <-served; !errors.Is(err, server.ErrServerClosed) {
		t.Errorf("Serve returned %v", err)
	}
	if d := srv.Diagnostics(); d.CurrentSessionCount != 0 || d.SessionAbortCount != 1 {
		t.Errorf("diagnostics after shutdown %+v", d)
	}
	if _, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
		{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerStatus_CurrentTime), AttributeID: gua.AttributeIDValue}}}); err == nil {
		t.Error("a Read after Shutdown succeeded")
	}
	if err := srv.Serve(ln); !errors.Is(err, server.ErrServerClosed) {
		t.Errorf("Serve after Shutdown returned %v", err)
	}
}

func TestListenAndServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	url := "opc.tcp://127.0.0.1:" + strconv.Itoa(port)
	srv, err := server.New(server.Config{EndpointURL: url})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx) }()
	var eps []*gua.EndpointDescription
	waitFor(t, "the server to listen", func() bool {
		eps, err = opcua.GetEndpoints(testCtx(t), url)
		return err == nil
	})
	if len(eps) != 1 {
		t.Errorf("%d endpoints", len(eps))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe: %v", err)
	}
}
