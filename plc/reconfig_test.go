package plc_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/plctest"
)

// TestReconfigure: a running engine takes a change between two cycles.
// A kept device goes on; a tag whose definition stayed keeps its handle,
// value and status (also on a new Device), and is not in Changed; a new
// device is polled from the next cycle; a removed tag is
// Bad_NodeIdUnknown, gone from Lookup, refuses Writes, and gets its
// handle back when it returns; a changed tag starts again.
func TestReconfigure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tags := []plc.Tag{
			{Device: "a", Name: "x", Type: plc.UInt16},
			{Device: "a", Name: "y", Type: plc.UInt16, Access: plc.ReadWrite},
			{Device: "b", Name: "z", Type: plc.UInt16, Access: plc.ReadWrite},
		}
		e, fakes := build(t, plc.Config{Tags: tags}, "a", "b")
		fa, fb := fakes["a"], fakes["b"]
		x, y, z := handle(t, e, "a", "x"), handle(t, e, "a", "y"), handle(t, e, "b", "z")
		fa.Set(x, plc.UInt16Value(7))
		fb.Set(z, plc.UInt16Value(9))
		c := clock{time.Now()}
		stop := start(t, e)
		defer stop()
		c.at(20 * ms)

		// Every image's value of x.
		var xs []plc.Sample
		cancel := e.Subscribe(func(im *plc.Image) {
			xs = append(xs, im.Sample(x))
		})
		defer cancel()

		// Keep a as it is, drop b, add c.
		fc := &plctest.Fake{}
		err := e.Reconfigure(context.Background(), plc.Config{
			Devices: []plc.DeviceConfig{{Name: "a", Device: fa}, {Name: "c", Device: fc}},
			Tags:    []plc.Tag{tags[0], tags[1], {Device: "c", Name: "w", Type: plc.Int32}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := e.Lookup("a", "x"); !ok || h != x {
			t.Fatalf("x moved from handle %d to %d (%v)", x, h, ok)
		}
		if _, ok := e.Lookup("b", "z"); ok {
			t.Fatal("b.z is still there")
		}
		if st := e.Write(z, plc.UInt16Value(1), nil); st != status.BadNodeIDUnknown {
			t.Fatalf("Write to a removed tag: %v", st)
		}
		w := handle(t, e, "c", "w")
		fc.Set(w, plc.Int32Value(-5))
		bPolls := fb.Polls()
		c.at(40 * ms)
		im := e.Image()
		if s := im.Sample(x); s.Status != status.Good || s.Value != plc.UInt16Value(7) {
			t.Fatalf("x after the change: %+v", s)
		}
		for i, s := range xs {
			if s.Status != status.Good || s.Value != plc.UInt16Value(7) {
				t.Fatalf("image %d after the change has x %+v: a blip on an unchanged tag", i, s)
			}
		}
		if im.Status(z) != status.BadNodeIDUnknown {
			t.Fatalf("removed z: %v", im.Status(z))
		}
		if s := im.Sample(w); s.Status != status.Good || s.Value != plc.Int32Value(-5) {
			t.Fatalf("new c.w: %+v", s)
		}
		if fb.Polls() != bPolls {
			t.Fatal("the dropped device b was polled after the change")
		}

		// a on a new Device, x unchanged, y now an Int32: x keeps its
		// value and status in every image; y starts again.
		xs = xs[:0]
		fa2 := &plctest.Fake{}
		fa2.Set(x, plc.UInt16Value(7))
		yTag := tags[1]
		yTag.Type = plc.Int32
		if err := e.Reconfigure(context.Background(), plc.Config{
			Devices: []plc.DeviceConfig{{Name: "a", Device: fa2}, {Name: "c", Device: fc}},
			Tags:    []plc.Tag{tags[0], yTag, {Device: "c", Name: "w", Type: plc.Int32}},
		}); err != nil {
			t.Fatal(err)
		}
		if im := e.Image(); im.Status(x) != status.Good || im.Status(y) != status.BadWaitingForInitialData {
			t.Fatalf("right after: x %v, y %v", im.Status(x), im.Status(y))
		}
		aPolls := fa.Polls()
		c.at(60 * ms)
		if fa.Polls() != aPolls || fa2.Polls() == 0 {
			t.Fatalf("old a polled %d more times, new a %d times", fa.Polls()-aPolls, fa2.Polls())
		}
		for i, s := range xs {
			if s.Status != status.Good || s.Value != plc.UInt16Value(7) {
				t.Fatalf("image %d after the move to a new Device has x %+v", i, s)
			}
		}
		if len(xs) < 3 {
			t.Fatalf("%d images", len(xs))
		}
		if im := e.Image(); im.Status(y) != status.Good || im.Value(y).Type() != plc.Int32 {
			t.Fatalf("changed y: %v %v", im.Status(y), im.Value(y))
		}

		// b.z comes back: its old handle.
		fb2 := &plctest.Fake{}
		if err := e.Reconfigure(context.Background(), plc.Config{
			Devices: []plc.DeviceConfig{{Name: "a", Device: fa2}, {Name: "b", Device: fb2}, {Name: "c", Device: fc}},
			Tags:    []plc.Tag{tags[0], yTag, tags[2], {Device: "c", Name: "w", Type: plc.Int32}},
		}); err != nil {
			t.Fatal(err)
		}
		if h := handle(t, e, "b", "z"); h != z {
			t.Fatalf("b.z came back as handle %d, not %d", h, z)
		}

		// Refused, and nothing changes: a kept Device with other tags, a
		// new base cycle, a tag of no device.
		for name, cfg := range map[string]plc.Config{
			"kept device, other tags": {Devices: []plc.DeviceConfig{{Name: "a", Device: fa2}}, Tags: []plc.Tag{tags[0]}},
			"no such device":          {Devices: []plc.DeviceConfig{{Name: "a", Device: &plctest.Fake{}}}, Tags: []plc.Tag{{Device: "q", Name: "x", Type: plc.Bool}}},
			"period":                  {Period: 10 * ms, Devices: []plc.DeviceConfig{{Name: "a", Device: &plctest.Fake{}}}},
		} {
			if err := e.Reconfigure(context.Background(), cfg); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
		if err := e.Reconfigure(context.Background(), plc.Config{Period: 10 * ms}); !errors.Is(err, plc.ErrPeriodChange) {
			t.Errorf("period: %v", err)
		}
		if _, ok := e.Lookup("b", "z"); !ok {
			t.Fatal("a refused change removed b.z")
		}
	})
}

// TestReconfigurePendingWrite: a write queued for a busy device that a
// change removes, with its tag, is answered Bad_NodeIdUnknown; one the
// device already performs is answered with what the device says; the
// engine goes on and stops cleanly.
func TestReconfigurePendingWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tags := []plc.Tag{
			{Device: "a", Name: "x", Type: plc.UInt16},
			{Device: "b", Name: "z", Type: plc.UInt16, Access: plc.ReadWrite},
		}
		e, fakes := build(t, plc.Config{Tags: tags}, "a", "b")
		fa, fb := fakes["a"], fakes["b"]
		z := handle(t, e, "b", "z")
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(10 * ms)
		fb.SetDelay(50 * ms) // b's polls now take 10 cycles
		c.at(20 * ms)
		answers := make(chan plc.Status, 2)
		if st := e.Write(z, plc.UInt16Value(1), func(s plc.Status) { answers <- s }); st != status.Good {
			t.Fatal(st)
		}
		c.at(25 * ms)
		if err := e.Reconfigure(context.Background(), plc.Config{
			Devices: []plc.DeviceConfig{{Name: "a", Device: fa}},
			Tags:    tags[:1],
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case st := <-answers:
			if st != status.BadNodeIDUnknown {
				t.Fatalf("the pending write answered %v", st)
			}
		default:
			t.Fatal("the pending write of a removed tag was not answered")
		}
		c.at(200 * ms)
		if e.Image().Status(handle(t, e, "a", "x")) != status.Good {
			t.Fatal("a stopped being read")
		}
		stop()
	})
}
