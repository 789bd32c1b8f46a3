package config

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/edged/edged/board"
)

// Validate checks the configuration as a whole and returns a
// *ValidationError listing every problem, or nil. Each problem names the
// field: devices[plc1].tags[Temp].address: "4x0001" is not a Modbus address.
//
// Besides the range of each field, it checks: unique device names, tag
// names unique per device, scan classes and board pins and serial ports that
// exist, enums, the settings object matching the kind, a type that fits its
// area (a float32 on a coil is an error; a bool on a register needs a bit),
// a length for strings, values that fit in the 65536 registers, units on a
// Modbus RTU bus, two RTU devices on one port with equal serial settings and
// different units, a board pin used by one tag only, and overlapping writes.
//
// Overlapping writes are errors: two read-write tags of the same Modbus
// unit (the same TCP address and unit id, or the same RTU port and unit)
// must not share a coil or a register, except two bools on different bits of
// one holding register (bits of a command word, written with a masked write).
// Two tags writing the same register would fight, and which one wins would
// depend on the order of the writes in a cycle. Read-only tags may overlap
// anything: two views of the same register are legitimate.
func (c *Config) Validate() error {
	v := &validator{}
	v.config(c)
	if len(v.probs) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.probs}
}

type validator struct {
	probs []Problem
	board *board.Profile
	// writes per Modbus unit key, for the overlap check.
	writes map[string][]span
	nspan  int
	// pins used by gpio tags: pin → tag path.
	pins map[string]string
	// rtu buses: resolved port → first device using it.
	buses map[string]rtuBus
}

type span struct {
	area       Area
	start, end int // [start, end)
	bit        int // -1: the whole register or a bit area
	path       string
	seq        int // order in the file
}

type rtuBus struct {
	path  string
	rtu   *ModbusRTU
	units map[int]string
}

