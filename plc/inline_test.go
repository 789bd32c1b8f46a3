package plc_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/plctest"
)

// goid is the running goroutine's number (from its stack's header).
func goid() int {
	var b [64]byte
	s := b[:runtime.Stack(b[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	n, _ := strconv.Atoi(string(s[:bytes.IndexByte(s, ' ')]))
	return n
}

// inlineFake is a plctest.Fake that says it never waits (plc.Inline), and
// records the goroutines its Poll and Write run on.
type inlineFake struct {
	plctest.Fake
	inline bool
	mu     sync.Mutex
	gs     map[int]bool
}

func (f *inlineFake) Inline() bool { return f.inline }

func (f *inlineFake) record() {
	f.mu.Lock()
	f.gs[goid()] = true
	f.mu.Unlock()
}

func (f *inlineFake) Poll(ctx context.Context, due []plc.Handle, out []plc.Sample) error {
	f.record()
	return f.Fake.Poll(ctx, due, out)
}

func (f *inlineFake) Write(ctx context.Context, h plc.Handle, v plc.Value) error {
	f.record()
	return f.Fake.Write(ctx, h, v)
}

// An Inline device is polled and written on Run's goroutine, and its
// values are in the image of the cycle that polled them; a device whose
// Inline says false keeps a goroutine of its own.
func TestInlineDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := &inlineFake{inline: true, gs: map[int]bool{}}
		out := &inlineFake{gs: map[int]bool{}}
		e, err := plc.New(plc.Config{
			Period: 5 * ms,
			Tags: []plc.Tag{
				{Device: "in", Name: "a", Type: plc.Float64, Access: plc.ReadWrite},
				{Device: "out", Name: "b", Type: plc.Float64},
			},
			Devices: []plc.DeviceConfig{{Name: "in", Device: in}, {Name: "out", Device: out}},
		})
		if err != nil {
			t.Fatal(err)
		}
		a, b := handle(t, e, "in", "a"), handle(t, e, "out", "b")
		in.Set(a, plc.Float64Value(1.5))
		out.Set(b, plc.Float64Value(2.5))
		ctx, cancel := context.WithCancel(context.Background())
		run := make(chan int, 1)
		done := make(chan error, 1)
		go func() {
			run <- goid()
			done <- e.Run(ctx)
		}()
		runG := <-run
		time.Sleep(12 * ms)
		synctest.Wait()
		if st := e.Write(a, plc.Float64Value(3), nil); st != status.Good {
			t.Fatalf("Write: %v", st)
		}
		time.Sleep(10 * ms)
		synctest.Wait()
		im := e.Image()
		if s := im.Sample(a); s.Status != status.Good || s.Value.Float64() != 3 {
			t.Errorf("inline tag: %+v, want the written 3", s)
		}
		if s := im.Sample(b); s.Status != status.Good || s.Value.Float64() != 2.5 {
			t.Errorf("other tag: %+v", s)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(in.gs) != 1 || !in.gs[runG] {
			t.Errorf("the Inline device ran on goroutines %v, want only Run's %d", in.gs, runG)
		}
		if len(out.gs) != 1 || out.gs[runG] {
			t.Errorf("the other device ran on goroutines %v, want one that is not Run's %d", out.gs, runG)
		}
	})
}
