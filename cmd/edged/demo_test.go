package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
)

func TestDemoValuesAt(t *testing.T) {
	const eps = 1e-9
	tests := []struct {
		tick    uint64
		counter uint32
		sine    float64
		toggle  bool
	}{
		{0, 0, 0, false},
		{1, 1, math.Sin(2 * math.Pi / demoSinePeriodTicks), false},
		{199, 199, math.Sin(2 * math.Pi * 199 / demoSinePeriodTicks), false},
		{200, 200, math.Sin(2 * math.Pi * 200 / demoSinePeriodTicks), true}, // 1 s: first flip
		{399, 399, math.Sin(2 * math.Pi * 399 / demoSinePeriodTicks), true},
		{400, 400, math.Sin(2 * math.Pi * 400 / demoSinePeriodTicks), false}, // 2 s
		{500, 500, 1, false},   // quarter period: 2.5 s
		{1000, 1000, 0, true},  // half period: 5 s
		{1500, 1500, -1, true}, // three quarters: 7.5 s
		{2000, 2000, 0, false}, // full period: 10 s
		{1<<32 - 1, math.MaxUint32, math.Sin(2 * math.Pi * float64((1<<32-1)%demoSinePeriodTicks) / demoSinePeriodTicks), false},
		{1 << 32, 0, math.Sin(2 * math.Pi * float64((1<<32)%demoSinePeriodTicks) / demoSinePeriodTicks), false}, // Counter wraps
	}
	for _, tt := range tests {
		v := demoValuesAt(tt.tick)
		if v.Tick != tt.tick || v.Counter != tt.counter || v.Toggle != tt.toggle || math.Abs(v.Sine-tt.sine) > eps {
			t.Errorf("demoValuesAt(%d) = %+v, want Counter=%d Sine=%v Toggle=%t",
				tt.tick, v, tt.counter, tt.sine, tt.toggle)
		}
	}
}

func TestDemoCounterStepsByOne(t *testing.T) {
	for tick := uint64(0); tick < 3*demoSinePeriodTicks; tick++ {
		a, b := demoValuesAt(tick), demoValuesAt(tick+1)
		if b.Counter != a.Counter+1 {
			t.Fatalf("Counter %d -> %d between ticks %d and %d", a.Counter, b.Counter, tick, tick+1)
		}
		if math.Abs(a.Sine) > 1 {
			t.Fatalf("Sine out of range at tick %d: %v", tick, a.Sine)
		}
		if flipped := a.Toggle != b.Toggle; flipped != ((tick+1)%demoToggleTicks == 0) {
			t.Fatalf("Toggle %t -> %t between ticks %d and %d", a.Toggle, b.Toggle, tick, tick+1)
		}
	}
}

func TestDemoValuesString(t *testing.T) {
	got := demoValuesAt(500).String()
	want := "demo: Counter=500 Sine=+1.0000 Toggle=false"
	if got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestRunDemo drives runDemo with hand-fed channels instead of tickers:
// unbuffered sends complete only once runDemo has received them, so the
// order of cycles and reports is fixed and no clock is involved.
func TestRunDemo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cycle := make(chan time.Time)
	report := make(chan time.Time)
	var out lockedBuffer
	done := make(chan demoValues)
	go func() { done <- runDemo(ctx, cycle, report, &out, nil) }()

	report <- time.Time{}
	for range 150 {
		cycle <- time.Time{}
	}
	report <- time.Time{}
	for range 350 {
		cycle <- time.Time{}
	}
	report <- time.Time{}
	cancel()
	final := <-done

	want := []string{
		demoValuesAt(0).String(),
		demoValuesAt(150).String(),
		demoValuesAt(500).String(),
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runDemo printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if final != demoValuesAt(500) {
		t.Errorf("runDemo returned %+v, want %+v", final, demoValuesAt(500))
	}
}

func TestDemoSource(t *testing.T) {
	var src demoSource
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src.publish(demoValuesAt(500), at)
	snap := src.Snapshot()
	src.publish(demoValuesAt(501), at.Add(demoCycle)) // the snapshot taken stays as it was
	var dv ua.DataValue
	snap.Value(demoCounter, &dv)
	if n, ok := dv.Value.Uint32(); !ok || n != 500 || !dv.SourceTimestamp.Equal(at) {
		t.Errorf("Counter = %v at %v, want 500 at %v", dv.Value, dv.SourceTimestamp, at)
	}
	snap.Value(demoSine, &dv)
	if f, ok := dv.Value.Float64(); !ok || math.Abs(f-1) > 1e-9 {
		t.Errorf("Sine = %v, want 1", dv.Value)
	}
	snap.Value(demoToggle, &dv)
	if b, ok := dv.Value.Bool(); !ok || b {
		t.Errorf("Toggle = %v, want false", dv.Value)
	}
	if a := testing.AllocsPerRun(100, func() { src.Snapshot().Value(demoCounter, &dv) }); a != 0 {
		t.Errorf("reading a demo value allocates %v times", a)
	}
	var nilSrc *demoSource
	nilSrc.publish(demoValuesAt(1), at) // no panic
}
