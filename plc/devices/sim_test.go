package devices_test

import (
	"errors"
	"testing"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/sim"
)

// startSim starts a simulator ticked by hand and an engine polling it
// through the real Modbus driver and the simulated GPIO board.
func startSim(t *testing.T) (*sim.Sim, *running) {
	t.Helper()
	s, err := sim.StartOptions(t.Context(), sim.Options{Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := s.Config()
	r := start(t, &cfg, devices.Options{GPIO: s.GPIO()})
	r.waitGood(t, r.all()...)
	return s, r
}

// TestSimCounter: the Counter the engine reads is the simulator's tick
// count, and increases with it.
func TestSimCounter(t *testing.T) {
	s, r := startSim(t)
	counter := r.handle(t, "sim", "Counter")
	for range 10 {
		s.Step()
	}
	r.waitFor(t, "Counter = 10", func(im *plc.Image) bool { return im.Value(counter) == plc.UInt32Value(10) })
	for range 25 {
		s.Step()
	}
	im := r.waitFor(t, "Counter = 35", func(im *plc.Image) bool { return im.Value(counter) == plc.UInt32Value(35) })
	if st := im.Status(counter); st != status.Good {
		t.Fatalf("Counter status %v", st)
	}
}

// TestSimSignals: Sine, Ramp and Toggle as the register map says, through
// the driver's decoding of float64, float32 and a coil.
func TestSimSignals(t *testing.T) {
	s, r := startSim(t)
	sine, ramp, toggle := r.handle(t, "sim", "Sine"), r.handle(t, "sim", "Ramp"), r.handle(t, "sim", "Toggle")
	if v := r.Image().Value(toggle); v != plc.BoolValue(false) {
		t.Fatalf("Toggle at tick 0 = %v", v)
	}
	for range 150 {
		s.Step()
	}
	r.waitFor(t, "the signals of tick 150", func(im *plc.Image) bool {
		return im.Value(sine) == plc.Float64Value(sim.Sine(150)) &&
			im.Value(ramp) == plc.Float32Value(sim.Ramp(150)) &&
			im.Value(toggle) == plc.BoolValue(true)
	})
	for range 100 {
		s.Step()
	}
	r.waitFor(t, "Toggle off at tick 250", func(im *plc.Image) bool { return im.Value(toggle) == plc.BoolValue(false) })
}

// TestSimCommandStatus: a Command written through the engine shows in
// Status after the simulated PLC's next tick, not before.
func TestSimCommandStatus(t *testing.T) {
	s, r := startSim(t)
	cmd, stat := r.handle(t, "sim", "Command"), r.handle(t, "sim", "Status")
	if st := r.write(t, cmd, plc.UInt16Value(77)); st != status.Good {
		t.Fatalf("write Command: %v", st)
	}
	im := r.waitFor(t, "Command = 77", func(im *plc.Image) bool { return im.Value(cmd) == plc.UInt16Value(77) })
	if v := im.Value(stat); v != plc.UInt16Value(0) {
		t.Fatalf("Status = %v before the PLC's tick", v)
	}
	s.Step()
	r.waitFor(t, "Status = 77", func(im *plc.Image) bool { return im.Value(stat) == plc.UInt16Value(77) })
}

// TestSimSetpoint: a Setpoint written is read back; a read-only tag is not
// writable.
func TestSimSetpoint(t *testing.T) {
	_, r := startSim(t)
	sp := r.handle(t, "sim", "Setpoint")
	if st := r.write(t, sp, plc.Float32Value(12.5)); st != status.Good {
		t.Fatalf("write Setpoint: %v", st)
	}
	r.waitFor(t, "Setpoint = 12.5", func(im *plc.Image) bool { return im.Value(sp) == plc.Float32Value(12.5) })
	if st := r.Write(r.handle(t, "sim", "Counter"), plc.UInt32Value(1), nil); st != status.BadNotWritable {
		t.Fatalf("write Counter: %v, want BadNotWritable", st)
	}
}

// TestSimGPIO: what is written to DOn is read on DIn; a pin whose read
// fails is Bad_DeviceFailure, the others stay Good, and it recovers.
func TestSimGPIO(t *testing.T) {
	s, r := startSim(t)
	do1, di1 := r.handle(t, "io", "DO1"), r.handle(t, "io", "DI1")
	for _, v := range []bool{true, false, true} {
		if st := r.write(t, do1, plc.BoolValue(v)); st != status.Good {
			t.Fatalf("write DO1=%v: %v", v, st)
		}
		r.waitFor(t, "DI1 = DO1", func(im *plc.Image) bool {
			return im.Value(di1) == plc.BoolValue(v) && im.Value(do1) == plc.BoolValue(v)
		})
	}
	di2, di3 := r.handle(t, "io", "DI2"), r.handle(t, "io", "DI3")
	if err := s.GPIO().SetFault("DI2", errors.New("EIO")); err != nil {
		t.Fatal(err)
	}
	im := r.waitFor(t, "DI2 failing", func(im *plc.Image) bool { return im.Status(di2) == status.BadDeviceFailure })
	if st := im.Status(di3); st != status.Good {
		t.Fatalf("DI3 %v while DI2 fails", st)
	}
	if v := im.Value(di2); v.Type() != plc.Invalid {
		t.Fatalf("failing DI2 has a value %v", v)
	}
	var d plc.Diagnostics
	r.Diagnostics(&d)
	for _, dd := range d.Devices {
		if dd.Name == "io" && (dd.Driver.Errors == 0 || dd.Driver.LastError == "") {
			t.Errorf("io stats %+v: no error counted", dd.Driver)
		}
	}
	if err := s.GPIO().SetFault("DI2", nil); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "DI2 repaired", func(im *plc.Image) bool { return im.Status(di2) == status.Good })
	if st := r.Write(di1, plc.BoolValue(true), nil); st != status.BadNotWritable {
		t.Fatalf("write DI1: %v, want BadNotWritable", st)
	}
}

// TestSimTicking runs the simulator on its own 5 ms ticker, as edged does:
// the Counter increases and the Toggle takes both values. Bounded waits,
// no timing assertion.
func TestSimTicking(t *testing.T) {
	s, err := sim.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := s.Config()
	r := start(t, &cfg, devices.Options{GPIO: s.GPIO()})
	counter, toggle := r.handle(t, "sim", "Counter"), r.handle(t, "sim", "Toggle")
	im := r.waitGood(t, r.all()...)
	c0 := im.Value(counter).Bits()
	r.waitFor(t, "Counter to increase", func(im *plc.Image) bool { return im.Value(counter).Bits() > c0 })
	first := r.Image().Value(toggle)
	r.waitFor(t, "Toggle to flip", func(im *plc.Image) bool { return im.Status(toggle) == status.Good && im.Value(toggle) != first })
	var d plc.Diagnostics
	r.Diagnostics(&d)
	for _, dd := range d.Devices {
		if dd.Name == "sim" {
			if dd.Driver.Requests == 0 || dd.Driver.State != "connected" || dd.Driver.RoundTrip <= 0 {
				t.Errorf("sim stats %+v", dd.Driver)
			}
		}
	}
}

// TestException: a tag at an address the device does not have gets the
// mapped status of exception 2 (Bad_ConfigurationError); the tags merged
// into the same block read, and the device's other tags, stay Good.
func TestException(t *testing.T) {
	s, err := sim.StartOptions(t.Context(), sim.Options{Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := config.Default()
	tag := func(name string, typ config.Type, addr string) config.Tag {
		return config.Tag{Name: name, Type: typ, Address: addr, ScanClass: "fast", Access: config.Read}
	}
	cfg.Devices = []config.Device{{
		Name: "plc", Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000, ModbusTCP: config.DefaultModbusTCP(s.Addr()),
		Tags: []config.Tag{
			tag("Counter", config.UInt32, "hr:0"),
			tag("Low", config.UInt16, fmtHR(sim.BankSize-6)),
			tag("Missing", config.UInt16, fmtHR(sim.BankSize+3)),
			tag("High", config.UInt16, fmtHR(sim.BankSize-1)),
			tag("NoCoil", config.Bool, "co:5000"),
		},
	}}
	s.Update(func(b *slaveBank) {
		b.HoldingRegisters[sim.BankSize-6] = 6
		b.HoldingRegisters[sim.BankSize-1] = 1
	})
	r := start(t, &cfg, devices.Options{})
	if n, _ := devices.Blocks(r.cfg.Devices[0].Device); n != 3 {
		t.Fatalf("%d blocks, want 3 (hr:0, the merged block at the bank's end, the coil)", n)
	}
	h := func(n string) plc.Handle { return r.handle(t, "plc", n) }
	im := r.waitFor(t, "the exception's status", func(im *plc.Image) bool {
		return im.Status(h("Missing")) == status.BadConfigurationError && im.Status(h("NoCoil")) == status.BadConfigurationError
	})
	im = r.waitGood(t, h("Counter"), h("Low"), h("High"))
	if im.Value(h("Low")) != plc.UInt16Value(6) || im.Value(h("High")) != plc.UInt16Value(1) {
		t.Fatalf("Low %v High %v, want 6 and 1", im.Value(h("Low")), im.Value(h("High")))
	}
	if st := im.Status(h("Missing")); st != status.BadConfigurationError {
		t.Fatalf("Missing: %v", st)
	}
}
