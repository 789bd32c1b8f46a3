package plc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/plctest"
)

func TestPreciseWakeConfig(t *testing.T) {
	dev := new(plctest.Fake)
	for _, w := range []time.Duration{-time.Millisecond, 5 * time.Millisecond, 6 * time.Millisecond} {
		_, err := plc.New(plc.Config{
			Period:      5 * time.Millisecond,
			Devices:     []plc.DeviceConfig{{Name: "d", Device: dev}},
			Tags:        []plc.Tag{{Device: "d", Name: "t", Type: plc.UInt16}},
			PreciseWake: w,
		})
		if err == nil || !strings.Contains(err.Error(), "PreciseWake") {
			t.Errorf("PreciseWake %v: err = %v, want one naming PreciseWake", w, err)
		}
	}
}

// With PreciseWake the cycle runs on real time (nanosleep does not follow
// a synctest bubble): the engine must keep publishing images and count no
// cycle twice. How precise the wake is is measured by make bench-scan, not
// asserted here.
func TestPreciseWakeRuns(t *testing.T) {
	dev := new(plctest.Fake)
	e, err := plc.New(plc.Config{
		Period:      2 * time.Millisecond,
		Devices:     []plc.DeviceConfig{{Name: "d", Device: dev}},
		Tags:        []plc.Tag{{Device: "d", Name: "t", Type: plc.UInt16}},
		PreciseWake: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var last uint64
	for i := 0; i < 2000 && last < 20; i++ { // bounded: at most ~2 s
		time.Sleep(time.Millisecond)
		if img := e.Image(); img != nil {
			if c := img.Cycle(); c < last {
				t.Fatalf("cycle went back from %d to %d", last, c)
			} else {
				last = c
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last < 20 {
		t.Fatalf("only %d cycles published", last)
	}
}
