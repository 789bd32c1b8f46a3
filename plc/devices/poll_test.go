package devices_test

import (
	"strings"
	"testing"

	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/devices"
)

// TestPollDueBlocks calls the Modbus device of the simulator's
// configuration directly: a poll reads only the blocks holding due tags
// (counted by the driver's requests), and Bind re-plans.
func TestPollDueBlocks(t *testing.T) {
	s, cfgOf := startManualSim(t)
	s.Step()
	cfg := cfgOf()
	pc, cl, err := devices.Build(&cfg, devices.Options{GPIO: s.GPIO()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	e, err := plc.New(pc) // binds
	if err != nil {
		t.Fatal(err)
	}
	dev := pc.Devices[0].Device
	// sim: hr 0..8 (Counter, Sine, Ramp, Status), hr 100..102 (Setpoint,
	// Command), coil 0 (Toggle).
	if n, _ := devices.Blocks(dev); n != 3 {
		t.Fatalf("%d blocks, want 3", n)
	}
	h := func(n string) plc.Handle {
		x, ok := e.Lookup("sim", n)
		if !ok {
			t.Fatalf("no tag %s", n)
		}
		return x
	}
	for _, tc := range []struct {
		due  []string
		reqs uint64
	}{
		{[]string{"Counter"}, 1},
		{[]string{"Counter", "Status", "Ramp"}, 1},
		{[]string{"Setpoint", "Counter"}, 2},
		{[]string{"Toggle", "Command", "Sine", "Setpoint"}, 3},
		{nil, 0},
	} {
		due := make([]plc.Handle, len(tc.due))
		for i, n := range tc.due {
			due[i] = h(n)
		}
		out := make([]plc.Sample, len(due))
		before := dev.Stats().Requests
		if err := dev.Poll(t.Context(), due, out); err != nil {
			t.Fatal(err)
		}
		if got := dev.Stats().Requests - before; got != tc.reqs {
			t.Errorf("poll of %v: %d requests, want %d", tc.due, got, tc.reqs)
		}
		for i, o := range out {
			if o.Status != status.Good {
				t.Errorf("%s: %v", tc.due[i], o.Status)
			}
			if tc.due[i] == "Counter" && o.Value != plc.UInt32Value(1) {
				t.Errorf("Counter = %v, want 1", o.Value)
			}
		}
	}
	// Bind again with the hr:100 block's tags only: re-planned.
	var bound []plc.BoundTag
	for _, n := range []string{"Setpoint", "Command"} {
		bound = append(bound, plc.BoundTag{Handle: h(n), Tag: e.Tag(h(n))})
	}
	if err := dev.Bind(bound); err != nil {
		t.Fatal(err)
	}
	if n, _ := devices.Blocks(dev); n != 1 {
		t.Fatalf("%d blocks after Bind of 2 tags, want 1", n)
	}
	out := make([]plc.Sample, 1)
	if err := dev.Poll(t.Context(), []plc.Handle{h("Counter")}, out); err != nil || out[0].Status != status.BadNodeIDUnknown {
		t.Fatalf("poll of a tag no longer bound: %v %v", err, out[0].Status)
	}
	// A tag the device's configuration does not have.
	err = dev.Bind([]plc.BoundTag{{Handle: 0, Tag: plc.Tag{Device: "sim", Name: "Nope", Type: plc.UInt16, Address: "hr:0"}}})
	if err == nil || err.Error() != "devices[sim].tags[Nope]: not in the device's configuration" {
		t.Fatalf("Bind of an unknown tag: %v", err)
	}
	// A tag of the device's configuration at another address: refused;
	// the configured address in another notation is the same point.
	moved := e.Tag(h("Setpoint"))
	conf := moved.Address
	moved.Address = "hr:999"
	err = dev.Bind([]plc.BoundTag{{Handle: h("Setpoint"), Tag: moved}})
	if want := `devices[sim].tags[Setpoint].address: "hr:999" bound, `; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Bind of a tag at another address: %v, want %s…", err, want)
	}
	area, off, err := modbus.ParsePointAddress(conf)
	if err != nil {
		t.Fatal(err)
	}
	moved.Address = modbus.FormatAddress(area, off)
	if err := dev.Bind([]plc.BoundTag{{Handle: h("Setpoint"), Tag: moved}}); err != nil {
		t.Fatalf("Bind at %s (configured %s): %v", moved.Address, conf, err)
	}
}
