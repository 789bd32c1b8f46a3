package server_test

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/gopcua/opcua"
	gid "github.com/gopcua/opcua/id"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// addLevel adds ns=1;s=level, a Double served by a source whose value is
// *val (float64 bits), handle 1.
func addLevel(t *testing.T, srv *server.Server, val *atomic.Uint64) addrspace.SourceID {
	t.Helper()
	as := srv.AddressSpace()
	src := as.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) {
		dv.Value.SetFloat64(math.Float64frombits(val.Load()))
	}))
	if err := as.AddNode(&addrspace.Node{
		ID: ua.NewStringNodeID(1, "level"), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "level"},
		DataType: ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead), Source: src, Handle: 1,
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	return src
}

// callServer calls method of the Server object with args.
func callServer(t *testing.T, ctx context.Context, c *opcua.Client, method uint32, args ...any) *gua.CallMethodResult {
	t.Helper()
	req := &gua.CallMethodRequest{ObjectID: gua.NewNumericNodeID(0, gid.Server), MethodID: gua.NewNumericNodeID(0, method)}
	for _, a := range args {
		req.InputArguments = append(req.InputArguments, gua.MustVariant(a))
	}
	res, err := c.Call(ctx, req)
	if err != nil {
		t.Fatalf("Call %d: %v", method, err)
	}
	return res
}

// dataValues waits for the next DataChangeNotification on notes and
// returns its values by client handle.
func dataValues(t *testing.T, notes <-chan *opcua.PublishNotificationData) map[uint32]float64 {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case n := <-notes:
			if n.Error != nil {
				t.Fatal(n.Error)
			}
			dcn, ok := n.Value.(*gua.DataChangeNotification)
			if !ok {
				continue
			}
			got := make(map[uint32]float64)
			for _, mi := range dcn.MonitoredItems {
				got[mi.ClientHandle] = mi.Value.Value.Value().(float64)
			}
			return got
		case <-timeout:
			t.Fatal("no data change in 30 s")
		}
	}
}

