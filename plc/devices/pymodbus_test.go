package devices_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"math"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
)

// pymodbus starts testdata/pymodbus_server.py (Debian's python3-pymodbus)
// on a free loopback port and returns its address; the test is skipped
// when no python3 with pymodbus is installed.
func pymodbus(t *testing.T) string {
	t.Helper()
	py := peer.Python(t, "python3-pymodbus, python3-serial", "pymodbus.server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, py, "testdata/pymodbus_server.py", port)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("pymodbus server: %q %v", line, err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("pymodbus server does not listen on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPymodbus polls an independent Modbus server (pymodbus, whose values
// are encoded by Python's struct in each byte and word order) through the
// engine and the adapter: every type, the four orders as per-tag overrides
// and as a device default, strings, bits in a register, coils, discrete
// inputs, input registers, scaling into Float64 and Float32 tags; then
// writes with function codes 5, 6 and 16 and a bit written by
// read-modify-write, checked by raw reads; and an exception on one tag.
func TestPymodbus(t *testing.T) {
	addr := pymodbus(t)
	cfg := config.Default()
	bit := func(n int) *int { return &n }
	type tg = config.Tag
	r := func(name string, typ config.Type, a string, o config.Order) tg {
		return tg{Name: name, Type: typ, Address: a, Order: o, ScanClass: "fast", Access: config.Read}
	}
	rw := func(t tg) tg { t.Access = config.ReadWrite; return t }
	scaled := func(t tg, rlo, rhi, elo, ehi float64) tg {
		t.Scaling = &config.Scaling{RawMin: rlo, RawMax: rhi, EUMin: elo, EUMax: ehi}
		return t
	}
	withBit := func(t tg, b int) tg { t.Bit = bit(b); return t }
	str := tg{Name: "Str", Type: config.String, Address: "hr:20", Length: 4, ScanClass: "slow", Access: config.Read}
	cfg.Devices = []config.Device{
		{
			Name: "py", Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000, ModbusTCP: config.DefaultModbusTCP(addr),
			Tags: []config.Tag{
				r("I16", config.Int16, "40001", ""),
				r("U16", config.UInt16, "hr:1", config.BADC),
				r("I32", config.Int32, "hr:2", config.CDAB),
				r("U32", config.UInt32, "hr:4", config.BADC),
				r("F32", config.Float32, "hr:6", config.DCBA),
				r("F64", config.Float64, "400009", ""),
				r("I64", config.Int64, "hr:12", config.CDAB),
				r("U64", config.UInt64, "hr:16", config.DCBA),
				str,
				withBit(r("Bit3", config.Bool, "hr:24", ""), 3),
				withBit(r("Bit4", config.Bool, "hr:24", ""), 4),
				scaled(r("Pressure", config.UInt16, "hr:25", ""), 0, 27648, 0, 10),
				scaled(r("Ratio", config.Float32, "hr:26", ""), 0, 100, 0, 1),
				scaled(r("Temp", config.Int16, "30001", ""), -1000, 1000, -10, 10),
				r("IR1", config.UInt16, "ir:1", ""),
				r("Co0", config.Bool, "00001", ""), r("Co1", config.Bool, "co:1", ""), r("Co2", config.Bool, "co:2", ""),
				r("Di0", config.Bool, "10001", ""), r("Di1", config.Bool, "di:1", ""),
				r("Near", config.UInt16, "hr:60", ""),
				r("Beyond", config.UInt16, "hr:66", ""),
				rw(r("W16", config.UInt16, "hr:28", "")),
				rw(r("WF32", config.Float32, "hr:30", config.CDAB)),
				rw(withBit(r("WBit4", config.Bool, "hr:32", ""), 4)),
				rw(r("WCoil", config.Bool, "co:10", "")),
			},
		},
		{
			// The same server seen by a device whose default order is
			// CDAB: a tag without override takes it.
			Name: "pyswap", Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000, ModbusTCP: config.DefaultModbusTCP(addr),
			Tags: []config.Tag{r("I32", config.Int32, "hr:2", "")},
		},
	}
	cfg.Devices[1].ModbusTCP.Order = config.CDAB
	run := start(t, &cfg, devices.Options{})
	h := func(n string) plc.Handle { return run.handle(t, "py", n) }
	good := []plc.Handle{}
	for _, n := range []string{"I16", "U16", "I32", "U32", "F32", "F64", "I64", "U64", "Str", "Bit3", "Bit4", "Pressure", "Ratio", "Temp", "IR1", "Co0", "Co1", "Co2", "Di0", "Di1", "Near", "W16", "WF32", "WBit4", "WCoil"} {
		good = append(good, h(n))
	}
	swapped := run.handle(t, "pyswap", "I32")
	im := run.waitGood(t, append(good, swapped)...)
	want := map[string]plc.Value{
		"I16": plc.Int16Value(-1234), "U16": plc.UInt16Value(54321), "I32": plc.Int32Value(-123456789),
		"U32": plc.UInt32Value(3000000000), "F32": plc.Float32Value(123.456), "F64": plc.Float64Value(-9876.54321),
		"I64": plc.Int64Value(-1234567890123), "U64": plc.UInt64Value(12345678901234567890),
		"Str": plc.StringValue("edged-gw"), "Bit3": plc.BoolValue(true), "Bit4": plc.BoolValue(false),
		"Pressure": plc.Float64Value(5), "Ratio": plc.Float32Value(0.5), "Temp": plc.Float64Value(-10),
		"IR1": plc.UInt16Value(7), "Co0": plc.BoolValue(true), "Co1": plc.BoolValue(false), "Co2": plc.BoolValue(true),
		"Di0": plc.BoolValue(false), "Di1": plc.BoolValue(true), "Near": plc.UInt16Value(4242),
		"W16": plc.UInt16Value(0), "WF32": plc.Float32Value(0), "WBit4": plc.BoolValue(false), "WCoil": plc.BoolValue(false),
	}
	for n, v := range want {
		if got := im.Value(h(n)); !got.Equal(v) {
			t.Errorf("%s = %v (%v), want %v (%v)", n, got, got.Type(), v, v.Type())
		}
	}
	// I32 in CDAB read with the device's default CDAB: the same value.
	if got := im.Value(swapped); got != plc.Int32Value(-123456789) {
		t.Errorf("pyswap.I32 = %v", got)
	}
	// hr:66 is beyond pymodbus's 64 registers: exception 2 on that tag only
	// (it shares a block with Near, which stays Good).
	im = run.waitFor(t, "Beyond's exception", func(im *plc.Image) bool { return im.Status(h("Beyond")) == status.BadConfigurationError })
	if st := im.Status(h("Near")); st != status.Good {
		t.Errorf("Near: %v beside the exception", st)
	}

	// Writes: fc 6, 16 (CDAB), a bit by read-modify-write, fc 5.
	for _, w := range []struct {
		name string
		v    plc.Value
	}{{"W16", plc.UInt16Value(0xBEEF)}, {"WF32", plc.Float32Value(-2.75)}, {"WBit4", plc.BoolValue(true)}, {"WCoil", plc.BoolValue(true)}} {
		if st := run.write(t, h(w.name), w.v); st != status.Good {
			t.Fatalf("write %s: %v", w.name, st)
		}
		run.waitFor(t, w.name+" read back", func(im *plc.Image) bool { return im.Value(h(w.name)).Equal(w.v) })
	}
	// Check the registers as pymodbus holds them, with a raw client.
	link := modbus.NewTCP(modbus.TCPConfig{Address: addr})
	defer link.Close()
	c := link.Client(1)
	regs, err := c.Read(t.Context(), modbus.HoldingRegisters, 28, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint16(regs[0:]); got != 0xBEEF {
		t.Errorf("hr:28 = %#x, want 0xbeef", got)
	}
	f := math.Float32bits(-2.75)
	if got := [2]uint16{binary.BigEndian.Uint16(regs[4:]), binary.BigEndian.Uint16(regs[6:])}; got != [2]uint16{uint16(f), uint16(f >> 16)} {
		t.Errorf("hr:30..31 = %#x, want CDAB of %#x", got, f)
	}
	if got := binary.BigEndian.Uint16(regs[8:]); got != 0x0111 {
		t.Errorf("hr:32 = %#x, want 0x0111 (bit 4 set, the others kept)", got)
	}
	bits, err := c.Read(t.Context(), modbus.Coils, 10, 1, nil)
	if err != nil || bits[0]&1 != 1 {
		t.Errorf("co:10 = %v %v, want on", bits, err)
	}
	// A value out of the type's range is refused by the engine; a scaled
	// tag is not writable here (read-only).
	if st := run.Write(h("W16"), plc.Int32Value(70000), nil); st != status.BadOutOfRange {
		t.Errorf("write 70000 to a uint16: %v", st)
	}
	t.Logf("pymodbus at %s: %d tags checked", addr, len(want)+2)
}
