package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func valueOf(n ua.NodeID) ua.ReadValueID {
	return ua.ReadValueID{NodeID: n, AttributeID: uint32(ua.AttributeIDValue)}
}

func TestReadServiceChecks(t *testing.T) {
	s := newTestServer(t, Config{Limits: OperationLimits{MaxNodesPerRead: 2, MaxNodesPerWrite: 1, MaxNodesPerBrowse: 1,
		MaxNodesPerRegisterNodes: 1, MaxNodesPerTranslateBrowsePathsToNodeIDs: 1}})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	ct := valueOf(ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime))

	subtest.WantFault(t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{ct}, MaxAge: -1}), status.BadMaxAgeInvalid)
	subtest.WantFault(t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{ct}, TimestampsToReturn: ua.TimestampsToReturnInvalid}), status.BadTimestampsToReturnInvalid)
	subtest.WantFault(t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{ct}, TimestampsToReturn: -1}), status.BadTimestampsToReturnInvalid)
	subtest.WantFault(t, tc.call(&ua.ReadRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{ct, ct, ct}}), status.BadTooManyOperations)
	r := subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{ct, valueOf(ua.NewNumericNodeID(7, 7))}}))
	if len(r.Results) != 2 || r.Results[0].Status != status.Good || r.Results[1].Status != status.BadNodeIDUnknown {
		t.Errorf("results %+v", r.Results)
	}

	wv := ua.WriteValue{NodeID: s.GatewayNodeID("Setpoint"), AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant(1.5)}}
	subtest.WantFault(t, tc.call(&ua.WriteRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.WriteRequest{NodesToWrite: []ua.WriteValue{wv, wv}}), status.BadTooManyOperations)
	w := subtest.WantOK[ua.WriteResponse](t, tc.call(&ua.WriteRequest{NodesToWrite: []ua.WriteValue{wv}}))
	if w.Results[0] != status.Good {
		t.Errorf("write %v", w.Results)
	}

	bd := ua.BrowseDescription{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder), BrowseDirection: ua.BrowseDirectionForward, IncludeSubtypes: true}
	subtest.WantFault(t, tc.call(&ua.BrowseRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.BrowseRequest{NodesToBrowse: []ua.BrowseDescription{bd, bd}}), status.BadTooManyOperations)
	subtest.WantFault(t, tc.call(&ua.BrowseRequest{View: ua.ViewDescription{ViewID: ua.NewNumericNodeID(0, 1)}, NodesToBrowse: []ua.BrowseDescription{bd}}), status.BadViewIDUnknown)
	subtest.WantFault(t, tc.call(&ua.BrowseNextRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.TranslateBrowsePathsToNodeIDsRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.TranslateBrowsePathsToNodeIDsRequest{BrowsePaths: make([]ua.BrowsePath, 2)}), status.BadTooManyOperations)
	subtest.WantFault(t, tc.call(&ua.RegisterNodesRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.RegisterNodesRequest{NodesToRegister: make([]ua.NodeID, 2)}), status.BadTooManyOperations)
	subtest.WantFault(t, tc.call(&ua.UnregisterNodesRequest{}), status.BadNothingToDo)
	reg := subtest.WantOK[ua.RegisterNodesResponse](t, tc.call(&ua.RegisterNodesRequest{NodesToRegister: []ua.NodeID{s.GatewayNodeID("Model")}}))
	if len(reg.RegisteredNodeIDs) != 1 || reg.RegisteredNodeIDs[0] != s.GatewayNodeID("Model") {
		t.Errorf("RegisterNodes %v", reg.RegisteredNodeIDs)
	}
	subtest.WantOK[ua.UnregisterNodesResponse](t, tc.call(&ua.UnregisterNodesRequest{NodesToUnregister: reg.RegisteredNodeIDs}))

	// The limits are advertised.
	r = subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{
		valueOf(ua.NewNumericNodeID(0, id.Server_ServerCapabilities_OperationLimits_MaxNodesPerRead)),
		valueOf(ua.NewNumericNodeID(0, id.Server_ServerCapabilities_OperationLimits_MaxNodesPerTranslateBrowsePathsToNodeIds)),
	}}))
	for i, want := range []uint32{2, 1} {
		if n, ok := r.Results[i].Value.Uint32(); !ok || n != want {
			t.Errorf("limit %d read as %v (%v), want %d", i, r.Results[i].Value, r.Results[i].Status, want)
		}
	}
}