// TestInteropSubscriptionMethods: gopcua calls Server.GetMonitoredItems
// and Server.ResendData on its own subscription, on an unknown one, on
// another session's, and with wrong arguments.
func TestInteropSubscriptionMethods(t *testing.T) {
	srv, url := startServer(t, server.Config{})
	var val atomic.Uint64
	val.Store(math.Float64bits(2.5))
	src := addLevel(t, srv, &val)
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)

	notes := make(chan *opcua.PublishNotificationData, 256)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 20 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel(ctx)
	level := opcua.NewMonitoredItemCreateRequestWithDefaults(gua.NewStringNodeID(1, "level"), gua.AttributeIDValue, 41)
	setpoint := opcua.NewMonitoredItemCreateRequestWithDefaults(
		gua.NewStringNodeID(srv.GatewayNodeID("Setpoint").Namespace, "Gateway.Setpoint"), gua.AttributeIDValue, 42)
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, level, setpoint)
	if err != nil || len(res.Results) != 2 || res.Results[0].StatusCode != gua.StatusOK || res.Results[1].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %v", err, res)
	}
	ids := map[uint32]uint32{res.Results[0].MonitoredItemID: 41, res.Results[1].MonitoredItemID: 42}

	// The initial values, possibly over two messages.
	initial := map[uint32]float64{}
	for len(initial) < 2 {
		for h, v := range dataValues(t, notes) {
			initial[h] = v
		}
	}
	if initial[41] != 2.5 || initial[42] != 0 {
		t.Fatalf("initial values %v, want 41: 2.5, 42: 0", initial)
	}

	// GetMonitoredItems: the ids CreateMonitoredItems returned, in order,
	// with their client handles.
	r := callServer(t, ctx, c, gid.Server_GetMonitoredItems, sub.SubscriptionID)
	if r.StatusCode != gua.StatusOK || len(r.OutputArguments) != 2 {
		t.Fatalf("GetMonitoredItems: %v, %d outputs", r.StatusCode, len(r.OutputArguments))
	}
	serverHandles, ok1 := r.OutputArguments[0].Value().([]uint32)
	clientHandles, ok2 := r.OutputArguments[1].Value().([]uint32)
	if !ok1 || !ok2 || len(serverHandles) != 2 || len(clientHandles) != 2 || !slices.IsSorted(serverHandles) {
		t.Fatalf("GetMonitoredItems = %v, %v", r.OutputArguments[0].Value(), r.OutputArguments[1].Value())
	}
	for i, sh := range serverHandles {
		if want, ok := ids[sh]; !ok || clientHandles[i] != want {
			t.Errorf("item %d: server handle %d, client handle %d; CreateMonitoredItems gave %v", i, sh, clientHandles[i], ids)
		}
	}

	// ResendData: the next notification repeats the current values
	// (level changed meanwhile without the engine announcing it).
	val.Store(math.Float64bits(3.5))
	if r := callServer(t, ctx, c, gid.Server_ResendData, sub.SubscriptionID); r.StatusCode != gua.StatusOK {
		t.Fatalf("ResendData: %v", r.StatusCode)
	}
	if got := dataValues(t, notes); len(got) != 2 || got[41] != 3.5 || got[42] != 0 {
		t.Errorf("after ResendData: %v, want 41: 3.5, 42: 0", got)
	}
	// Resent values are the reported ones: announcing the same value
	// sends nothing, a new one is sent as usual.
	srv.SourceChanged(src, []uint32{1})
	val.Store(math.Float64bits(4.5))
	time.Sleep(10 * time.Millisecond)
	srv.SourceChanged(src, []uint32{1})
	if got := dataValues(t, notes); len(got) != 1 || got[41] != 4.5 {
		t.Errorf("after a change: %v, want 41: 4.5", got)
	}

	// Errors.
	for _, m := range []uint32{gid.Server_GetMonitoredItems, gid.Server_ResendData} {
		if r := callServer(t, ctx, c, m, sub.SubscriptionID+1000); r.StatusCode != gua.StatusBadSubscriptionIDInvalid {
			t.Errorf("method %d on an unknown subscription: %v", m, r.StatusCode)
		}
		r := callServer(t, ctx, c, m, int32(sub.SubscriptionID))
		if r.StatusCode != gua.StatusBadInvalidArgument || len(r.InputArgumentResults) != 1 || r.InputArgumentResults[0] != gua.StatusBadTypeMismatch {
			t.Errorf("method %d with an Int32: %v %v", m, r.StatusCode, r.InputArgumentResults)
		}
		if r := callServer(t, ctx, c, m); r.StatusCode != gua.StatusBadArgumentsMissing {
			t.Errorf("method %d without arguments: %v", m, r.StatusCode)
		}
		if r := callServer(t, ctx, c, m, sub.SubscriptionID, uint32(1)); r.StatusCode != gua.StatusBadTooManyArguments {
			t.Errorf("method %d with two arguments: %v", m, r.StatusCode)
		}
	}
	c2 := connect(t, ctx, url)
	defer c2.Close(ctx)
	for _, m := range []uint32{gid.Server_GetMonitoredItems, gid.Server_ResendData} {
		if r := callServer(t, ctx, c2, m, sub.SubscriptionID); r.StatusCode != gua.StatusBadUserAccessDenied {
			t.Errorf("method %d on another session's subscription: %v", m, r.StatusCode)
		}
	}

	// The argument properties describe the arguments.
	rr, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
		{NodeID: gua.NewNumericNodeID(0, gid.Server_GetMonitoredItems_InputArguments), AttributeID: gua.AttributeIDValue},
		{NodeID: gua.NewNumericNodeID(0, gid.Server_GetMonitoredItems_OutputArguments), AttributeID: gua.AttributeIDValue},
	}})
	if err != nil || len(rr.Results) != 2 {
		t.Fatalf("Read arguments: %v", err)
	}
	var names []string
	for _, dv := range rr.Results {
		eos, _ := dv.Value.Value().([]*gua.ExtensionObject)
		for _, eo := range eos {
			if a, ok := eo.Value.(*gua.Argument); ok {
				names = append(names, a.Name)
			}
		}
	}
	if want := []string{"SubscriptionId", "ServerHandles", "ClientHandles"}; !slices.Equal(names, want) {
		t.Errorf("argument names %v, want %v", names, want)
	}
}

