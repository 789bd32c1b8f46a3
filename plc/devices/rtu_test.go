package devices_test

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
)

var ptyName = regexp.MustCompile(`PTY is (/dev/\S+)`)

// ptyPair starts socat with a pair of connected ptys and returns their
// names; the test is skipped without socat.
func ptyPair(t *testing.T) (string, string) {
	t.Helper()
	peer.Command(t, "socat", "socat")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "socat", "-d", "-d", "pty,raw,echo=0", "pty,raw,echo=0")
	errOut, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	var names []string
	sc := bufio.NewScanner(errOut)
	for len(names) < 2 && sc.Scan() {
		if m := ptyName.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) < 2 {
		t.Fatalf("socat gave no pty pair: %v", sc.Err())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return names[0], names[1]
}

// TestPymodbusRTU polls a pymodbus RTU server with two unit ids through a
// socat pty pair: one plc.Device for the bus's device, both units served
// one after another, values decoded, a write read back. The line is 8N1:
// pyserial's reconfiguration of a pty with even parity fails here (EINVAL
// from tcsetattr).
func TestPymodbusRTU(t *testing.T) {
	ours, theirs := ptyPair(t)
	py := peer.Python(t, "python3-pymodbus, python3-serial, python3-serial-asyncio", "pymodbus.server", "serial_asyncio")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, py, "testdata/pymodbus_server.py", "rtu", theirs)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("pymodbus server: %q %v", line, err)
	}

	cfg := config.Default()
	m := config.DefaultModbusRTU(ours)
	m.Parity, m.Units, m.TimeoutMs = config.ParityNone, []int{1, 2}, 1000
	unit := func(u int) *int { return &u }
	tag := func(name string, typ config.Type, addr string, u int) config.Tag {
		return config.Tag{Name: name, Type: typ, Address: addr, Unit: unit(u), ScanClass: "normal", Access: config.Read}
	}
	w := tag("W16", config.UInt16, "hr:28", 1)
	w.Access = config.ReadWrite
	str := tag("Str", config.String, "hr:20", 1)
	str.Length = 4
	f32 := tag("F32", config.Float32, "hr:6", 1)
	f32.Order = config.DCBA
	cfg.Devices = []config.Device{{
		Name: "bus", Kind: config.KindModbusRTU, NoCommTimeoutMs: 10000, ModbusRTU: m,
		Tags: []config.Tag{
			tag("I16", config.Int16, "hr:0", 1), tag("F64", config.Float64, "hr:8", 1), f32, str,
			tag("Co0", config.Bool, "co:0", 1), tag("Di1", config.Bool, "di:1", 1),
			tag("U2", config.UInt16, "hr:0", 2), w,
		},
	}}
	r := start(t, &cfg, devices.Options{})
	if n, _ := devices.Blocks(r.cfg.Devices[0].Device); n != 4 {
		t.Errorf("%d blocks, want 4 (unit 1: hr 0..31, coils, discrete inputs; unit 2: hr 0)", n)
	}
	h := func(n string) plc.Handle { return r.handle(t, "bus", n) }
	im := r.waitGood(t, r.all()...)
	for n, v := range map[string]plc.Value{
		"I16": plc.Int16Value(-1234), "F64": plc.Float64Value(-9876.54321), "F32": plc.Float32Value(123.456),
		"Str": plc.StringValue("edged-gw"), "Co0": plc.BoolValue(true), "Di1": plc.BoolValue(true), "U2": plc.UInt16Value(2222),
	} {
		if got := im.Value(h(n)); !got.Equal(v) {
			t.Errorf("%s = %v, want %v", n, got, v)
		}
	}
	if st := r.write(t, h("W16"), plc.UInt16Value(999)); st != status.Good {
		t.Fatalf("write W16: %v", st)
	}
	r.waitFor(t, "W16 read back", func(im *plc.Image) bool { return im.Value(h("W16")) == plc.UInt16Value(999) })
	var d plc.Diagnostics
	r.Diagnostics(&d)
	if s := d.Devices[0].Driver; s.Requests == 0 || s.State != "connected" {
		t.Errorf("bus stats %+v", s)
	}
}