func TestTranslateBrowsePath(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	r := subtest.WantOK[ua.TranslateBrowsePathsToNodeIDsResponse](t, tc.call(&ua.TranslateBrowsePathsToNodeIDsRequest{BrowsePaths: []ua.BrowsePath{{
		StartingNode: ua.NewNumericNodeID(0, id.ObjectsFolder),
		RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 1, Name: "Gateway"}},
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 1, Name: "Setpoint"}},
		}},
	}}}))
	if len(r.Results) != 1 || r.Results[0].StatusCode != status.Good || len(r.Results[0].Targets) != 1 ||
		r.Results[0].Targets[0].TargetID.NodeID != s.GatewayNodeID("Setpoint") {
		t.Errorf("TranslateBrowsePaths %+v", r.Results)
	}
}

func TestBrowseContinuationPoints(t *testing.T) {
	s := newTestServer(t, Config{MaxBrowseContinuationPoints: 2})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	bd := ua.BrowseDescription{NodeID: ua.NewNumericNodeID(0, id.Server), BrowseDirection: ua.BrowseDirectionForward, IncludeSubtypes: true}
	full := subtest.WantOK[ua.BrowseResponse](t, tc.call(&ua.BrowseRequest{NodesToBrowse: []ua.BrowseDescription{bd}})).Results[0]
	if len(full.References) < 4 || full.ContinuationPoint != nil {
		t.Fatalf("Server has %d references (cp %x)", len(full.References), full.ContinuationPoint)
	}
	// Three browses of one reference each: the third finds no point.
	r := subtest.WantOK[ua.BrowseResponse](t, tc.call(&ua.BrowseRequest{RequestedMaxReferencesPerNode: 1, NodesToBrowse: []ua.BrowseDescription{bd, bd, bd}}))
	if r.Results[0].StatusCode != status.Good || r.Results[1].StatusCode != status.Good || r.Results[2].StatusCode != status.BadNoContinuationPoints {
		t.Fatalf("statuses %v %v %v", r.Results[0].StatusCode, r.Results[1].StatusCode, r.Results[2].StatusCode)
	}
	cp0, cp1 := r.Results[0].ContinuationPoint, r.Results[1].ContinuationPoint
	if len(cp0) == 0 || len(cp1) == 0 || len(r.Results[0].References) != 1 {
		t.Fatalf("continuation points %x %x", cp0, cp1)
	}
	// Release one; an unknown one is invalid; then follow the other to the end.
	n := subtest.WantOK[ua.BrowseNextResponse](t, tc.call(&ua.BrowseNextRequest{ReleaseContinuationPoints: true, ContinuationPoints: [][]byte{cp1, {1, 2, 3}}}))
	if n.Results[0].StatusCode != status.Good || n.Results[1].StatusCode != status.BadContinuationPointInvalid {
		t.Errorf("release: %v %v", n.Results[0].StatusCode, n.Results[1].StatusCode)
	}
	n = subtest.WantOK[ua.BrowseNextResponse](t, tc.call(&ua.BrowseNextRequest{ContinuationPoints: [][]byte{cp1}}))
	if n.Results[0].StatusCode != status.BadContinuationPointInvalid {
		t.Errorf("released point: %v", n.Results[0].StatusCode)
	}
	got := len(r.Results[0].References)
	for cp := cp0; cp != nil; {
		n = subtest.WantOK[ua.BrowseNextResponse](t, tc.call(&ua.BrowseNextRequest{ContinuationPoints: [][]byte{cp}}))
		if n.Results[0].StatusCode != status.Good {
			t.Fatalf("BrowseNext: %v", n.Results[0].StatusCode)
		}
		got += len(n.Results[0].References)
		cp = n.Results[0].ContinuationPoint
		if got > len(full.References) {
			t.Fatal("BrowseNext does not end")
		}
	}
	if got != len(full.References) {
		t.Errorf("BrowseNext gave %d references in all, Browse %d", got, len(full.References))
	}
	// Points are per session: a new session cannot use another's.
	r = subtest.WantOK[ua.BrowseResponse](t, tc.call(&ua.BrowseRequest{RequestedMaxReferencesPerNode: 1, NodesToBrowse: []ua.BrowseDescription{bd}}))
	other := newTestConn(t, s, 2)
	other.openSession()
	n = subtest.WantOK[ua.BrowseNextResponse](t, other.call(&ua.BrowseNextRequest{ContinuationPoints: [][]byte{r.Results[0].ContinuationPoint}}))
	if n.Results[0].StatusCode != status.BadContinuationPointInvalid {
		t.Errorf("another session's point: %v", n.Results[0].StatusCode)
	}
}

