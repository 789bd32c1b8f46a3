// Package config is the configuration model of edged: one self-contained
// Go type, Config, decoded from a JSON file, with a validator that reports
// every problem at once, each naming the device, tag and field.
//
// The package imports nothing of plc/ or opcua/, so that the scan engine and
// the (later) OPC UA configuration service share it. It imports board, to
// check pin and serial port names against the board profile.
//
// No hidden defaults: every setting the engine needs is in the file, and
// Validate reports a missing one instead of filling it in. Default and
// Simulator return complete values to start from, and DefaultModbusTCP and
// DefaultModbusRTU complete device settings. Optional features (scaling,
// engineering units, debounce, an order override, a description) are off
// when absent.
//
// See testdata/example.json for a complete file and testdata/tags.csv for a
// tag list in CSV.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Version is the configuration format version this package reads.
const Version = 1

// Config is the whole configuration of a gateway.
type Config struct {
	// Version must be 1.
	Version int `json:"version"`
	// BaseCycleMs is the base cycle in milliseconds, 1..1000. Default()
	// uses 5.
	BaseCycleMs int `json:"base_cycle_ms"`
	// ScanClasses maps a scan class name to its period as a multiple of the
	// base cycle (1 = every cycle), 1..100000.
	ScanClasses map[string]int `json:"scan_classes"`
	// Board is the name of the board profile (package board): "sim",
	// "rpi4", "generic-armv7".
	Board string `json:"board"`
	// Devices are the PLCs and I/O the gateway polls.
	Devices []Device `json:"devices"`
	// History configures the history store; needed when a tag has a
	// history.
	History *History `json:"history,omitempty"`
	// Northbound, when present, publishes the tags to the systems above
	// the shop floor (see Northbound).
	Northbound *Northbound `json:"northbound,omitempty"`
	// OPCUA configures the OPC UA server: the clients it connects to.
	OPCUA *OPCUA `json:"opcua,omitempty"`
}

// Kind is the kind of a device.
type Kind string

// Device kinds.
const (
	KindModbusTCP Kind = "modbus-tcp"
	KindModbusRTU Kind = "modbus-rtu"
	// KindGPIO is the board's own digital I/O; a tag's address is a pin name
	// of the board profile.
	KindGPIO Kind = "gpio"
	// KindSim is an in-process simulated PLC without a protocol; its tags
	// are addressed like Modbus tags (its register map).
	KindSim Kind = "sim"
)

// Device is one PLC or I/O module. Exactly the settings object of its kind
// is present: modbus_tcp for modbus-tcp, modbus_rtu for modbus-rtu, none for
// gpio and sim.
type Device struct {
	// Name is unique among devices: letters, digits, '_' and '-' (it is
	// part of the tags' NodeIds, "s=<device>.<tag>").
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// NoCommTimeoutMs is how long after the device's last successful read
	// its tags turn from Uncertain_LastUsableValue to Bad_NoCommunication,
	// 1..3600000 ms.
	NoCommTimeoutMs int        `json:"no_comm_timeout_ms"`
	ModbusTCP       *ModbusTCP `json:"modbus_tcp,omitempty"`
	ModbusRTU       *ModbusRTU `json:"modbus_rtu,omitempty"`
	// CommAlarm, when present, is the device's communication alarm.
	CommAlarm *CommAlarm `json:"comm_alarm,omitempty"`
	Tags      []Tag      `json:"tags"`
}

// Order is the order of the bytes of a value spread over 16-bit registers,
// written as the letters of a 32-bit value 0xAABBCCDD as they appear on the
// wire. It covers both the byte order inside a register and the word order
// across registers:
//
//	ABCD  big-endian bytes, high word first (Modbus standard)
//	CDAB  big-endian bytes, low word first (word swap)
//	BADC  little-endian bytes, high word first (byte swap)
//	DCBA  little-endian bytes, low word first
type Order string

// Byte and word orders.
const (
	ABCD Order = "ABCD"
	CDAB Order = "CDAB"
	BADC Order = "BADC"
	DCBA Order = "DCBA"
)

