package devices_test

import (
	"context"
	"testing"
	"time"

	"github.com/edged/edged/board"
	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/sim"
)

// waitLimit bounds every wait of these tests; they assert no timing.
const waitLimit = 20 * time.Second

// running is an engine running over the devices of a configuration.
type running struct {
	*plc.Engine
	cfg plc.Config
}

// start builds cfg's devices, starts an engine over them and stops both at
// the end of the test.
func start(t testing.TB, cfg *config.Config, opts devices.Options) *running {
	t.Helper()
	pc, cl, err := devices.Build(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := plc.New(pc)
	if err != nil {
		cl.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	})
	return &running{Engine: e, cfg: pc}
}

func (r *running) handle(t testing.TB, dev, name string) plc.Handle {
	t.Helper()
	h, ok := r.Lookup(dev, name)
	if !ok {
		t.Fatalf("no tag %s.%s", dev, name)
	}
	return h
}

// waitFor waits until cond holds for the newest image and returns it.
func (r *running) waitFor(t testing.TB, what string, cond func(im *plc.Image) bool) *plc.Image {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		im := r.Image()
		if cond(im) {
			return im
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitLimit, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGood waits until every tag of the engine has been read with Good.
func (r *running) waitGood(t testing.TB, hs ...plc.Handle) *plc.Image {
	t.Helper()
	return r.waitFor(t, "good values", func(im *plc.Image) bool {
		for _, h := range hs {
			if !im.Status(h).IsGood() {
				return false
			}
		}
		return true
	})
}

// write writes v to h through the engine and returns the device's answer.
func (r *running) write(t testing.TB, h plc.Handle, v plc.Value) plc.Status {
	t.Helper()
	ch := make(chan plc.Status, 1)
	if st := r.Write(h, v, func(s plc.Status) { ch <- s }); st != status.Good {
		return st
	}
	select {
	case st := <-ch:
		return st
	case <-time.After(waitLimit):
		t.Fatalf("write of %v: no answer in %v", v, waitLimit)
	}
	return 0
}

// all returns the handles of every tag.
func (r *running) all() []plc.Handle {
	hs := make([]plc.Handle, r.Len())
	for i := range hs {
		hs[i] = plc.Handle(i)
	}
	return hs
}

type slaveBank = slave.Bank

func fmtHR(addr int) string { return config.FormatAddress(config.HoldingRegisters, addr) }

func mustBoard(t testing.TB, name string) board.Profile {
	t.Helper()
	p, err := board.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startManualSim starts a simulator ticked by hand and returns it with its
// configuration.
func startManualSim(t *testing.T) (*sim.Sim, func() config.Config) {
	t.Helper()
	s, err := sim.StartOptions(t.Context(), sim.Options{Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.Config
}
