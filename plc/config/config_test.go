package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

func loadExample(t *testing.T) *Config {
	t.Helper()
	c, err := Load("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExampleValidates(t *testing.T) {
	c := loadExample(t)
	if len(c.Devices) != 3 || c.Board != "rpi4" || c.BaseCycleMs != 5 {
		t.Fatalf("%+v", c)
	}
	d, ok := c.Device("plc1")
	if !ok || len(d.Tags) != 11 || *d.ModbusTCP.UnitID != 1 || *d.ModbusTCP.MaxGap != 10 {
		t.Fatalf("plc1: %+v", d)
	}
	if s := d.Tags[0].Scaling; s == nil || s.EUMax != 150 || d.Tags[0].Units != "CEL" {
		t.Errorf("Temp: %+v", d.Tags[0])
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for name, c := range map[string]Config{"example": *loadExample(t), "default": Default(), "simulator": Simulator()} {
		b, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		if !reflect.DeepEqual(&c, c2) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", name, c, *c2)
		}
	}
}

func TestDefaultAndSimulatorValidate(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	s := Simulator()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	sim, ok := s.Device("sim")
	if !ok || sim.Kind != KindModbusTCP || sim.ModbusTCP.Address != SimulatorAddress {
		t.Fatalf("sim: %+v", sim)
	}
	want := map[string]struct {
		typ Type
		acc Access
	}{
		"Counter": {UInt32, Read}, "Sine": {Float64, Read}, "Ramp": {Float32, Read}, "Toggle": {Bool, Read},
		"Setpoint": {Float32, ReadWrite}, "Command": {UInt16, ReadWrite}, "Status": {UInt16, Read},
	}
	if len(sim.Tags) != len(want) {
		t.Errorf("sim has %d tags", len(sim.Tags))
	}
	for _, tg := range sim.Tags {
		if w, ok := want[tg.Name]; !ok || w.typ != tg.Type || w.acc != tg.Access {
			t.Errorf("sim tag %+v", tg)
		}
	}
	io, ok := s.Device("io")
	if !ok || io.Kind != KindGPIO || len(io.Tags) != 8 || s.Board != "sim" {
		t.Fatalf("io: %+v", io)
	}
	for _, tg := range io.Tags {
		out := strings.HasPrefix(tg.Name, "DO")
		if out != (tg.Access == ReadWrite) || tg.Address != tg.Name {
			t.Errorf("io tag %+v", tg)
		}
	}
	// A copy is independent.
	s.Devices[0].Tags[0].Name = "x"
	if Simulator().Devices[0].Tags[0].Name != "Counter" {
		t.Error("Simulator shares state")
	}
}

func TestNoHiddenDefaults(t *testing.T) {
	_, err := Parse([]byte(`{}`))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%v", err)
	}
	for _, s := range []string{"version: missing", "base_cycle_ms: missing", "scan_classes: missing", "board: missing", "devices: missing"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("lacks %q:\n%v", s, err)
		}
	}
	_, err = Parse([]byte(`{"version":1,"base_cycle_ms":5,"scan_classes":{"f":1},"board":"sim","devices":[
		{"name":"p","kind":"modbus-tcp","modbus_tcp":{},"tags":[]},
		{"name":"r","kind":"modbus-rtu","modbus_rtu":{},"tags":[]}]}`))
	for _, s := range []string{
		"devices[p].no_comm_timeout_ms: missing",
		"devices[p].modbus_tcp.address: missing",
		"devices[p].modbus_tcp.unit_id: missing",
		"devices[p].modbus_tcp.timeout_ms: missing",
		"devices[p].modbus_tcp.order: missing",
		"devices[p].modbus_tcp.max_registers: missing",
		"devices[p].modbus_tcp.max_bits: missing",
		"devices[p].modbus_tcp.max_gap: missing",
		"devices[r].modbus_rtu.port: missing",
		"devices[r].modbus_rtu.baud: missing",
		"devices[r].modbus_rtu.parity: missing",
		"devices[r].modbus_rtu.data_bits: missing",
		"devices[r].modbus_rtu.stop_bits: missing",
		"devices[r].modbus_rtu.units: missing",
		"devices[r].modbus_rtu.timeout_ms: missing",
	} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("lacks %q:\n%v", s, err)
		}
	}
}

