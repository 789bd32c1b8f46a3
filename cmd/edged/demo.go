package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// The built-in demo stands in for the scan engine until it lands: a few
// variables that change on every 5 ms cycle, like values polled from a PLC.

const (
	// demoCycle is the scan cycle the demo advances on.
	demoCycle = 5 * time.Millisecond
	// demoSinePeriodTicks is the Sine period: 2000 cycles = 10 s.
	demoSinePeriodTicks = 2000
	// demoToggleTicks is how long Toggle holds each value: 200 cycles = 1 s,
	// so the once-a-second report shows it alternate (with 500 ms it would
	// be sampled at the same phase every time and look stuck).
	demoToggleTicks = 200
)

// demoValues are the demo variables after a number of scan cycles.
type demoValues struct {
	Tick    uint64  // scan cycles completed
	Counter uint32  // +1 per cycle, wraps at 2^32
	Sine    float64 // amplitude 1, period 10 s of cycles
	Toggle  bool    // flips every 1 s of cycles, false first
}

// demoValuesAt computes the demo variables after tick scan cycles. It is a
// pure function of tick, so tests need no clock.
func demoValuesAt(tick uint64) demoValues {
	phase := float64(tick%demoSinePeriodTicks) / demoSinePeriodTicks
	return demoValues{
		Tick:    tick,
		Counter: uint32(tick),
		Sine:    math.Sin(2 * math.Pi * phase),
		Toggle:  (tick/demoToggleTicks)%2 == 1,
	}
}

func (v demoValues) String() string {
	return fmt.Sprintf("demo: Counter=%d Sine=%+.4f Toggle=%t", v.Counter, v.Sine, v.Toggle)
}

// runDemo advances the demo one cycle per value received on cycle,
// publishes each cycle's values to pub (if not nil) with the cycle's time,
// and prints the current values to out on every value received on report,
// until ctx is done. A cycle the ticker drops because the machine was busy
// is not counted, as a real scan cycle that overran would not be.
func runDemo(ctx context.Context, cycle, report <-chan time.Time, out io.Writer, pub *demoSource) demoValues {
	v := demoValuesAt(0)
	for {
		select {
		case <-ctx.Done():
			return v
		case at := <-cycle:
			v = demoValuesAt(v.Tick + 1)
			pub.publish(v, at)
		case <-report:
			fmt.Fprintln(out, v)
		}
	}
}

// The demo variables as OPC UA nodes: handles of demoSource's snapshots.
const (
	demoCounter uint32 = iota
	demoSine
	demoToggle
)

// demoVariables describes the demo variables under the Gateway folder.
var demoVariables = []server.GatewayVariable{
	{Name: "Counter", Handle: demoCounter, DataType: id.UInt32, Description: "Demo: +1 per 5 ms scan cycle, wraps at 2^32"},
	{Name: "Sine", Handle: demoSine, DataType: id.Double, Description: "Demo: sine of amplitude 1 and period 10 s"},
	{Name: "Toggle", Handle: demoToggle, DataType: id.Boolean, Description: "Demo: flips every second"},
}

// demoImage is one published image of the demo: the values of a cycle
// and the cycle's time. It is immutable once published.
type demoImage struct {
	v  demoValues
	at time.Time
}

// Value implements addrspace.Snapshot without allocating.
func (m *demoImage) Value(h uint32, dv *ua.DataValue) {
	dv.SourceTimestamp = m.at
	switch h {
	case demoCounter:
		dv.Value.SetUint32(m.v.Counter)
	case demoSine:
		dv.Value.SetFloat64(m.v.Sine)
	case demoToggle:
		dv.Value.SetBool(m.v.Toggle)
	default:
		dv.Status = ua.StatusBadNodeIDUnknown
	}
}

// demoSource is the demo's process image for the OPC UA server: the demo
// loop publishes a new image per cycle, readers load the latest one
// without locking (an addrspace.ValueSource).
type demoSource struct{ cur atomic.Pointer[demoImage] }

// publish makes v, of the cycle at, the current image. A nil source
// ignores it.
func (s *demoSource) publish(v demoValues, at time.Time) {
	if s != nil {
		s.cur.Store(&demoImage{v: v, at: at})
	}
}

// Snapshot implements addrspace.ValueSource.
func (s *demoSource) Snapshot() addrspace.Snapshot { return s.cur.Load() }

var _ addrspace.ValueSource = (*demoSource)(nil)