// TestInteropSubscriptionDiagnostics: gopcua reads CurrentSubscriptionCount
// and CumulatedSubscriptionCount as subscriptions are created, deleted and
// dropped with their session.
func TestInteropSubscriptionDiagnostics(t *testing.T) {
	_, url := startServer(t, server.Config{})
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)
	counts := func() (cur, cum uint32) {
		t.Helper()
		r, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSubscriptionCount), AttributeID: gua.AttributeIDValue},
			{NodeID: gua.NewNumericNodeID(0, gid.Server_ServerDiagnostics_ServerDiagnosticsSummary_CumulatedSubscriptionCount), AttributeID: gua.AttributeIDValue},
		}})
		if err != nil || len(r.Results) != 2 {
			t.Fatalf("Read: %v", err)
		}
		cur, _ = r.Results[0].Value.Value().(uint32)
		cum, _ = r.Results[1].Value.Value().(uint32)
		return cur, cum
	}
	want := func(what string, wantCur, wantCum uint32) {
		t.Helper()
		var cur, cum uint32
		waitFor(t, what, func() bool {
			cur, cum = counts()
			return cur == wantCur && cum == wantCum
		})
	}
	want("no subscription", 0, 0)

	notes := make(chan *opcua.PublishNotificationData, 16)
	params := &opcua.SubscriptionParameters{Interval: 50 * time.Millisecond}
	s1, err := c.Subscribe(ctx, params, notes)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.Subscribe(ctx, params, notes)
	if err != nil {
		t.Fatal(err)
	}
	if cur, cum := counts(); cur != 2 || cum != 2 {
		t.Errorf("two subscriptions: current %d, cumulated %d", cur, cum)
	}
	if err := s1.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if cur, cum := counts(); cur != 1 || cum != 2 {
		t.Errorf("one deleted: current %d, cumulated %d", cur, cum)
	}

	// A second session's subscription goes with its session.
	c2 := connect(t, ctx, url)
	if _, err := c2.Subscribe(ctx, params, make(chan *opcua.PublishNotificationData, 16)); err != nil {
		t.Fatal(err)
	}
	if cur, cum := counts(); cur != 2 || cum != 3 {
		t.Errorf("another session's: current %d, cumulated %d", cur, cum)
	}
	c2.Close(ctx)
	want("the session closed", 1, 3)
	if err := s2.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if cur, cum := counts(); cur != 0 || cum != 3 {
		t.Errorf("all deleted: current %d, cumulated %d", cur, cum)
	}
}

// TestInteropMethodArguments: gopcua reads the InputArguments and
// OutputArguments properties of namespace-0 methods and gets the Arguments
// of the NodeSet (Opc.Ua.NodeSet2.Services.xml), as a client building a
// call dialog does.
func TestInteropMethodArguments(t *testing.T) {
	_, url := startServer(t, server.Config{})
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)

	type arg struct {
		name      string
		dataType  uint32
		valueRank int32
		dims      []uint32
	}
	want := []struct {
		node uint32
		args []arg
	}{
		{gid.Server_GetMonitoredItems_InputArguments, []arg{{"SubscriptionId", gid.UInt32, -1, nil}}},
		{gid.Server_GetMonitoredItems_OutputArguments, []arg{
			{"ServerHandles", gid.UInt32, 1, []uint32{0}},
			{"ClientHandles", gid.UInt32, 1, []uint32{0}},
		}},
		{gid.Server_ResendData_InputArguments, []arg{{"SubscriptionId", gid.UInt32, -1, nil}}},
		{gid.Server_SetSubscriptionDurable_InputArguments, []arg{
			{"SubscriptionId", gid.UInt32, -1, nil},
			{"LifetimeInHours", gid.UInt32, -1, nil},
		}},
		{gid.Server_SetSubscriptionDurable_OutputArguments, []arg{{"RevisedLifetimeInHours", gid.UInt32, -1, nil}}},
	}
	req := &gua.ReadRequest{TimestampsToReturn: gua.TimestampsToReturnNeither}
	for _, w := range want {
		req.NodesToRead = append(req.NodesToRead, &gua.ReadValueID{NodeID: gua.NewNumericNodeID(0, w.node), AttributeID: gua.AttributeIDValue})
	}
	res, err := c.Read(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != len(want) {
		t.Fatalf("%d results for %d nodes", len(res.Results), len(want))
	}
	for i, w := range want {
		dv := res.Results[i]
		if dv.Status != gua.StatusOK || dv.Value == nil {
			t.Errorf("i=%d: status %v, value %v", w.node, dv.Status, dv.Value)
			continue
		}
		eos, ok := dv.Value.Value().([]*gua.ExtensionObject)
		if !ok || len(eos) != len(w.args) {
			t.Errorf("i=%d: value %T %v, want %d Arguments", w.node, dv.Value.Value(), dv.Value.Value(), len(w.args))
			continue
		}
		for j, wa := range w.args {
			a, ok := eos[j].Value.(*gua.Argument)
			if !ok {
				t.Errorf("i=%d [%d]: body %T, want *ua.Argument", w.node, j, eos[j].Value)
				continue
			}
			if a.Name != wa.name || a.DataType == nil || a.DataType.Namespace() != 0 || a.DataType.IntID() != wa.dataType ||
				a.ValueRank != wa.valueRank || !slices.Equal(a.ArrayDimensions, wa.dims) ||
				a.Description != nil && a.Description.Text != "" {
				t.Errorf("i=%d [%d]: %+v (DataType %v), want %+v", w.node, j, a, a.DataType, wa)
			}
		}
	}
}