func TestServerObject(t *testing.T) {
	clk := subtest.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	s := newTestServer(t, Config{Clock: clk.Now, SoftwareVersion: "v1.2.3", ShutdownDelay: 3 * time.Second})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	clk.Add(time.Minute)
	read := func(nodes ...uint32) []ua.DataValue {
		t.Helper()
		req := &ua.ReadRequest{}
		for _, n := range nodes {
			req.NodesToRead = append(req.NodesToRead, valueOf(ua.NewNumericNodeID(0, n)))
		}
		r := subtest.WantOK[ua.ReadResponse](t, tc.call(req))
		for i, dv := range r.Results {
			if dv.Status != status.Good {
				t.Fatalf("%s: %v", id.Name(nodes[i]), dv.Status)
			}
		}
		return r.Results
	}
	r := read(id.Server_ServerStatus_CurrentTime, id.Server_ServerStatus_StartTime, id.Server_ServerStatus_State,
		id.Server_ServerStatus, id.Server_ServerStatus_BuildInfo_SoftwareVersion, id.Server_NamespaceArray, id.Server_ServerArray,
		id.Server_ServiceLevel, id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSessionCount,
		id.Server_ServerDiagnostics_ServerDiagnosticsSummary, id.Server_ServerCapabilities_ServerProfileArray,
		id.Server_ServerCapabilities_MaxBrowseContinuationPoints)
	if ct, _ := r[0].Value.DateTime(); !ct.Equal(clk.Now()) {
		t.Errorf("CurrentTime %v, want %v", ct, clk.Now())
	}
	if st, _ := r[1].Value.DateTime(); !st.Equal(clk.Now().Add(-time.Minute)) {
		t.Errorf("StartTime %v", st)
	}
	if state, _ := r[2].Value.Int32(); ua.ServerState(state) != ua.ServerStateRunning {
		t.Errorf("State %v", state)
	}
	eo, ok := r[3].Value.Value().(ua.ExtensionObject)
	if !ok {
		t.Fatalf("ServerStatus is %T", r[3].Value.Value())
	}
	if ss, ok := eo.Body.(*ua.ServerStatusDataType); !ok || ss.BuildInfo.SoftwareVersion != "v1.2.3" || ss.State != ua.ServerStateRunning || !ss.CurrentTime.Equal(clk.Now()) {
		t.Errorf("ServerStatus %+v", eo.Body)
	}
	if v, _ := r[4].Value.StringValue(); v != "v1.2.3" {
		t.Errorf("SoftwareVersion %q", v)
	}
	if ns, ok := r[5].Value.Value().([]string); !ok || len(ns) != 2 || ns[1] != DefaultNamespaceURI {
		t.Errorf("NamespaceArray %v", r[5].Value)
	}
	if sa, ok := r[6].Value.Value().([]string); !ok || len(sa) != 1 || sa[0] != DefaultApplicationURI {
		t.Errorf("ServerArray %v", r[6].Value)
	}
	if sl, _ := r[7].Value.Uint8(); sl != 255 {
		t.Errorf("ServiceLevel %v", sl)
	}
	if n, _ := r[8].Value.Uint32(); n != 1 {
		t.Errorf("CurrentSessionCount %v", n)
	}
	if eo, ok := r[9].Value.Value().(ua.ExtensionObject); !ok || eo.Body.(*ua.ServerDiagnosticsSummaryDataType).CumulatedSessionCount != 1 {
		t.Errorf("ServerDiagnosticsSummary %v", r[9].Value)
	}
	if p, ok := r[10].Value.Value().([]string); !ok || len(p) != 1 || p[0] != ServerProfileURI {
		t.Errorf("ServerProfileArray %v", r[10].Value)
	}
	if n, _ := r[11].Value.Uint16(); n != DefaultMaxBrowseContinuationPoints {
		t.Errorf("MaxBrowseContinuationPoints %v", r[11].Value)
	}

	// During the ShutdownDelay, State is Shutdown and SecondsTillShutdown
	// counts down. The real-time delay of Shutdown is cut by ctx.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	waitUntil(t, func() bool { return ua.ServerState(s.state.Load()) == ua.ServerStateShutdown })
	clk.Add(time.Second)
	r = read(id.Server_ServerStatus_State, id.Server_ServerStatus_SecondsTillShutdown, id.Server_ServerStatus_ShutdownReason, id.Server_ServiceLevel)
	if state, _ := r[0].Value.Int32(); ua.ServerState(state) != ua.ServerStateShutdown {
		t.Errorf("State %v during shutdown", state)
	}
	if n, _ := r[1].Value.Uint32(); n != 2 {
		t.Errorf("SecondsTillShutdown %v, want 2", n)
	}
	if lt, ok := r[2].Value.Value().(ua.LocalizedText); !ok || lt.Text == "" {
		t.Errorf("ShutdownReason %v", r[2].Value)
	}
	if sl, _ := r[3].Value.Uint8(); sl != 0 {
		t.Errorf("ServiceLevel %v during shutdown", sl)
	}
	cancel()
	<-done
	subtest.WantFault(t, tc.call(&ua.CreateSessionRequest{}), status.BadShutdown)
	if d := s.Diagnostics(); d.CurrentSessionCount != 0 || d.SessionAbortCount != 1 {
		t.Errorf("after shutdown %+v", d)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestSessionTimeoutSweeper runs the sweeper in a synctest bubble: its
// ticker and the server's clock (time.Now) are the bubble's fake time.
func TestSessionTimeoutSweeper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, Config{MinSessionTimeout: time.Second, MaxSessionTimeout: time.Minute})
		ln := &idleListener{done: make(chan struct{})}
		go s.Serve(ln) // starts the sweeper
		tc := newTestConn(t, s, 1)
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{RequestedSessionTimeout: 5000}))
		tc.token = cs.AuthenticationToken
		subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(subtest.AnonymousActivate()))
		ping := &ua.ReadRequest{NodesToRead: []ua.ReadValueID{valueOf(ua.NewNumericNodeID(0, id.Server_ServiceLevel))}}
		for range 4 { // requests every 4 s keep it alive
			time.Sleep(4 * time.Second)
			synctest.Wait()
			subtest.WantOK[ua.ReadResponse](t, tc.call(ping))
		}
		time.Sleep(5*time.Second + time.Second) // idle beyond its timeout and a sweep
		synctest.Wait()
		subtest.WantFault(t, tc.call(ping), status.BadSessionIDInvalid)
		if d := s.Diagnostics(); d.SessionTimeoutCount != 1 || d.CurrentSessionCount != 0 {
			t.Errorf("diagnostics %+v", d)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// idleListener accepts nothing until closed.
type idleListener struct{ done chan struct{} }

func (l *idleListener) Accept() (net.Conn, error) { <-l.done; return nil, net.ErrClosed }
func (l *idleListener) Close() error {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}
func (l *idleListener) Addr() net.Addr { return memAddr{} }

// TestReadSameAgain: a Read whose bytes after the RequestHeader repeat
// the connection's last one is not decoded again (decodeBody); each
// answer must still be the one a connection decoding every request gives:
// the same request again and again, other requests between, a value
// written meanwhile, a refused request, and a run of requests that
// differ each time (which stops the comparisons for a while).
func TestReadSameAgain(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	ref := newTestConn(t, s, 2)
	ref.openSession()
	read := serviceByRequest(id.ReadRequest_Encoding_DefaultBinary)

	sp, model := valueOf(s.GatewayNodeID("Setpoint")), valueOf(s.GatewayNodeID("Model"))
	state := valueOf(ua.NewNumericNodeID(0, id.Server_ServerStatus_State))
	name := ua.ReadValueID{NodeID: s.GatewayNodeID("Model"), AttributeID: uint32(ua.AttributeIDBrowseName)}
	unknown := valueOf(ua.NewNumericNodeID(7, 7))
	reqs := [][]ua.ReadValueID{{sp}, {model, state}, {name}, {unknown, sp}, {sp, model}, {state}}
	results := func(c *testConn, nodes []ua.ReadValueID, maxAge float64) ([]ua.DataValue, ua.StatusCode) {
		t.Helper()
		resp := c.call(&ua.ReadRequest{NodesToRead: nodes, MaxAge: maxAge, TimestampsToReturn: ua.TimestampsToReturnNeither})
		if f := subtest.FaultOf(resp); f != status.Good {
			return nil, f
		}
		return subtest.WantOK[ua.ReadResponse](t, resp).Results, status.Good
	}
	check := func(step string, nodes []ua.ReadValueID, maxAge float64) {
		t.Helper()
		got, gotFault := results(tc, nodes, maxAge)
		ref.c.dropValues(read) // the reference decodes every request
		want, wantFault := results(ref, nodes, maxAge)
		if gotFault != wantFault || len(got) != len(want) {
			t.Fatalf("%s: %v, %d results; want %v, %d", step, gotFault, len(got), wantFault, len(want))
		}
		for i := range got {
			if got[i].Status != want[i].Status || !got[i].Value.Equal(want[i].Value) {
				t.Fatalf("%s: result %d %v %v, want %v %v", step, i, got[i].Status, got[i].Value, want[i].Status, want[i].Value)
			}
		}
	}
	for i := range 3 {
		check(fmt.Sprint("the same Read, ", i), reqs[0], 0)
	}
	if v := &tc.c.vals[read.index]; !v.valid || v.misses != 0 {
		t.Fatalf("a Read sent again: its bytes kept %v, %d misses", v.valid, v.misses)
	}
	wv := ua.WriteValue{NodeID: sp.NodeID, AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant(2.5)}}
	subtest.WantOK[ua.WriteResponse](t, tc.call(&ua.WriteRequest{NodesToWrite: []ua.WriteValue{wv}}))
	check("after a write", reqs[0], 0)
	check("a refused Read", reqs[0], -1)
	check("the Read before it", reqs[0], 0)
	for i := range 200 {
		nodes := reqs[i%len(reqs)]
		if i >= 100 {
			nodes = reqs[(i/3)%len(reqs)] // each three times
		}
		check(fmt.Sprint("request ", i), nodes, float64(i%2))
	}
}

