package server_test

import (
	"math"
	"slices"
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
)

// TestInteropDeadband: gopcua monitors a variable served by a source that
// the test drives as the binding would (a value, then SourceChanged), with
// an absolute deadband of 1.0, and receives exactly the values that moved
// more than 1.0 from the last one reported.
func TestInteropDeadband(t *testing.T) {
	srv, url := startServer(t, server.Config{})
	as := srv.AddressSpace()
	var val atomic.Uint64
	src := as.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) {
		dv.Value.SetFloat64(math.Float64frombits(val.Load()))
	}))
	nid := ua.NewStringNodeID(1, "level")
	if err := as.AddNode(&addrspace.Node{
		ID: nid, Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "level"},
		DataType: ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead), Source: src, Handle: 1,
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)

	notes := make(chan *opcua.PublishNotificationData, 256)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 5 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel(ctx)
	req := opcua.NewMonitoredItemCreateRequestWithDefaults(gua.NewStringNodeID(1, "level"), gua.AttributeIDValue, 1)
	req.RequestedParameters.QueueSize = 100
	req.RequestedParameters.Filter = gua.NewExtensionObject(&gua.DataChangeFilter{
		Trigger: gua.DataChangeTriggerStatusValue, DeadbandType: uint32(gua.DeadbandTypeAbsolute), DeadbandValue: 1,
	})
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, req)
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %v", err, res)
	}
	in := []float64{0.5, 1.0, 1.1, 2.2, 1.5, 3.3, 3.3, -1, 100}
	want := []float64{0, 1.1, 2.2, 3.3, -1, 100}
	for _, v := range in {
		time.Sleep(10 * time.Millisecond) // one sample per value (5 ms sampling)
		val.Store(math.Float64bits(v))
		srv.SourceChanged(src, []uint32{1})
	}
	var got []float64
	timeout := time.After(30 * time.Second)
	for !slices.Contains(got, 100) {
		select {
		case n := <-notes:
			if n.Error != nil {
				t.Fatal(n.Error)
			}
			if dcn, ok := n.Value.(*gua.DataChangeNotification); ok {
				for _, mi := range dcn.MonitoredItems {
					got = append(got, mi.Value.Value.Value().(float64))
				}
			}
		case <-timeout:
			t.Fatalf("values %v after 30 s, want %v", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
}