// ModbusTCP are the settings of a Modbus TCP device.
type ModbusTCP struct {
	// Address is host:port. Port 0 is allowed only on a loopback host: the
	// built-in simulator chooses its port at run time and cmd/edged puts it
	// in before the driver starts.
	Address string `json:"address"`
	// UnitID is the unit identifier, 0..255.
	UnitID *int `json:"unit_id"`
	// TimeoutMs is the response timeout of one request, 1..60000.
	TimeoutMs int `json:"timeout_ms"`
	// Order is the device's byte and word order; tags may override it.
	Order Order `json:"order"`
	// MaxRegisters is the most registers per read request, 1..125.
	MaxRegisters int `json:"max_registers"`
	// MaxBits is the most coils or discrete inputs per request, 1..2000.
	MaxBits int `json:"max_bits"`
	// MaxGap is the largest gap of unused registers or bits the planner
	// reads across to merge two blocks into one request, 0..MaxRegisters.
	MaxGap *int `json:"max_gap"`
}

// Parity of a serial line.
type Parity string

// Parities.
const (
	ParityNone Parity = "N"
	ParityEven Parity = "E"
	ParityOdd  Parity = "O"
)

// ModbusRTU are the settings of a Modbus RTU bus (RS-485 or RS-232). Several
// units on one bus are polled one after another. Two devices on the same
// port must agree on the serial settings and have different units.
type ModbusRTU struct {
	// Port is a serial port name of the board profile ("RS485-1") or a
	// device path ("/dev/ttyUSB0").
	Port string `json:"port"`
	// Baud is one of 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200.
	Baud     int    `json:"baud"`
	Parity   Parity `json:"parity"`
	DataBits int    `json:"data_bits"` // 7 or 8
	StopBits int    `json:"stop_bits"` // 1 or 2
	// Units are the unit ids (1..247) on the bus. With more than one, each
	// tag names its unit.
	Units        []int `json:"units"`
	TimeoutMs    int   `json:"timeout_ms"` // 1..60000
	Order        Order `json:"order"`
	MaxRegisters int   `json:"max_registers"` // 1..125
	MaxBits      int   `json:"max_bits"`      // 1..2000
	MaxGap       *int  `json:"max_gap"`       // 0..MaxRegisters
}

// Type is the data type of a tag.
type Type string

// Tag types. Registers used: int16/uint16 1, int32/uint32/float32 2,
// int64/uint64/float64 4, string Length. bool is a coil or discrete input,
// or the bit Bit of a register.
const (
	Bool    Type = "bool"
	Int16   Type = "int16"
	UInt16  Type = "uint16"
	Int32   Type = "int32"
	UInt32  Type = "uint32"
	Int64   Type = "int64"
	UInt64  Type = "uint64"
	Float32 Type = "float32"
	Float64 Type = "float64"
	String  Type = "string"
)

// Registers returns the number of 16-bit registers a value of t occupies
// (length for a string), 0 for bool and unknown types.
func (t Type) Registers(length int) int {
	switch t {
	case Int16, UInt16:
		return 1
	case Int32, UInt32, Float32:
		return 2
	case Int64, UInt64, Float64:
		return 4
	case String:
		return length
	}
	return 0
}

// Access is the access of a tag.
type Access string

// Accesses.
const (
	Read      Access = "read"
	ReadWrite Access = "read-write"
)

// Tag is one value of a device.
type Tag struct {
	// Name is unique in its device: letters, digits, '_' and '-'.
	Name string `json:"name"`
	Type Type   `json:"type"`
	// Address of a Modbus or sim tag: the Modicon notation "40001"
	// (5 digits) or "400001" (6 digits) — first digit the area (0 coils,
	// 1 discrete inputs, 3 input registers, 4 holding registers), the rest
	// 1-based — or the 0-based form "<area>:<n>" with area co, di, ir or
	// hr ("hr:0" is "40001"). Of a gpio tag: the board's pin name ("DI1").
	Address string `json:"address"`
	// Unit is the unit id on a Modbus RTU bus with several units; it must
	// be absent otherwise.
	Unit *int `json:"unit,omitempty"`
	// Bit is the bit (0 = least significant .. 15) of a bool in a register.
	Bit *int `json:"bit,omitempty"`
	// Length is the number of registers of a string (2 characters each),
	// 1..125; only for strings.
	Length int `json:"length,omitempty"`
	// Order overrides the device's byte and word order.
	Order Order `json:"order,omitempty"`
	// ScanClass names one of Config.ScanClasses.
	ScanClass string `json:"scan_class"`
	Access    Access `json:"access"`
	// Scaling converts the raw value linearly to engineering units; the
	// tag's value is then a float64 and its EURange is [EUMin, EUMax].
	Scaling *Scaling `json:"scaling,omitempty"`
	// Units is the UNECE code of the engineering unit ("CEL" for °C).
	Units string `json:"units,omitempty"`
	// Debounce, on a gpio input, is the number of consecutive equal samples
	// that accept a new level, 0..MaxDebounce (0 or absent: none).
	Debounce    int    `json:"debounce,omitempty"`
	Description string `json:"description,omitempty"`
	// WriteMin and WriteMax bound the values a client may write to a
	// read-write numeric tag (in engineering units when scaled): a value
	// beyond them is refused with Bad_OutOfRange, never clamped.
	WriteMin *float64 `json:"write_min,omitempty"`
	WriteMax *float64 `json:"write_max,omitempty"`
	// AllowNonFinite lets clients write NaN and ±Inf to a float32 or
	// float64 tag without scaling; without it they are Bad_OutOfRange.
	AllowNonFinite bool `json:"allow_non_finite,omitempty"`
	// History, when present, makes the tag historized (see TagHistory).
	History *TagHistory `json:"history,omitempty"`
	// Alarm, when present, is the tag's alarm (see TagAlarm).
	Alarm *TagAlarm `json:"alarm,omitempty"`
}