func TestStrictDecoding(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"version":1,"base_cycle":5}`, `unknown field "base_cycle"`},
		{`{"devices":[{"name":"a","tags":[{"name":"x","adress":"40001"}]}]}`, `unknown field "adress"`},
		{`{"version":1} {}`, "data after the top-level object"},
		{"{\n\"version\": \"1\"}", "line 2"},
		{"{\n\"version\": 1,\n}", "line 3"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestStrictKeys: what encoding/json would let through is an error that
// names the field: a key that matches a field only without regard to case,
// a key given twice (in a structure or in scan_classes), a scaling without
// all four numbers. An example that is right decodes.
func TestStrictKeys(t *testing.T) {
	example, err := os.ReadFile("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(example); err != nil {
		t.Fatalf("example: %v", err)
	}
	const dev = `"devices":[{"name":"p","kind":"modbus-tcp","no_comm_timeout_ms":5000,"modbus_tcp":{"address":"10.0.0.1:502","unit_id":1,"timeout_ms":100,"order":"ABCD","max_registers":125,"max_bits":2000,"max_gap":0},"tags":[`
	for _, tc := range []struct{ in, want string }{
		{`{"Version":1}`, `config: Version: unknown field "Version" (field names are case-sensitive: "version")`},
		{`{"version":1,"version":2}`, `config: version: given twice`},
		{`{"version":1,"scan_classes":{"fast":1,"fast":2}}`, `config: scan_classes.fast: given twice`},
		{`{"version":1,` + dev + `{"name":"a","Type":"uint16"}]}]}`, `config: devices[#0].tags[#0].Type: unknown field "Type" (field names are case-sensitive: "type")`},
		{`{"version":1,` + dev + `{"name":"a","name":"b"}]}]}`, `config: devices[#0].tags[#0].name: given twice`},
		{`{"version":1,` + dev + `{"name":"a","scaling":{"raw_min":0,"raw_max":10,"eu_min":0}}]}]}`, `config: devices[#0].tags[#0].scaling: needs eu_max`},
		{`{"version":1,` + dev + `{"name":"a","scaling":{"raw_min":0,"raw_max":10,"eu_min":0,"eu_max":1,"EU_max":2}}]}]}`, `config: devices[#0].tags[#0].scaling.EU_max: unknown field "EU_max" (field names are case-sensitive: "eu_max")`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// mutate applies f to a fresh copy of the example and returns Validate's
// error text.
func mutate(t *testing.T, f func(c *Config)) string {
	t.Helper()
	c := loadExample(t)
	f(c)
	err := c.Validate()
	if err == nil {
		return ""
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("not a *ValidationError: %v", err)
	}
	return err.Error()
}

func tag(c *Config, dev, name string) *Tag {
	d, _ := c.Device(dev)
	for i := range d.Tags {
		if d.Tags[i].Name == name {
			return &d.Tags[i]
		}
	}
	panic(name)
}

func TestValidateProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(c *Config)
		want string // "" means valid
	}{
		{"history without store settings", func(c *Config) { c.History = nil },
			`history: missing, and devices[plc1].tags[Temp].history asks for history`},
		{"history mode", func(c *Config) { tag(c, "plc1", "Temp").History.Mode = "sometimes" },
			`devices[plc1].tags[Temp].history.mode: "sometimes" is not change, deadband or period`},
		{"history deadband on bool", func(c *Config) {
			tag(c, "plc1", "Running").History = &TagHistory{Mode: OnDeadband, Deadband: 1, DeadbandType: DeadbandAbsolute}
		}, `devices[plc1].tags[Running].history.mode: deadband is for numbers, not a bool`},
		{"history percent without scaling", func(c *Config) {
			tag(c, "plc1", "Pressure").History = &TagHistory{Mode: OnDeadband, Deadband: 1, DeadbandType: DeadbandPercent}
		}, `devices[plc1].tags[Pressure].history.deadband_type: percent of the EU range needs the tag's scaling`},
		{"history deadband missing", func(c *Config) {
			tag(c, "plc1", "Pressure").History = &TagHistory{Mode: OnDeadband, DeadbandType: DeadbandAbsolute}
		}, `devices[plc1].tags[Pressure].history.deadband: missing or not a positive number (0)`},
		{"history period missing", func(c *Config) { tag(c, "plc1", "Pressure").History = &TagHistory{Mode: Periodic} },
			`devices[plc1].tags[Pressure].history.period_ms: missing`},
		{"history period on change", func(c *Config) { tag(c, "plc1", "Pressure").History = &TagHistory{Mode: OnChange, PeriodMs: 5} },
			`devices[plc1].tags[Pressure].history.period_ms: only for mode period`},
		{"history flush", func(c *Config) { c.History.FlushIntervalMs = 10 },
			`history.flush_interval_ms: 10 is outside 100..60000`},
		{"history reserve", func(c *Config) { c.History.ReserveMB = 0 }, `history.reserve_mb: missing`},
		{"history age", func(c *Config) { c.History.MaxAgeDays = -1 }, `history.max_age_days: -1 is outside 0..36500 (0: no bound)`},
		{"history aggregates", func(c *Config) { c.History.Aggregates.PercentDataGood, c.History.Aggregates.PercentDataBad = 20, 50 },
			`history.aggregates.percent_data_good: 20 is below 100 − percent_data_bad (50)`},
		{"history aggregates missing", func(c *Config) { c.History.Aggregates = nil }, `history.aggregates: missing`},
		{"alarm good", func(c *Config) {
			tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: AlarmLimit, LowLow: ptr(-40.0), Low: ptr(-20.0), High: ptr(100.0), HighHigh: ptr(120.0), Deadband: 1, Severity: 700}
			tag(c, "plc1", "Running").Alarm = &TagAlarm{Kind: AlarmOffNormal, Normal: ptr(1.0), Severity: 300, Message: "motor stopped"}
			c.Devices[0].CommAlarm = &CommAlarm{Severity: 900}
		}, ""},
		{"alarm kind missing", func(c *Config) { tag(c, "plc1", "Temp").Alarm = &TagAlarm{Severity: 1} },
			`devices[plc1].tags[Temp].alarm.kind: missing (limit, limits or off_normal)`},
		{"alarm kind", func(c *Config) { tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: "high", Severity: 1} },
			`devices[plc1].tags[Temp].alarm.kind: "high" is not limit, limits or off_normal`},
		{"alarm severity", func(c *Config) {
			tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: AlarmLimit, High: ptr(1.0), Severity: 1001}
		},
			`devices[plc1].tags[Temp].alarm.severity: 1001 is outside 1..1000`},
		{"alarm without limits", func(c *Config) { tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: AlarmLimits, Severity: 5} },
			`devices[plc1].tags[Temp].alarm: a limits alarm needs a limit`},
		{"alarm limits out of order", func(c *Config) {
			tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: AlarmLimit, Low: ptr(10.0), High: ptr(5.0), Severity: 5}
		}, `devices[plc1].tags[Temp].alarm.high: 5 is below low (10)`},
		{"alarm low equal high", func(c *Config) {
			tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: AlarmLimit, Low: ptr(5.0), High: ptr(5.0), Severity: 5}
		}, `devices[plc1].tags[Temp].alarm.high: 5 is below low (5)`},
		{"alarm limit on bool", func(c *Config) {
			tag(c, "plc1", "Running").Alarm = &TagAlarm{Kind: AlarmLimit, High: ptr(1.0), Severity: 5}
		},
			`devices[plc1].tags[Running].alarm.kind: limit is for numbers, not a bool`},
		{"alarm deadband", func(c *Config) {
			tag(c, "plc1", "Temp").Alarm = &TagAlarm{Kind: AlarmLimit, High: ptr(1.0), Deadband: -1, Severity: 5}
		}, `devices[plc1].tags[Temp].alarm.deadband: -1 is not a finite number ≥ 0`},
		{"alarm off normal without normal", func(c *Config) { tag(c, "plc1", "Running").Alarm = &TagAlarm{Kind: AlarmOffNormal, Severity: 5} },
			`devices[plc1].tags[Running].alarm.normal: missing`},
		{"alarm off normal of a bool", func(c *Config) {
			tag(c, "plc1", "Running").Alarm = &TagAlarm{Kind: AlarmOffNormal, Normal: ptr(2.0), Severity: 5}
		}, `devices[plc1].tags[Running].alarm.normal: 2: a bool's normal value is 0 or 1`},
		{"alarm off normal on a float", func(c *Config) {
			tag(c, "plc1", "Pressure").Alarm = &TagAlarm{Kind: AlarmOffNormal, Normal: ptr(2.0), Severity: 5}
		}, `devices[plc1].tags[Pressure].alarm.kind: off_normal is for bools and unscaled integers`},
		{"alarm off normal with a limit", func(c *Config) {
			tag(c, "plc1", "Running").Alarm = &TagAlarm{Kind: AlarmOffNormal, Normal: ptr(0.0), High: ptr(1.0), Severity: 5}
		}, `devices[plc1].tags[Running].alarm.high: only for kinds limit and limits`},
		{"comm alarm severity", func(c *Config) { c.Devices[0].CommAlarm = &CommAlarm{} },
			`devices[plc1].comm_alarm.severity: missing`},
		{"bad address", func(c *Config) { tag(c, "plc1", "Temp").Address = "4x0001" },
			`devices[plc1].tags[Temp].address: "4x0001" is not a Modbus address`},
		{"address 0-based bad area", func(c *Config) { tag(c, "plc1", "Temp").Address = "xx:1" },
			`devices[plc1].tags[Temp].address: "xx:1" is not a Modbus address: unknown area "xx"`},
		{"address 1-based zero", func(c *Config) { tag(c, "plc1", "Temp").Address = "40000" },
			`"40000" is not a Modbus address: number 0 out of range 1..9999 (the notation is 1-based)`},
		{"past end", func(c *Config) { tag(c, "plc1", "Energy").Address = "hr:65534" },
			`devices[plc1].tags[Energy].address: hr:65534 with 4 registers runs past the end`},
		{"duplicate device", func(c *Config) { c.Devices[1].Name = "plc1" },
			`devices[plc1].name: "plc1" is also the name of devices[#0]`},
		{"duplicate tag", func(c *Config) { tag(c, "plc1", "Pressure").Name = "Temp" },
			`devices[plc1].tags[Temp].name: "Temp" is also the name of tags[#0]`},
		{"dot in tag name", func(c *Config) { tag(c, "plc1", "Temp").Name = "a.b" },
			`devices[plc1].tags[a.b].name: "a.b": use letters`},
		{"unknown scan class", func(c *Config) { tag(c, "plc1", "Temp").ScanClass = "turbo" },
			`devices[plc1].tags[Temp].scan_class: "turbo" is not a scan class (known: fast, normal, second, slow)`},
		{"scan class zero", func(c *Config) { c.ScanClasses["slow"] = 0 }, `scan_classes[slow]: missing`},
		{"bad kind", func(c *Config) { c.Devices[2].Kind = "canbus" }, `devices[io].kind: "canbus" is not one of`},
		{"settings of other kind", func(c *Config) { c.Devices[2].ModbusTCP = DefaultModbusTCP("a:1") },
			`devices[io].modbus_tcp: not allowed for kind "gpio"`},
		{"bad order", func(c *Config) { c.Devices[0].ModbusTCP.Order = "ABDC" },
			`devices[plc1].modbus_tcp.order: "ABDC" is not one of`},
		{"bad tag order", func(c *Config) { tag(c, "plc1", "Pressure").Order = "X" },
			`devices[plc1].tags[Pressure].order: "X" is not one of`},
		{"bad access", func(c *Config) { tag(c, "plc1", "Temp").Access = "write" },
			`devices[plc1].tags[Temp].access: "write" is not read or read-write`},
		{"bad type", func(c *Config) { tag(c, "plc1", "Temp").Type = "Float" },
			`devices[plc1].tags[Temp].type: "Float" is not one of`},
		{"float on coil", func(c *Config) { tag(c, "plc1", "Start").Type = Float32 },
			`devices[plc1].tags[Start].type: float32 on coils: only bool`},
		{"bool in register without bit", func(c *Config) { tag(c, "plc1", "Fault").Bit = nil },
			`devices[plc1].tags[Fault].bit: missing`},
		{"bit 16", func(c *Config) { tag(c, "plc1", "Fault").Bit = Int(16) },
			`devices[plc1].tags[Fault].bit: 16 is outside 0..15`},
		{"bit on coil", func(c *Config) { tag(c, "plc1", "Start").Bit = Int(1) },
			`devices[plc1].tags[Start].bit: not allowed on coils`},
		{"string without length", func(c *Config) { tag(c, "plc1", "Recipe").Length = 0 },
			`devices[plc1].tags[Recipe].length: missing`},
		{"length on int", func(c *Config) { tag(c, "plc1", "Temp").Length = 2 },
			`devices[plc1].tags[Temp].length: only for strings`},
		{"write to input register", func(c *Config) { tag(c, "plc1", "Temp").Access = ReadWrite },
			`devices[plc1].tags[Temp].access: read-write on input registers, which are read-only`},
		{"unknown unit", func(c *Config) { tag(c, "plc1", "Temp").Units = "DEGC" },
			`devices[plc1].tags[Temp].units: "DEGC" is not a UNECE unit code`},
		{"units on bool", func(c *Config) { tag(c, "plc1", "Running").Units = "CEL" },
			`devices[plc1].tags[Running].units: not allowed on a bool`},
		{"scaling on string", func(c *Config) { tag(c, "plc1", "Recipe").Scaling = &Scaling{0, 1, 0, 1} },
			`devices[plc1].tags[Recipe].scaling: not allowed on a string`},
		{"scaling degenerate", func(c *Config) { tag(c, "plc1", "Temp").Scaling.RawMax = 0 },
			`devices[plc1].tags[Temp].scaling: raw_min equals raw_max`},
		{"scaling eu inverted", func(c *Config) { tag(c, "plc1", "Temp").Scaling.EUMin = 200 },
			`eu_min (200) must be below eu_max (150)`},
		{"unknown board", func(c *Config) { c.Board = "bbb" }, `board: "bbb" is not a known board (known: generic-armv7, rpi4, sim)`},
		{"unknown pin", func(c *Config) { tag(c, "io", "Lamp").Address = "DO9" },
			`devices[io].tags[Lamp].address: "DO9" is not a pin of board "rpi4" (known: DI1, DI2, DI3, DI4, DO1, DO2, DO3, DO4)`},
		{"pin twice", func(c *Config) { tag(c, "io", "EStop").Address = "DI1" },
			`devices[io].tags[EStop].address: pin DI1 is also used by devices[io].tags[DoorOpen]`},
		{"write to input pin", func(c *Config) { tag(c, "io", "EStop").Access = ReadWrite },
			`devices[io].tags[EStop].access: read-write on input pin DI2`},
		{"debounce on output", func(c *Config) { tag(c, "io", "Lamp").Debounce = 2 },
			`devices[io].tags[Lamp].debounce: not allowed on output pin DO1`},
		{"write limits on a read tag", func(c *Config) { tag(c, "plc1", "Temp").WriteMax = ptr(1.0) },
			`devices[plc1].tags[Temp].write_min: write limits on a tag that is not read-write`},
		{"write limits crossed", func(c *Config) {
			tag(c, "plc1", "Start").WriteMin, tag(c, "plc1", "Start").WriteMax = ptr(2.0), ptr(1.0)
		},
			`devices[plc1].tags[Start].write_min: 2 is above write_max (1)`},
		{"write limits on a bool", func(c *Config) { tag(c, "plc1", "Start").WriteMax = ptr(1.0) },
			`devices[plc1].tags[Start].write_min: write limits on a bool`},
		{"write limit not finite", func(c *Config) { tag(c, "plc1", "Start").WriteMax = ptr(math.Inf(1)) },
			`devices[plc1].tags[Start].write_max: +Inf is not a finite number within ±1e+15`},
		{"non-finite on an integer", func(c *Config) { tag(c, "plc1", "Energy").AllowNonFinite = true },
			`devices[plc1].tags[Energy].allow_non_finite: only for float32 and float64 tags without scaling`},
		{"debounce too long", func(c *Config) { tag(c, "io", "DoorOpen").Debounce = 1 << 20 },
			`devices[io].tags[DoorOpen].debounce: 1048576 is outside 0..1000`},
		{"EU range beyond the bound", func(c *Config) { tag(c, "plc1", "Temp").Scaling.EUMax = 1e308 },
			`devices[plc1].tags[Temp].scaling: 1e+308 is not a finite number within ±1e+15`},
		{"debounce on modbus", func(c *Config) { tag(c, "plc1", "Running").Debounce = 2 },
			`devices[plc1].tags[Running].debounce: only for gpio inputs`},
		{"int on gpio", func(c *Config) { tag(c, "io", "Lamp").Type = Int16 },
			`devices[io].tags[Lamp].type: "int16" on a GPIO pin: only bool`},
		{"unknown serial port", func(c *Config) { c.Devices[1].ModbusRTU.Port = "RS485-7" },
			`devices[meters].modbus_rtu.port: "RS485-7" is not a serial port of board "rpi4" (known: RS232-1, RS485-1)`},
		{"device path port", func(c *Config) { c.Devices[1].ModbusRTU.Port = "/dev/ttyUSB0" }, ""},
		{"bad parity", func(c *Config) { c.Devices[1].ModbusRTU.Parity = "M" }, `devices[meters].modbus_rtu.parity: "M" is not one of N, E, O`},
		{"bad baud", func(c *Config) { c.Devices[1].ModbusRTU.Baud = 12345 }, `devices[meters].modbus_rtu.baud: 12345 is not one of`},
		{"bad unit", func(c *Config) { c.Devices[1].ModbusRTU.Units = []int{1, 248} }, `devices[meters].modbus_rtu.units[1]: 248 is outside 1..247`},
		{"tag unit missing", func(c *Config) { tag(c, "meters", "Power1").Unit = nil },
			`devices[meters].tags[Power1].unit: missing (the bus has units [1 2])`},
		{"tag unit not on bus", func(c *Config) { tag(c, "meters", "Power1").Unit = Int(3) },
			`devices[meters].tags[Power1].unit: 3 is not a unit of the bus [1 2]`},
		{"unit on tcp tag", func(c *Config) { tag(c, "plc1", "Temp").Unit = Int(1) },
			`devices[plc1].tags[Temp].unit: only for tags of a Modbus RTU bus`},
		{"tcp address", func(c *Config) { c.Devices[0].ModbusTCP.Address = "plc1" },
			`devices[plc1].modbus_tcp.address: "plc1" is not host:port`},
		{"port 0 not loopback", func(c *Config) { c.Devices[0].ModbusTCP.Address = "10.0.0.1:0" },
			`port 0 (chosen at run time) is only for the built-in simulator`},
		{"unit id 256", func(c *Config) { c.Devices[0].ModbusTCP.UnitID = Int(256) }, `devices[plc1].modbus_tcp.unit_id: 256 is outside 0..255`},
		{"max registers", func(c *Config) { c.Devices[0].ModbusTCP.MaxRegisters = 126 }, `devices[plc1].modbus_tcp.max_registers: 126 is outside 1..125`},
		{"max gap", func(c *Config) { c.Devices[0].ModbusTCP.MaxGap = Int(-1) }, `devices[plc1].modbus_tcp.max_gap: -1 is outside`},
		{"base cycle", func(c *Config) { c.BaseCycleMs = 5000 }, `base_cycle_ms: 5000 is outside 1..1000`},
		{"version", func(c *Config) { c.Version = 2 }, `version: 2 is not supported`},
		{"nameless tag", func(c *Config) { tag(c, "plc1", "Energy").Name = "" }, `devices[plc1].tags[#2].name: missing`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkProblems(t, tc.f, tc.want) })
	}
}