// FuzzReadSameAgain: Reads whose bytes after a valid RequestHeader are
// fuzzed, sent in an order that repeats them with another Timestamp and
// RequestHandle each time, must get from a connection that keeps the
// last request's bytes (decodeBody) the answer, byte for byte, of a
// connection that decodes every request, and decode to the same request.
func FuzzReadSameAgain(f *testing.F) {
	srv := newTestServer(f, Config{})
	tail := func(nodes ...ua.ReadValueID) []byte {
		msg := ua.AppendMessage(nil, &ua.ReadRequest{NodesToRead: nodes, TimestampsToReturn: ua.TimestampsToReturnBoth})
		var h ua.RequestHeader
		d := ua.NewDecoder(msg)
		var typeID ua.NodeID
		typeID.Decode(d)
		h.Decode(d)
		return d.Rest()
	}
	sp, state := valueOf(srv.GatewayNodeID("Setpoint")), valueOf(ua.NewNumericNodeID(0, id.Server_ServerStatus_State))
	f.Add(tail(sp), tail(sp, state), uint16(0b1011_0100_1101), int64(0))
	f.Add(tail(state), tail(ua.ReadValueID{NodeID: srv.GatewayNodeID("Model"), AttributeID: uint32(ua.AttributeIDBrowseName)}), uint16(0xffff), int64(134000000000000000))
	f.Add(tail(sp), []byte{1, 2, 3}, uint16(0x5555), int64(-1))
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	read := serviceByRequest(id.ReadRequest_Encoding_DefaultBinary)
	f.Fuzz(func(t *testing.T, a, b []byte, order uint16, ticks int64) {
		if len(a) > 4096 || len(b) > 4096 {
			return
		}
		s := newTestServer(t, Config{Clock: func() time.Time { return t0 }})
		tc, ref := newTestConn(t, s, 1), newTestConn(t, s, 2)
		tc.openSession()
		ref.openSession()
		msg := func(c *testConn, i int, tail []byte) []byte {
			h := ua.RequestHeader{RequestHandle: uint32(1000 + i), AuthenticationToken: c.token}
			typeID := ua.NewNumericNodeID(0, id.ReadRequest_Encoding_DefaultBinary)
			m := h.Encode(typeID.Encode(nil))
			// The Timestamp, after the type id's 4 bytes and the token's.
			binary.LittleEndian.PutUint64(m[len(m)-len(h.Encode(nil))+len(c.token.Encode(nil)):], uint64(ticks+int64(i)*1e7))
			return append(m, tail...)
		}
		for i := range 16 {
			next := a
			if order>>i&1 != 0 {
				next = b
			}
			got := append([]byte(nil), tc.c.handle(msg(tc, i, next), time.Time{})...)
			ref.c.dropValues(read)
			want := ref.c.handle(msg(ref, i, next), time.Time{})
			if !bytes.Equal(got, want) {
				t.Fatalf("request %d: answered\n%x\nwant\n%x", i, got, want)
			}
			if v, w := tc.c.vals[read.index], ref.c.vals[read.index]; v.valid && w.req != nil {
				vr, wr := *v.req.(*ua.ReadRequest), *w.req.(*ua.ReadRequest)
				vr.RequestHeader.AuthenticationToken, wr.RequestHeader.AuthenticationToken = ua.NodeID{}, ua.NodeID{}
				if !bytes.Equal(ua.AppendMessage(nil, &vr), ua.AppendMessage(nil, &wr)) { // NaN: its bits
					t.Fatalf("request %d: decoded to\n%+v\nwant\n%+v", i, vr, wr)
				}
			}
		}
	})
}
