package devices_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/board"
	"github.com/edged/edged/drivers/gpio"
	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
)

// TestBuildTags: the tags in configuration order (handles), scan classes as
// durations, access modes, types (scaled: Float64, scaled float32:
// Float32), and the engine settings.
func TestBuildTags(t *testing.T) {
	cfg := config.Simulator()
	cfg.Devices[0].ModbusTCP.Address = "127.0.0.1:5020"
	cfg.Devices[0].Tags = append(cfg.Devices[0].Tags,
		config.Tag{Name: "Level", Type: config.UInt16, Address: "ir:0", ScanClass: "second", Access: config.Read,
			Scaling: &config.Scaling{RawMin: 0, RawMax: 1000, EUMin: 0, EUMax: 10}},
		config.Tag{Name: "Flow", Type: config.Float32, Address: "ir:2", ScanClass: "slow", Access: config.Read,
			Scaling: &config.Scaling{RawMin: 0, RawMax: 1, EUMin: 0, EUMax: 3600}},
	)
	cfg.Devices[1].NoCommTimeoutMs = 2500
	pc, cl, err := devices.Build(&cfg, devices.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if pc.Period != 5*time.Millisecond || pc.NoCommAfter != 2500*time.Millisecond || pc.PollTimeout != 2*time.Second {
		t.Errorf("Period %v NoCommAfter %v PollTimeout %v", pc.Period, pc.NoCommAfter, pc.PollTimeout)
	}
	if len(pc.Devices) != 2 || pc.Devices[0].Name != "sim" || pc.Devices[1].Name != "io" {
		t.Fatalf("devices %+v", pc.Devices)
	}
	i := 0
	for _, d := range cfg.Devices {
		for _, ct := range d.Tags {
			pt := pc.Tags[i]
			if pt.Device != d.Name || pt.Name != ct.Name || pt.Address != ct.Address {
				t.Errorf("tag %d is %s.%s, want %s.%s", i, pt.Device, pt.Name, d.Name, ct.Name)
			}
			if want := time.Duration(cfg.ScanClasses[ct.ScanClass]) * 5 * time.Millisecond; pt.Scan != want {
				t.Errorf("%s.%s scan %v, want %v", d.Name, ct.Name, pt.Scan, want)
			}
			if (pt.Access == plc.ReadWrite) != (ct.Access == config.ReadWrite) {
				t.Errorf("%s.%s access %v", d.Name, ct.Name, pt.Access)
			}
			i++
		}
	}
	if i != len(pc.Tags) {
		t.Fatalf("%d tags, want %d", len(pc.Tags), i)
	}
	types := map[string]plc.Type{"Counter": plc.UInt32, "Sine": plc.Float64, "Ramp": plc.Float32, "Toggle": plc.Bool,
		"Level": plc.Float64, "Flow": plc.Float32, "DI1": plc.Bool}
	for _, pt := range pc.Tags {
		if want, ok := types[pt.Name]; ok && pt.Type != want {
			t.Errorf("%s type %v, want %v", pt.Name, pt.Type, want)
		}
	}
	if _, err := plc.New(pc); err != nil {
		t.Fatal(err)
	}
}

// TestBuildErrors: errors name the device and the field.
func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *config.Config)
		opts devices.Options
		want []string
	}{
		{"port 0", func(c *config.Config) {}, devices.Options{}, []string{"devices[sim].modbus_tcp.address", "port 0"}},
		{"invalid", func(c *config.Config) {
			c.Devices[0].ModbusTCP.Address = "127.0.0.1:502"
			c.Devices[0].Tags[0].Address = "4x0001"
		}, devices.Options{}, []string{"devices[sim].tags[Counter].address"}},
		{"sim without address", func(c *config.Config) {
			c.Devices[0].Kind, c.Devices[0].ModbusTCP = config.KindSim, nil
		}, devices.Options{}, []string{"devices[sim].kind", "SimAddress"}},
		{"gpio backend fails", func(c *config.Config) {
			c.Devices[0].ModbusTCP.Address = "127.0.0.1:502"
			c.Board = "rpi4"
		}, devices.Options{GPIO: gpio.NewSim(mustBoard(t, "sim"))}, []string{"devices[io]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Simulator()
			tc.edit(&c)
			_, cl, err := devices.Build(&c, tc.opts)
			if err == nil {
				cl.Close()
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestSimKind: a device of kind "sim" is polled over Modbus TCP at
// Options.SimAddress.
func TestSimKind(t *testing.T) {
	s, cfgOf := startManualSim(t)
	c := cfgOf()
	c.Devices[0].Kind, c.Devices[0].ModbusTCP = config.KindSim, nil
	r := start(t, &c, devices.Options{GPIO: s.GPIO(), SimAddress: s.Addr()})
	counter := r.handle(t, "sim", "Counter")
	r.waitGood(t, counter)
	s.Step()
	r.waitFor(t, "Counter = 1", func(im *plc.Image) bool { return im.Value(counter) == plc.UInt32Value(1) })
}

// TestBuildRTU: a modbus-rtu device on a port of the board profile gets the
// port's device and its RS-485 mode; two devices on one port share a bus.
func TestBuildRTU(t *testing.T) {
	cfg := config.Default()
	cfg.Board = "rpi4"
	tag := config.Tag{Name: "V", Type: config.UInt16, Address: "hr:0", ScanClass: "fast", Access: config.Read}
	a, b := config.DefaultModbusRTU("RS485-1"), config.DefaultModbusRTU("RS485-1")
	b.Units = []int{2}
	cfg.Devices = []config.Device{
		{Name: "a", Kind: config.KindModbusRTU, NoCommTimeoutMs: 1000, ModbusRTU: a, Tags: []config.Tag{tag}},
		{Name: "b", Kind: config.KindModbusRTU, NoCommTimeoutMs: 1000, ModbusRTU: b, Tags: []config.Tag{tag}},
	}
	var seen []modbus.SerialConfig
	pc, cl, err := devices.Build(&cfg, devices.Options{RTU: func(port string, sc *modbus.SerialConfig) { seen = append(seen, *sc) }})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if len(pc.Devices) != 2 || len(seen) != 1 {
		t.Fatalf("%d devices on %d buses, want 2 on 1", len(pc.Devices), len(seen))
	}
	p, _ := board.Lookup("rpi4")
	sp := p.Serial["RS485-1"]
	if sc := seen[0]; sc.Device != sp.Device || sc.RS485.Enabled != sp.RS485 || sc.BaudRate != 19200 || sc.Parity != "E" {
		t.Fatalf("serial config %+v for %+v", sc, sp)
	}
}

// TestBuildWriteLimits: a tag's write limits and allow_non_finite reach
// the engine's tag, as copies.
func TestBuildWriteLimits(t *testing.T) {
	cfg := config.Simulator()
	lo, hi := 0.0, 50.0
	cfg.Devices[0].ModbusTCP.Address = "127.0.0.1:5020"
	cfg.Devices[0].Tags = append(cfg.Devices[0].Tags,
		config.Tag{Name: "Limited", Type: config.Int16, Address: "hr:300", ScanClass: "fast", Access: config.ReadWrite, WriteMin: &lo, WriteMax: &hi},
		config.Tag{Name: "Any", Type: config.Float64, Address: "hr:310", ScanClass: "fast", Access: config.ReadWrite, AllowNonFinite: true},
	)
	pc, cl, err := devices.Build(&cfg, devices.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	hi = 99 // the engine keeps what was configured
	var limited, anyTag *plc.Tag
	for i := range pc.Tags {
		switch pc.Tags[i].Name {
		case "Limited":
			limited = &pc.Tags[i]
		case "Any":
			anyTag = &pc.Tags[i]
		}
	}
	if limited == nil || limited.WriteMin == nil || *limited.WriteMin != 0 || limited.WriteMax == nil || *limited.WriteMax != 50 || limited.NonFinite {
		t.Errorf("Limited: %+v", limited)
	}
	if anyTag == nil || !anyTag.NonFinite || anyTag.WriteMin != nil || anyTag.WriteMax != nil {
		t.Errorf("Any: %+v", anyTag)
	}
}
