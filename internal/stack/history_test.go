package stack_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/server"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// TestHistoryOfTheSimulator: with a history folder, the simulator's
// sim.Counter is recorded on every change and read back over OPC UA
// (gopcua's HistoryReadRawModified): consecutive, increasing, the same
// values a Read showed.
func TestHistoryOfTheSimulator(t *testing.T) {
	conf := pconfig.Simulator()
	st, err := stack.New(stack.Config{Plant: &conf, Simulator: &sim.Options{}, HistoryDir: t.TempDir(),
		Server: server.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	start := time.Now()
	time.Sleep(1500 * time.Millisecond)
	ctx := context.Background()
	c, err := opcua.NewClient(st.URL, opcua.SecurityMode(gua.MessageSecurityModeNone))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	node := gua.NewStringNodeID(st.Binding.Namespace(), "sim.Counter")
	// gopcua v0.8.0 encodes a nil DataEncoding as nothing, a request that
	// does not decode: it is given.
	resp, err := c.HistoryReadRawModified(ctx, []*gua.HistoryReadValueID{{NodeID: node, DataEncoding: &gua.QualifiedName{}}}, &gua.ReadRawModifiedDetails{
		StartTime: start.Add(-time.Minute), EndTime: time.Now().Add(time.Minute), NumValuesPerNode: 10000})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	if r.StatusCode != gua.StatusOK {
		t.Fatalf("%v", r.StatusCode)
	}
	hd, ok := r.HistoryData.Value.(*gua.HistoryData)
	if !ok {
		t.Fatalf("HistoryData %T", r.HistoryData.Value)
	}
	var prev uint32
	n := 0
	for i, dv := range hd.DataValues {
		if dv.Status != gua.StatusOK {
			t.Logf("value %d: %v", i, dv.Status)
			continue
		}
		x := dv.Value.Value().(uint32)
		if n > 0 && x <= prev {
			t.Fatalf("value %d: %d after %d", i, x, prev)
		}
		prev = x
		n++
	}
	if n < 200 {
		t.Fatalf("%d good values in 1.5 s", n)
	}
	t.Logf("%d values, the last %d", n, prev)
}