// Bounds of the numbers a tag may carry.
const (
	// MaxScale bounds the magnitude of the scaling numbers (and of the
	// write limits): beyond it a float64 loses whole units, and a span of
	// two such numbers could overflow.
	MaxScale = 1e15
	// MaxDebounce bounds Debounce, in samples.
	MaxDebounce = 1000
)

// Scaling maps RawMin..RawMax linearly to EUMin..EUMax; all four are
// required.
type Scaling struct {
	RawMin float64 `json:"raw_min"`
	RawMax float64 `json:"raw_max"`
	EUMin  float64 `json:"eu_min"`
	EUMax  float64 `json:"eu_max"`
}

// Int returns a pointer to v, for the optional integer fields.
func Int(v int) *int { return &v }

// Parse decodes a configuration strictly (a field name that is not exactly
// one of the format's, a key given twice, a scaling without all four
// numbers and trailing data are errors that name the field) and validates
// it. A decoded but
// invalid configuration is returned with the *ValidationError.
func Parse(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config: %w", describeJSONError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("config: data after the top-level object")
	}
	if err := checkKeys(data); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return &c, err
	}
	return &c, nil
}

// Load reads and parses the file at path (see Parse).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Marshal returns the indented JSON of c.
func (c *Config) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// describeJSONError adds the line and column to a syntax or type error.
func describeJSONError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// Device returns the device called name.
func (c *Config) Device(name string) (*Device, bool) {
	for i := range c.Devices {
		if c.Devices[i].Name == name {
			return &c.Devices[i], true
		}
	}
	return nil, false
}

// Default returns a configuration without devices in which every field is
// set: version 1, a 5 ms base cycle, the scan classes fast (5 ms), normal
// (10 ms), slow (100 ms) and second (1 s), and the board "sim".
func Default() Config {
	return Config{
		Version:     Version,
		BaseCycleMs: 5,
		ScanClasses: map[string]int{"fast": 1, "normal": 2, "slow": 20, "second": 200},
		Board:       "sim",
		Devices:     []Device{},
	}
}

// DefaultModbusTCP returns complete Modbus TCP settings for address: unit 1,
// 1000 ms timeout, ABCD, 125 registers and 2000 bits per request, gap 10.
func DefaultModbusTCP(address string) *ModbusTCP {
	return &ModbusTCP{Address: address, UnitID: Int(1), TimeoutMs: 1000, Order: ABCD,
		MaxRegisters: 125, MaxBits: 2000, MaxGap: Int(10)}
}

// DefaultModbusRTU returns complete Modbus RTU settings for port: 19200 8E1,
// unit 1, 200 ms timeout, ABCD, 125 registers and 2000 bits per request,
// gap 10.
func DefaultModbusRTU(port string) *ModbusRTU {
	return &ModbusRTU{Port: port, Baud: 19200, Parity: ParityEven, DataBits: 8, StopBits: 1,
		Units: []int{1}, TimeoutMs: 200, Order: ABCD, MaxRegisters: 125, MaxBits: 2000, MaxGap: Int(10)}
}

// SimulatorAddress is the address of the built-in simulated PLC in
// Simulator(): loopback, port chosen at run time.
const SimulatorAddress = "127.0.0.1:0"

