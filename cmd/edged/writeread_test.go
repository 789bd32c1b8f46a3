package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// TestWriteThenRead: a Read sent right after a Good WriteResponse, over
// the writer's session or another one, returns the value written, for a
// Modbus register (sim.Setpoint) and a GPIO line (io.DO3). Before the
// Write waited for an image holding the read-back, 27 to 43 of 60 such
// Reads returned the old value.
func TestWriteThenRead(t *testing.T) {
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.`))
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	writer, other := dialGopcua(t, cctx, m[1]), dialGopcua(t, cctx, m[1])
	for _, tc := range []struct {
		node  string
		value func(i int) any
	}{
		{"ns=2;s=sim.Setpoint", func(i int) any { return float32(i) + 0.5 }},
		{"ns=2;s=io.DO3", func(i int) any { return i%2 == 0 }},
	} {
		id := gua.MustParseNodeID(tc.node)
		stale := 0
		for i := range 60 {
			want := tc.value(i)
			resp, err := writer.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
				NodeID: id, AttributeID: gua.AttributeIDValue,
				Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(want)},
			}}})
			if err != nil {
				t.Fatalf("%s: Write: %v", tc.node, err)
			}
			if st := resp.Results[0]; st != gua.StatusOK {
				t.Fatalf("%s: Write %v: %v", tc.node, want, st)
			}
			for _, c := range []*opcua.Client{writer, other} {
				r, err := c.Read(cctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: id, AttributeID: gua.AttributeIDValue}}})
				if err != nil {
					t.Fatalf("%s: Read: %v", tc.node, err)
				}
				if got := r.Results[0].Value.Value(); got != want {
					stale++
				}
			}
		}
		if stale > 0 {
			t.Errorf("%s: %d of 120 Reads after a Good Write returned another value than the one written", tc.node, stale)
		}
	}
}