// checkProblems validates the example changed by f: valid when want is "",
// else with want among the problems.
func checkProblems(t *testing.T, f func(c *Config), want string) {
	t.Helper()
	got := mutate(t, f)
	if want == "" {
		if got != "" {
			t.Fatalf("unexpected problems:\n%s", got)
		}
		return
	}
	if !strings.Contains(got, want) {
		t.Fatalf("want %q in:\n%s", want, got)
	}
}

func TestValidateReportsAllProblems(t *testing.T) {
	c := loadExample(t)
	tag(c, "plc1", "Temp").Address = "4x0001"
	tag(c, "plc1", "Start").Type = Float32
	tag(c, "io", "Lamp").Address = "DO9"
	c.Devices[1].ModbusRTU.Parity = "M"
	err := c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 4 {
		t.Fatalf("%v", err)
	}
	if !strings.HasPrefix(err.Error(), "config: 4 problems:\n\t") {
		t.Errorf("%q", err.Error())
	}
}

func TestOverlappingWrites(t *testing.T) {
	add := func(c *Config, dev string, tg Tag) {
		d, _ := c.Device(dev)
		d.Tags = append(d.Tags, tg)
	}
	rw := func(name string, typ Type, addr string) Tag {
		return Tag{Name: name, Type: typ, Address: addr, ScanClass: "fast", Access: ReadWrite}
	}
	for _, tc := range []struct {
		name string
		f    func(c *Config)
		want string
	}{
		{"register inside float", func(c *Config) { add(c, "plc1", rw("X", UInt16, "hr:11")) },
			`devices[plc1].tags[X].address: writes holding registers hr:11, which devices[plc1].tags[Setpoint] also writes`},
		{"same coil", func(c *Config) { add(c, "plc1", rw("X", Bool, "co:0")) },
			`devices[plc1].tags[X].address: writes coils co:0, which devices[plc1].tags[Start] also writes`},
		{"same bit", func(c *Config) { x := rw("X", Bool, "hr:1"); x.Bit = Int(1); add(c, "plc1", x) },
			`devices[plc1].tags[X].address: writes holding registers hr:1, which devices[plc1].tags[CmdAck] also writes`},
		{"bit and word", func(c *Config) { add(c, "plc1", rw("X", UInt16, "40002")) },
			`which devices[plc1].tags[CmdReset] also writes`},
		{"other bit is fine", func(c *Config) { x := rw("X", Bool, "hr:1"); x.Bit = Int(2); add(c, "plc1", x) }, ""},
		{"read-only overlap is fine", func(c *Config) {
			x := rw("X", UInt32, "hr:10")
			x.Access = Read
			add(c, "plc1", x)
		}, ""},
		{"adjacent is fine", func(c *Config) { add(c, "plc1", rw("X", UInt16, "hr:12")) }, ""},
		{"other area is fine", func(c *Config) { add(c, "plc1", rw("X", Bool, "co:10")) }, ""},
		{"string overlap", func(c *Config) { add(c, "plc1", rw("X", Float64, "hr:105")) },
			`writes holding registers hr:105, which devices[plc1].tags[Recipe] also writes`},
		{"other RTU unit is fine", func(c *Config) {
			a, b := rw("A", UInt16, "hr:0"), rw("B", UInt16, "hr:0")
			a.Unit, b.Unit = Int(1), Int(2)
			add(c, "meters", a)
			add(c, "meters", b)
		}, ""},
		{"same RTU unit from another device on the bus", func(c *Config) {
			a := rw("A", UInt16, "hr:0")
			a.Unit = Int(1)
			add(c, "meters", a)
			d2 := Device{Name: "meters2", Kind: KindModbusRTU, NoCommTimeoutMs: 1000, ModbusRTU: DefaultModbusRTU("RS485-1"),
				Tags: []Tag{rw("B", UInt16, "hr:0")}}
			d2.ModbusRTU.Units = []int{1}
			c.Devices = append(c.Devices, d2)
		}, `devices[meters2].modbus_rtu.units: unit 1 on /dev/ttyAMA0 is also in devices[meters]`},
		{"same TCP PLC from two devices", func(c *Config) {
			d2 := Device{Name: "plc1b", Kind: KindModbusTCP, NoCommTimeoutMs: 1000, ModbusTCP: DefaultModbusTCP("192.168.10.20:502"),
				Tags: []Tag{rw("Y", Float32, "hr:9")}}
			c.Devices = append(c.Devices, d2)
		}, `devices[plc1b].tags[Y].address: writes holding registers hr:10, which devices[plc1].tags[Setpoint] also writes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mutate(t, tc.f)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("want %q, got:\n%s", tc.want, got)
			}
		})
	}
}

func TestRTUBusSharing(t *testing.T) {
	got := mutate(t, func(c *Config) {
		d2 := Device{Name: "vfd", Kind: KindModbusRTU, NoCommTimeoutMs: 1000, ModbusRTU: DefaultModbusRTU("/dev/ttyAMA0"), Tags: []Tag{}}
		d2.ModbusRTU.Units = []int{5}
		d2.ModbusRTU.Baud = 9600
		c.Devices = append(c.Devices, d2)
	})
	if !strings.Contains(got, "devices[vfd].modbus_rtu.port: /dev/ttyAMA0 is also used by devices[meters] with other serial settings (19200 8E1)") {
		t.Fatal(got)
	}
	got = mutate(t, func(c *Config) {
		d2 := Device{Name: "vfd", Kind: KindModbusRTU, NoCommTimeoutMs: 1000, ModbusRTU: DefaultModbusRTU("/dev/ttyAMA0"), Tags: []Tag{}}
		d2.ModbusRTU.Units = []int{5}
		c.Devices = append(c.Devices, d2)
	})
	if got != "" {
		t.Fatal(got)
	}
}

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		area Area
		off  int
		err  bool
	}{
		{"00001", Coils, 0, false},
		{"10001", DiscreteInputs, 0, false},
		{"30001", InputRegisters, 0, false},
		{"40001", HoldingRegisters, 0, false},
		{"40100", HoldingRegisters, 99, false},
		{"49999", HoldingRegisters, 9998, false},
		{"400001", HoldingRegisters, 0, false},
		{"465536", HoldingRegisters, 65535, false},
		{"hr:0", HoldingRegisters, 0, false},
		{"co:17", Coils, 17, false},
		{"di:3", DiscreteInputs, 3, false},
		{"ir:65535", InputRegisters, 65535, false},
		{"4x0001", 0, 0, true},
		{"40000", 0, 0, true},
		{"465537", 0, 0, true},
		{"20001", 0, 0, true},
		{"4001", 0, 0, true},
		{"hr:65536", 0, 0, true},
		{"hr:-1", 0, 0, true},
		{"hr:", 0, 0, true},
		{"HR:1", 0, 0, true},
		{"", 0, 0, true},
	} {
		a, off, err := ParseAddress(tc.in)
		if (err != nil) != tc.err || !tc.err && (a != tc.area || off != tc.off) {
			t.Errorf("ParseAddress(%q) = %v, %d, %v", tc.in, a, off, err)
		}
		if err == nil {
			a2, off2, err := ParseAddress(FormatAddress(a, off))
			if err != nil || a2 != a || off2 != off {
				t.Errorf("FormatAddress round trip of %q: %v", tc.in, err)
			}
		}
	}
}

func TestUnits(t *testing.T) {
	u, ok := LookupUnit("CEL")
	if !ok || u.UnitID != 4408652 || u.DisplayName != "°C" || u.Description != "degree Celsius" {
		t.Errorf("CEL = %+v, %v", u, ok)
	}
	if _, ok := LookupUnit("cel"); ok {
		t.Error("lookup is case-insensitive")
	}
	if _, ok := LookupUnit("ZZZZ"); ok {
		t.Error("ZZZZ found")
	}
	if NumUnits() < 1000 {
		t.Errorf("%d units", NumUnits())
	}
	for i := 1; i < len(units); i++ {
		if units[i-1].Code >= units[i].Code {
			t.Fatalf("table not sorted at %d", i)
		}
	}
}

func TestMarshalIsIndentedJSON(t *testing.T) {
	s := Simulator()
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) || !bytes.Contains(b, []byte("\n  \"base_cycle_ms\": 5,")) {
		t.Errorf("%s", b)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("testdata/nonexistent.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%v", err)
	}
}

func TestNoCommTimeoutLongerThanScan(t *testing.T) {
	got := mutate(t, func(c *Config) { c.Devices[1].NoCommTimeoutMs = 1000 })
	if !strings.Contains(got, "devices[meters].no_comm_timeout_ms: 1000 is not longer than the 1000 ms scan period of devices[meters].tags[Power1]") {
		t.Fatal(got)
	}
}

func FuzzParse(f *testing.F) {
	ex, err := os.ReadFile("testdata/example.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ex)
	s := Simulator()
	b, _ := s.Marshal()
	f.Add(b)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err == nil {
			// A valid configuration survives a round trip.
			b, err := c.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(b); err != nil {
				t.Fatalf("round trip of a valid config fails: %v", err)
			}
		}
	})
}
