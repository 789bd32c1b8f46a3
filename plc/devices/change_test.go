package devices_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
)

// TestChange: the drivers of devices whose configuration stays are kept
// (the same plc.Device), the others are made anew, and retire closes the
// old ones of the changed and removed devices only.
func TestChange(t *testing.T) {
	cfg := config.Simulator() // sim (Modbus TCP) and io (GPIO, board sim)
	cfg.Devices[0].ModbusTCP.Address = "127.0.0.1:5020"
	second := cfg.Devices[0]
	second.Name = "plc2"
	second.ModbusTCP = config.DefaultModbusTCP("127.0.0.1:5021")
	second.Tags = append([]config.Tag(nil), second.Tags...)
	cfg.Devices = append(cfg.Devices, second)
	pc, ds, err := devices.Build(&cfg, devices.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	before := map[string]plc.Device{}
	for _, d := range pc.Devices {
		before[d.Name] = d.Device
	}

	next := cfg
	next.Devices = append([]config.Device(nil), cfg.Devices...)
	next.Devices[2].Tags = next.Devices[2].Tags[1:] // plc2 changes
	next.Devices = next.Devices[1:]                 // sim goes
	added := cfg.Devices[0]
	added.Name = "plc3"
	added.ModbusTCP = config.DefaultModbusTCP("127.0.0.1:5022")
	next.Devices = append(next.Devices, added)
	pc2, ds2, retire, err := ds.Change(&next)
	if err != nil {
		t.Fatal(err)
	}
	defer ds2.Close()
	got := map[string]plc.Device{}
	for _, d := range pc2.Devices {
		got[d.Name] = d.Device
	}
	if len(got) != 3 || got["io"] != before["io"] {
		t.Fatalf("io was not kept: %v", got)
	}
	if got["plc2"] == before["plc2"] || got["plc3"] == nil {
		t.Fatal("plc2 (changed) was kept, or plc3 was not made")
	}
	if n := len(pc2.Tags); n != len(next.Devices[0].Tags)+len(next.Devices[1].Tags)+len(next.Devices[2].Tags) {
		t.Fatalf("%d tags", n)
	}
	if err := retire(); err != nil {
		t.Fatal(err)
	}
	// The old sim and plc2 links are closed, the new plc2's is not.
	poll := func(d plc.Device, tags []plc.Tag, name string) error {
		var tag plc.Tag
		for _, pt := range tags {
			if pt.Device == name {
				tag = pt
				break
			}
		}
		if err := d.Bind([]plc.BoundTag{{Handle: 0, Tag: tag}}); err != nil {
			t.Fatal(err)
		}
		out := make([]plc.Sample, 1)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return d.Poll(ctx, []plc.Handle{0}, out)
	}
	for _, name := range []string{"sim", "plc2"} {
		if err := poll(before[name], pc.Tags, name); !errors.Is(err, modbus.ErrClosed) {
			t.Errorf("old %s after retire: %v, want closed", name, err)
		}
	}
	if err := poll(got["plc2"], pc2.Tags, "plc2"); errors.Is(err, modbus.ErrClosed) {
		t.Error("the new plc2 is closed")
	}
	bad := next
	bad.Devices = append([]config.Device(nil), next.Devices...)
	bad.Devices[0].Name = "no spaces"
	if _, _, _, err := ds2.Change(&bad); err == nil {
		t.Fatal("an invalid configuration changed")
	}
}
