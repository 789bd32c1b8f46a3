package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"
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

// runDemo advances the demo one cycle per value received on cycle and
// prints the current values to out on every value received on report,
// until ctx is done. A cycle the ticker drops because the machine was busy
// is not counted, as a real scan cycle that overran would not be.
func runDemo(ctx context.Context, cycle, report <-chan time.Time, out io.Writer) demoValues {
	v := demoValuesAt(0)
	for {
		select {
		case <-ctx.Done():
			return v
		case <-cycle:
			v = demoValuesAt(v.Tick + 1)
		case <-report:
			fmt.Fprintln(out, v)
		}
	}
}
