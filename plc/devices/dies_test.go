package devices_test

import (
	"net"
	"testing"
	"time"

	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
)

// TestDeviceDies stops the Modbus server under a running engine: its tags
// keep their last value as Uncertain_LastUsableValue, then turn
// Bad_NoCommunication after no_comm_timeout_ms, and are Good again once a
// server answers on the same address (the driver reconnects). Another
// device, alive all along, stays Good throughout.
func TestDeviceDies(t *testing.T) {
	bank := slave.NewBank(16)
	bank.HoldingRegisters[0] = 41
	srv := slave.New(bank)
	a, err := srv.ListenAndServe("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := a.String()
	other := slave.New(slave.NewBank(16))
	oa, err := other.ListenAndServe("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	cfg := config.Default()
	tcp := func(a string) *config.ModbusTCP {
		m := config.DefaultModbusTCP(a)
		m.TimeoutMs = 100
		return m
	}
	cfg.Devices = []config.Device{
		{Name: "dying", Kind: config.KindModbusTCP, NoCommTimeoutMs: 300, ModbusTCP: tcp(addr),
			Tags: []config.Tag{{Name: "V", Type: config.UInt16, Address: "hr:0", ScanClass: "fast", Access: config.Read}}},
		{Name: "alive", Kind: config.KindModbusTCP, NoCommTimeoutMs: 300, ModbusTCP: tcp(oa.String()),
			Tags: []config.Tag{{Name: "V", Type: config.UInt16, Address: "hr:0", ScanClass: "fast", Access: config.Read}}},
	}
	r := start(t, &cfg, devices.Options{TCP: func(_ string, c *modbus.TCPConfig) {
		c.BackoffMin, c.BackoffMax = 5*time.Millisecond, 20*time.Millisecond
	}})
	if r.cfg.NoCommAfter != 300*time.Millisecond {
		t.Fatalf("NoCommAfter %v", r.cfg.NoCommAfter)
	}
	v, alive := r.handle(t, "dying", "V"), r.handle(t, "alive", "V")
	im := r.waitGood(t, v, alive)
	t0 := im.SourceTime(v)
	if im.Value(v) != plc.UInt16Value(41) {
		t.Fatalf("V = %v", im.Value(v))
	}

	srv.Close()
	im = r.waitFor(t, "Uncertain_LastUsableValue", func(im *plc.Image) bool { return im.Status(v) == status.UncertainLastUsableValue })
	if im.Value(v) != plc.UInt16Value(41) || im.SourceTime(v) < t0 {
		t.Fatalf("uncertain V = %v at %d, want the last value 41", im.Value(v), im.SourceTime(v))
	}
	if st := im.Status(alive); st != status.Good {
		t.Fatalf("alive: %v while the other device dies", st)
	}
	im = r.waitFor(t, "Bad_NoCommunication", func(im *plc.Image) bool { return im.Status(v) == status.BadNoCommunication })
	if im.Value(v).Type() != plc.Invalid {
		t.Fatalf("BadNoCommunication with a value %v", im.Value(v))
	}
	var d plc.Diagnostics
	r.Diagnostics(&d)
	if dd := d.Devices[0]; dd.Driver.Errors == 0 || dd.Driver.LastError == "" || dd.Driver.LastErrorTime.IsZero() || dd.Driver.State == "connected" {
		t.Fatalf("stats of the dead device: %+v", dd.Driver)
	}

	// A server on the same address again.
	bank2 := slave.NewBank(16)
	bank2.HoldingRegisters[0] = 42
	srv2 := slave.New(bank2)
	var l net.Listener
	deadline := time.Now().Add(waitLimit)
	for {
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	go srv2.Serve(l)
	defer srv2.Close()
	r.waitFor(t, "recovery", func(im *plc.Image) bool {
		return im.Status(v) == status.Good && im.Value(v) == plc.UInt16Value(42)
	})
	r.Diagnostics(&d)
	if dd := d.Devices[0]; dd.Driver.Reconnects == 0 || dd.Driver.State != "connected" {
		t.Fatalf("stats after recovery: %+v", dd.Driver)
	}
}