func (v *validator) add(path, format string, args ...any) {
	v.probs = append(v.probs, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func (v *validator) name(path, s string) {
	switch {
	case s == "":
		v.add(path, "missing")
	case !validName(s):
		v.add(path, "%q: use letters, digits, '_' and '-' only", s)
	}
}

func (v *validator) intRange(path string, x, lo, hi int, hint string) {
	if x == 0 && lo > 0 {
		v.add(path, "missing%s", hint)
		return
	}
	if x < lo || x > hi {
		v.add(path, "%d is outside %d..%d", x, lo, hi)
	}
}

func (v *validator) config(c *Config) {
	v.writes = map[string][]span{}
	v.pins = map[string]string{}
	v.buses = map[string]rtuBus{}
	if c.Version != Version {
		if c.Version == 0 {
			v.add("version", "missing (this edged reads version %d)", Version)
		} else {
			v.add("version", "%d is not supported (this edged reads version %d)", c.Version, Version)
		}
	}
	v.intRange("base_cycle_ms", c.BaseCycleMs, 1, 1000, " (the usual value is 5)")
	if len(c.ScanClasses) == 0 {
		v.add("scan_classes", "missing (e.g. {\"fast\": 1, \"slow\": 20})")
	}
	for _, n := range sortedKeys(c.ScanClasses) {
		p := "scan_classes[" + n + "]"
		if !validName(n) {
			v.add(p, "%q: use letters, digits, '_' and '-' only", n)
		}
		v.intRange(p, c.ScanClasses[n], 1, 100000, " (a multiple of the base cycle, 1 or more)")
	}
	if c.Board == "" {
		v.add("board", "missing (known: %s)", strings.Join(board.Names(), ", "))
	} else if b, err := board.Lookup(c.Board); err != nil {
		v.add("board", "%q is not a known board (known: %s)", c.Board, strings.Join(board.Names(), ", "))
	} else {
		v.board = &b
	}
	if c.Devices == nil {
		v.add("devices", "missing (an empty list is allowed)")
	}
	seen := map[string]int{}
	for i := range c.Devices {
		d := &c.Devices[i]
		dp := devPath(i, d)
		if d.Name != "" {
			if j, ok := seen[d.Name]; ok {
				v.add(dp+".name", "%q is also the name of devices[#%d]", d.Name, j)
			} else {
				seen[d.Name] = i
			}
		}
		v.device(c, dp, d)
	}
	v.overlaps()
	v.history(c)
	v.northbound(c)
	v.opcua(c)
}

func (v *validator) device(c *Config, dp string, d *Device) {
	v.name(dp+".name", d.Name)
	v.intRange(dp+".no_comm_timeout_ms", d.NoCommTimeoutMs, 1, 3600000, "")
	if d.CommAlarm != nil {
		v.severity(dp+".comm_alarm", d.CommAlarm.Severity, d.CommAlarm.Message)
	}
	unitKey := func(unit int) string { return "" }
	var units []int // rtu
	switch d.Kind {
	case KindModbusTCP:
		if d.ModbusTCP == nil {
			v.add(dp+".modbus_tcp", "missing for kind %q", d.Kind)
		} else {
			v.tcp(dp+".modbus_tcp", d.ModbusTCP)
			if d.ModbusTCP.UnitID != nil {
				k := "tcp " + d.ModbusTCP.Address + " unit " + strconv.Itoa(*d.ModbusTCP.UnitID)
				unitKey = func(int) string { return k }
			}
		}
		if d.ModbusRTU != nil {
			v.add(dp+".modbus_rtu", "not allowed for kind %q", d.Kind)
		}
	case KindModbusRTU:
		if d.ModbusRTU == nil {
			v.add(dp+".modbus_rtu", "missing for kind %q", d.Kind)
		} else {
			port := v.rtu(dp, d.ModbusRTU)
			units = d.ModbusRTU.Units
			if port != "" {
				unitKey = func(u int) string { return "rtu " + port + " unit " + strconv.Itoa(u) }
			}
		}
		if d.ModbusTCP != nil {
			v.add(dp+".modbus_tcp", "not allowed for kind %q", d.Kind)
		}
	case KindGPIO, KindSim:
		if d.ModbusTCP != nil {
			v.add(dp+".modbus_tcp", "not allowed for kind %q", d.Kind)
		}
		if d.ModbusRTU != nil {
			v.add(dp+".modbus_rtu", "not allowed for kind %q", d.Kind)
		}
		if d.Kind == KindSim {
			k := "sim " + d.Name
			unitKey = func(int) string { return k }
		}
	case "":
		v.add(dp+".kind", "missing (modbus-tcp, modbus-rtu, gpio or sim)")
	default:
		v.add(dp+".kind", "%q is not one of modbus-tcp, modbus-rtu, gpio, sim", d.Kind)
	}
	if d.Tags == nil {
		v.add(dp+".tags", "missing (an empty list is allowed)")
	}
	seen := map[string]int{}
	slowest, slowTag := 0, ""
	for i := range d.Tags {
		t := &d.Tags[i]
		tp := tagPath(dp, i, t)
		if m := c.ScanClasses[t.ScanClass]; m > slowest {
			slowest, slowTag = m, tp
		}
		if t.Name != "" {
			if j, ok := seen[t.Name]; ok {
				v.add(tp+".name", "%q is also the name of tags[#%d]", t.Name, j)
			} else {
				seen[t.Name] = i
			}
		}
		v.name(tp+".name", t.Name)
		v.common(c, tp, d, t)
		switch d.Kind {
		case KindGPIO:
			v.gpioTag(tp, t)
		case KindModbusTCP, KindModbusRTU, KindSim:
			v.modbusTag(tp, d, t, units, unitKey)
		}
	}
	if p := slowest * c.BaseCycleMs; d.NoCommTimeoutMs > 0 && p > 0 && d.NoCommTimeoutMs <= p {
		v.add(dp+".no_comm_timeout_ms", "%d is not longer than the %d ms scan period of %s: its tags would turn bad between two reads", d.NoCommTimeoutMs, p, slowTag)
	}
}

func (v *validator) tcp(p string, m *ModbusTCP) {
	if m.Address == "" {
		v.add(p+".address", "missing (host:port, e.g. 192.168.1.10:502)")
	} else if host, port, err := net.SplitHostPort(m.Address); err != nil || host == "" {
		v.add(p+".address", "%q is not host:port", m.Address)
	} else if n, err := strconv.ParseUint(port, 10, 16); err != nil {
		v.add(p+".address", "%q: port %q is not 0..65535", m.Address, port)
	} else if n == 0 && host != "127.0.0.1" && host != "::1" && host != "localhost" {
		v.add(p+".address", "%q: port 0 (chosen at run time) is only for the built-in simulator on loopback", m.Address)
	}
	if m.UnitID == nil {
		v.add(p+".unit_id", "missing (0..255, usually 1 or 255)")
	} else if *m.UnitID < 0 || *m.UnitID > 255 {
		v.add(p+".unit_id", "%d is outside 0..255", *m.UnitID)
	}
	v.intRange(p+".timeout_ms", m.TimeoutMs, 1, 60000, "")
	v.order(p+".order", m.Order, true)
	v.limits(p, m.MaxRegisters, m.MaxBits, m.MaxGap)
}

func (v *validator) limits(p string, regs, bits int, gap *int) {
	v.intRange(p+".max_registers", regs, 1, 125, " (1..125)")
	v.intRange(p+".max_bits", bits, 1, 2000, " (1..2000)")
	if gap == nil {
		v.add(p+".max_gap", "missing (0 reads only contiguous blocks)")
	} else if *gap < 0 || (regs > 0 && *gap > regs) {
		v.add(p+".max_gap", "%d is outside 0..max_registers", *gap)
	}
}

func (v *validator) order(p string, o Order, required bool) {
	switch o {
	case ABCD, CDAB, BADC, DCBA:
	case "":
		if required {
			v.add(p, "missing (ABCD, CDAB, BADC or DCBA)")
		}
	default:
		v.add(p, "%q is not one of ABCD, CDAB, BADC, DCBA", o)
	}
}

var bauds = []int{1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200}

// rtu checks the settings and returns the resolved device path of the
// port, "" if it is bad.
func (v *validator) rtu(dp string, m *ModbusRTU) string {
	p := dp + ".modbus_rtu"
	var dev string
	switch {
	case m.Port == "":
		v.add(p+".port", "missing (a serial port of the board or a /dev path)")
	case strings.HasPrefix(m.Port, "/dev/"):
		dev = m.Port
	case v.board != nil:
		if sp, ok := v.board.Serial[m.Port]; ok {
			dev = sp.Device
		} else {
			known := strings.Join(v.board.SerialNames(), ", ")
			if known == "" {
				known = "none"
			}
			v.add(p+".port", "%q is not a serial port of board %q (known: %s) nor a /dev path", m.Port, v.board.Name, known)
		}
	}
	if m.Baud == 0 {
		v.add(p+".baud", "missing")
	} else if sort.SearchInts(bauds, m.Baud) == len(bauds) || bauds[sort.SearchInts(bauds, m.Baud)] != m.Baud {
		v.add(p+".baud", "%d is not one of %v", m.Baud, bauds)
	}
	switch m.Parity {
	case ParityNone, ParityEven, ParityOdd:
	case "":
		v.add(p+".parity", "missing (N, E or O)")
	default:
		v.add(p+".parity", "%q is not one of N, E, O", m.Parity)
	}
	if m.DataBits != 7 && m.DataBits != 8 {
		if m.DataBits == 0 {
			v.add(p+".data_bits", "missing (7 or 8)")
		} else {
			v.add(p+".data_bits", "%d is not 7 or 8", m.DataBits)
		}
	}
	if m.StopBits != 1 && m.StopBits != 2 {
		if m.StopBits == 0 {
			v.add(p+".stop_bits", "missing (1 or 2)")
		} else {
			v.add(p+".stop_bits", "%d is not 1 or 2", m.StopBits)
		}
	}
	if len(m.Units) == 0 {
		v.add(p+".units", "missing (the unit ids on the bus, 1..247)")
	}
	us := map[int]bool{}
	for i, u := range m.Units {
		if u < 1 || u > 247 {
			v.add(fmt.Sprintf("%s.units[%d]", p, i), "%d is outside 1..247", u)
		}
		if us[u] {
			v.add(fmt.Sprintf("%s.units[%d]", p, i), "unit %d listed twice", u)
		}
		us[u] = true
	}
	v.intRange(p+".timeout_ms", m.TimeoutMs, 1, 60000, "")
	v.order(p+".order", m.Order, true)
	v.limits(p, m.MaxRegisters, m.MaxBits, m.MaxGap)
	if dev == "" {
		return ""
	}
	if b, ok := v.buses[dev]; ok {
		o := b.rtu
		if o.Baud != m.Baud || o.Parity != m.Parity || o.DataBits != m.DataBits || o.StopBits != m.StopBits {
			v.add(p+".port", "%s is also used by %s with other serial settings (%d %d%s%d)", dev, b.path, o.Baud, o.DataBits, o.Parity, o.StopBits)
		}
		for _, u := range m.Units {
			if other, dup := b.units[u]; dup {
				v.add(p+".units", "unit %d on %s is also in %s", u, dev, other)
			}
		}
		for _, u := range m.Units {
			b.units[u] = dp
		}
	} else {
		b := rtuBus{path: dp, rtu: m, units: map[int]string{}}
		for _, u := range m.Units {
			b.units[u] = dp
		}
		v.buses[dev] = b
	}
	return dev
}

var types = []Type{Bool, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64, String}

func knownType(t Type) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

func numeric(t Type) bool { return knownType(t) && t != Bool && t != String }

// common checks the fields that do not depend on the kind.
func (v *validator) common(c *Config, tp string, d *Device, t *Tag) {
	switch {
	case t.Type == "":
		v.add(tp+".type", "missing")
	case !knownType(t.Type):
		v.add(tp+".type", "%q is not one of bool, int16, uint16, int32, uint32, int64, uint64, float32, float64, string", t.Type)
	}
	if t.ScanClass == "" {
		v.add(tp+".scan_class", "missing")
	} else if _, ok := c.ScanClasses[t.ScanClass]; !ok {
		v.add(tp+".scan_class", "%q is not a scan class (known: %s)", t.ScanClass, strings.Join(sortedKeys(c.ScanClasses), ", "))
	}
	switch t.Access {
	case Read, ReadWrite:
	case "":
		v.add(tp+".access", "missing (read or read-write)")
	default:
		v.add(tp+".access", "%q is not read or read-write", t.Access)
	}
	if s := t.Scaling; s != nil {
		if knownType(t.Type) && !numeric(t.Type) {
			v.add(tp+".scaling", "not allowed on a %s", t.Type)
		}
		if s.RawMin == s.RawMax {
			v.add(tp+".scaling", "raw_min equals raw_max (%g)", s.RawMin)
		}
		if !(s.EUMin < s.EUMax) {
			v.add(tp+".scaling", "eu_min (%g) must be below eu_max (%g)", s.EUMin, s.EUMax)
		}
		for _, x := range []float64{s.RawMin, s.RawMax, s.EUMin, s.EUMax} {
			if !(math.Abs(x) <= MaxScale) {
				v.add(tp+".scaling", "%g is not a finite number within ±%g", x, MaxScale)
				break
			}
		}
	}
	if t.Units != "" {
		if _, ok := LookupUnit(t.Units); !ok {
			v.add(tp+".units", "%q is not a UNECE unit code (e.g. CEL for °C, BAR, KWH, P1 for %%)", t.Units)
		}
		if knownType(t.Type) && !numeric(t.Type) {
			v.add(tp+".units", "not allowed on a %s", t.Type)
		}
	}
	if t.Debounce != 0 && d.Kind != KindGPIO {
		v.add(tp+".debounce", "only for gpio inputs")
	}
	v.writeLimits(tp, t)
	v.tagHistory(tp, t)
	v.tagAlarm(tp, t)
}

// writeLimits checks write_min, write_max and allow_non_finite.
func (v *validator) writeLimits(tp string, t *Tag) {
	limits := false
	for _, l := range []struct {
		name string
		x    *float64
	}{{"write_min", t.WriteMin}, {"write_max", t.WriteMax}} {
		if l.x == nil {
			continue
		}
		limits = true
		if !(math.Abs(*l.x) <= MaxScale) {
			v.add(tp+"."+l.name, "%g is not a finite number within ±%g", *l.x, MaxScale)
		}
	}
	if t.WriteMin != nil && t.WriteMax != nil && !(*t.WriteMin <= *t.WriteMax) {
		v.add(tp+".write_min", "%g is above write_max (%g)", *t.WriteMin, *t.WriteMax)
	}
	if limits {
		switch {
		case t.Access != ReadWrite:
			v.add(tp+".write_min", "write limits on a tag that is not read-write")
		case knownType(t.Type) && !numeric(t.Type):
			v.add(tp+".write_min", "write limits on a %s", t.Type)
		}
	}
	if t.AllowNonFinite && ((t.Type != Float32 && t.Type != Float64) || t.Scaling != nil) {
		v.add(tp+".allow_non_finite", "only for float32 and float64 tags without scaling")
	}
}

func (v *validator) gpioTag(tp string, t *Tag) {
	var pin board.GPIOPin
	var ok bool
	switch {
	case t.Address == "":
		v.add(tp+".address", "missing (a pin of the board, e.g. DI1)")
	case v.board != nil:
		pin, ok = v.board.Pin(t.Address)
		if !ok {
			v.add(tp+".address", "%q is not a pin of board %q (known: %s)", t.Address, v.board.Name, strings.Join(v.board.PinNames(), ", "))
		} else if other, dup := v.pins[t.Address]; dup {
			v.add(tp+".address", "pin %s is also used by %s", t.Address, other)
		} else {
			v.pins[t.Address] = tp
		}
	}
	if t.Type != "" && t.Type != Bool {
		v.add(tp+".type", "%q on a GPIO pin: only bool", t.Type)
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{t.Unit != nil, "unit"}, {t.Bit != nil, "bit"}, {t.Length != 0, "length"}, {t.Order != "", "order"}, {t.Scaling != nil, "scaling"}} {
		if f.set {
			v.add(tp+"."+f.name, "not allowed on a GPIO pin")
		}
	}
	if t.Debounce < 0 || t.Debounce > MaxDebounce {
		v.add(tp+".debounce", "%d is outside 0..%d", t.Debounce, MaxDebounce)
	}
	if ok && pin.Dir == board.Input {
		if t.Access == ReadWrite {
			v.add(tp+".access", "read-write on input pin %s", t.Address)
		}
	} else if ok && t.Debounce != 0 {
		v.add(tp+".debounce", "not allowed on output pin %s", t.Address)
	}
}

func (v *validator) modbusTag(tp string, d *Device, t *Tag, units []int, unitKey func(int) string) {
	if t.Address == "" {
		v.add(tp+".address", "missing (e.g. 40001 or hr:0)")
	}
	area, off, err := ParseAddress(t.Address)
	if t.Address != "" && err != nil {
		v.add(tp+".address", "%s", err.Error())
	}
	// unit
	unit := 0
	switch {
	case d.Kind != KindModbusRTU:
		if t.Unit != nil {
			v.add(tp+".unit", "only for tags of a Modbus RTU bus (the unit of a %s device is its own)", d.Kind)
		}
	case t.Unit == nil && len(units) > 1:
		v.add(tp+".unit", "missing (the bus has units %v)", units)
	case t.Unit == nil && len(units) == 1:
		unit = units[0]
	case t.Unit != nil:
		unit = *t.Unit
		found := false
		for _, u := range units {
			found = found || u == unit
		}
		if !found && len(units) > 0 {
			v.add(tp+".unit", "%d is not a unit of the bus %v", unit, units)
		}
	}
	if t.Order != "" {
		v.order(tp+".order", t.Order, false)
	}
	if t.Length != 0 && t.Type != String {
		v.add(tp+".length", "only for strings")
	}
	if t.Type == String && (t.Length < 1 || t.Length > 125) {
		if t.Length == 0 {
			v.add(tp+".length", "missing (a string's number of registers, 1..125)")
		} else {
			v.add(tp+".length", "%d is outside 1..125", t.Length)
		}
	}
	if err != nil || !knownType(t.Type) {
		return
	}
	bit := -1
	n := 1 // registers or bits
	if area.IsBit() {
		if t.Type != Bool {
			v.add(tp+".type", "%s on %s: only bool", t.Type, area)
		}
		if t.Bit != nil {
			v.add(tp+".bit", "not allowed on %s (each address is a bit)", area)
		}
		if t.Order != "" {
			v.add(tp+".order", "not allowed on %s", area)
		}
	} else {
		if t.Type == Bool {
			if t.Bit == nil {
				v.add(tp+".bit", "missing: a bool in %s is a bit of a register (0..15)", area)
			} else if *t.Bit < 0 || *t.Bit > 15 {
				v.add(tp+".bit", "%d is outside 0..15", *t.Bit)
			} else {
				bit = *t.Bit
			}
		} else {
			if t.Bit != nil {
				v.add(tp+".bit", "only for a bool in a register")
			}
			n = t.Type.Registers(t.Length)
			if n < 1 {
				n = 1
			}
		}
		if t.Type == Bool && t.Order != "" {
			v.add(tp+".order", "not allowed on a bit")
		}
	}
	if off+n > 65536 {
		v.add(tp+".address", "%s with %d registers runs past the end of %s", t.Address, n, area)
	}
	if t.Access == ReadWrite {
		if !area.Writable() {
			v.add(tp+".access", "read-write on %s, which are read-only", area)
		} else if k := unitKey(unit); k != "" {
			v.nspan++
			v.writes[k] = append(v.writes[k], span{area: area, start: off, end: off + n, bit: bit, path: tp, seq: v.nspan})
		}
	}
}

func (v *validator) overlaps() {
	for _, k := range sortedKeys(v.writes) {
		s := v.writes[k]
		sort.SliceStable(s, func(i, j int) bool {
			if s[i].area != s[j].area {
				return s[i].area < s[j].area
			}
			return s[i].start < s[j].start
		})
		for i := range s {
			for j := i + 1; j < len(s) && s[j].area == s[i].area && s[j].start < s[i].end; j++ {
				a, b := s[i], s[j]
				if a.bit >= 0 && b.bit >= 0 && a.bit != b.bit {
					continue
				}
				if a.seq > b.seq {
					a, b = b, a // report on the later tag of the file
				}
				v.add(b.path+".address", "writes %s %s, which %s also writes", b.area, FormatAddress(b.area, max(a.start, b.start)), a.path)
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}