// Simulator returns the configuration edged runs with when it has none: the
// Default scan classes on the sim board, the device "sim" — the built-in
// simulated PLC, a Modbus TCP slave on SimulatorAddress polled by the real
// driver — and the device "io", the sim board's GPIO with DO1..DO4 wired
// back to DI1..DI4.
//
// The sim PLC's register map (holding registers, 0-based):
//
//	hr:0   Counter   uint32   +1 every 5 ms
//	hr:2   Sine      float64
//	hr:6   Ramp      float32
//	hr:8   Status    uint16   a copy of Command, made on the PLC's next tick
//	hr:100 Setpoint  float32  read-write
//	hr:102 Command   uint16   read-write
//	co:0   Toggle    bool     flips every 500 ms
func Simulator() Config {
	c := Default()
	sine := func(t Tag) Tag {
		high := 0.9
		t.Alarm = &TagAlarm{Kind: AlarmLimit, High: &high, Deadband: 0.01, Severity: 500, Message: "sim.Sine above 0.9"}
		return t
	}
	tag := func(name string, t Type, addr, class string, acc Access, desc string) Tag {
		return Tag{Name: name, Type: t, Address: addr, ScanClass: class, Access: acc, Description: desc}
	}
	c.Devices = []Device{
		{
			Name:            "sim",
			Kind:            KindModbusTCP,
			NoCommTimeoutMs: 5000,
			ModbusTCP:       DefaultModbusTCP(SimulatorAddress),
			CommAlarm:       &CommAlarm{Severity: 800, Message: "the simulated PLC does not answer"},
			Tags: []Tag{
				tag("Counter", UInt32, "hr:0", "fast", Read, "+1 every 5 ms"),
				sine(tag("Sine", Float64, "hr:2", "fast", Read, "sine wave, period 10 s, amplitude 1")),
				tag("Ramp", Float32, "hr:6", "fast", Read, "0..100 in 10 s, then again"),
				tag("Toggle", Bool, "co:0", "fast", Read, "flips every 500 ms"),
				tag("Setpoint", Float32, "hr:100", "fast", ReadWrite, "writable"),
				tag("Command", UInt16, "hr:102", "fast", ReadWrite, "copied into Status on the next tick"),
				tag("Status", UInt16, "hr:8", "fast", Read, "a copy of Command"),
			},
		},
		{
			Name:            "io",
			Kind:            KindGPIO,
			NoCommTimeoutMs: 5000,
			Tags:            []Tag{},
		},
	}
	gp := &c.Devices[1]
	for i := 1; i <= 4; i++ {
		gp.Tags = append(gp.Tags, tag(fmt.Sprintf("DI%d", i), Bool, fmt.Sprintf("DI%d", i), "fast", Read, fmt.Sprintf("digital input, wired to DO%d", i)))
	}
	for i := 1; i <= 4; i++ {
		gp.Tags = append(gp.Tags, tag(fmt.Sprintf("DO%d", i), Bool, fmt.Sprintf("DO%d", i), "fast", ReadWrite, fmt.Sprintf("digital output, wired to DI%d", i)))
	}
	c.History = DefaultHistory()
	hist := map[string]*TagHistory{
		"Counter":  {Mode: OnChange},
		"Sine":     {Mode: Periodic, PeriodMs: 100},
		"Ramp":     {Mode: OnDeadband, Deadband: 1, DeadbandType: DeadbandAbsolute},
		"Toggle":   {Mode: OnChange},
		"Setpoint": {Mode: OnChange},
		"Status":   {Mode: OnChange},
	}
	for i := range c.Devices[0].Tags {
		t := &c.Devices[0].Tags[i]
		t.History = hist[t.Name]
	}
	return c
}

// names in error paths: devices[plc1].tags[Temp].address; an empty name is
// shown by index: devices[#2].
func devPath(i int, d *Device) string {
	if d.Name == "" {
		return fmt.Sprintf("devices[#%d]", i)
	}
	return "devices[" + d.Name + "]"
}

func tagPath(dp string, i int, t *Tag) string {
	if t.Name == "" {
		return fmt.Sprintf("%s.tags[#%d]", dp, i)
	}
	return dp + ".tags[" + t.Name + "]"
}

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Path names the field: "devices[plc1].tags[Temp].address".
	Path string
	Msg  string
}

func (p Problem) String() string { return p.Path + ": " + p.Msg }

// ValidationError lists every problem Validate found, in the order of the
// file, the overlapping writes last.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config: %d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}
