package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// pymodbusDevice is testdata/pymodbus_wt.py serving on a loopback port.
type pymodbusDevice struct {
	py     string // the interpreter, with Debian's python3-pymodbus
	port   string
	stderr *lockedBuffer
	stop   func() // kills the server and waits until it has exited
}

// startPymodbus starts testdata/pymodbus_wt.py's server on a free loopback
// port; the test is skipped (fails in CI) when no python3 imports pymodbus.
// The server is killed when the test ends.
//
// The port is taken below the kernel's range of ephemeral ports when it
// leaves room: then no outgoing connection of this machine (where other
// tests dial loopback all the time) can hold it while the test restarts
// the server on it. A port that is taken anyway makes the server exit,
// and another is tried.
func startPymodbus(t *testing.T) *pymodbusDevice {
	t.Helper()
	py := peer.Python(t, "python3-pymodbus, python3-serial", "pymodbus.server", "pymodbus.client")
	var err error
	for range 20 {
		var d *pymodbusDevice
		if d, err = startPymodbusOn(t, py, pymodbusPort(t)); err == nil {
			return d
		}
	}
	t.Fatal(err)
	return nil
}

// pymodbusPort returns a port for the pymodbus server: a random one below
// the ephemeral range when that starts above 20100, else one that the
// kernel picks as free now.
func pymodbusPort(t *testing.T) string {
	t.Helper()
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > 20100 {
				return strconv.Itoa(20000 + rand.IntN(lo-20000))
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// startPymodbusOn starts the server on port, with its initial data, and
// returns once it listens; or the error when it exits first (the port is
// taken).
func startPymodbusOn(t *testing.T, py, port string) (*pymodbusDevice, error) {
	t.Helper()
	d := &pymodbusDevice{py: py, port: port, stderr: new(lockedBuffer)}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, py, "testdata/pymodbus_wt.py", "serve", port)
	cmd.Stderr = d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	d.stop = func() { cancel(); <-exited }
	// Only stops a hung start; no duration is asserted.
	hung := time.AfterFunc(time.Minute, cancel)
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	hung.Stop()
	go func() { cmd.Wait(); close(exited) }() // after the read: Wait closes stdout
	if rerr != nil || line != "ready\n" {
		d.stop()
		return nil, fmt.Errorf("pymodbus server on port %s: %q %v (%v)\n%s", port, line, rerr, cmd.ProcessState, d.stderr.String())
	}
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("pymodbus server's stderr (port %s):\n%s", port, d.stderr.String())
		}
	})
	return d, nil
}

// pymodbusData is what the pymodbus device holds: holding registers and
// coils 0..63.
type pymodbusData struct {
	hr [64]uint16
	co [64]bool
}

// dump reads the device's holding registers and coils with pymodbus's own
// client (testdata/pymodbus_wt.py dump), independently of edged's driver.
func (d *pymodbusDevice) dump(t *testing.T) *pymodbusData {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, d.py, "testdata/pymodbus_wt.py", "dump", d.port).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("pymodbus dump: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("pymodbus dump: %v", err)
	}
	var data pymodbusData
	var hr, co bool
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) != 65 {
			t.Fatalf("pymodbus dump: line %q has %d fields, want 65", line, len(f))
		}
		for i, s := range f[1:] {
			n, err := strconv.ParseUint(s, 10, 16)
			if err != nil {
				t.Fatalf("pymodbus dump: %q: %v", line, err)
			}
			switch f[0] {
			case "hr":
				data.hr[i] = uint16(n)
			case "co":
				data.co[i] = n == 1
			}
		}
		hr = hr || f[0] == "hr"
		co = co || f[0] == "co"
	}
	if !hr || !co {
		t.Fatalf("pymodbus dump: no hr or co line in %q", out)
	}
	return &data
}

// pymodbusConfig is edged's configuration of the pymodbus device on port:
// writable tags of every function code (6 for U16, 16 for I32, F32,
// Level and Name, 5 for Coil, read-modify-write with 3 and 6 for Bit5), a
// read-only tag, and Far beyond the device's 64 registers. The device's
// word order is CDAB (I32 takes it), F32 overrides it with ABCD.
func pymodbusConfig(port string) string {
	return `{
  "version": 1, "base_cycle_ms": 10, "scan_classes": {"fast": 1, "slow": 10}, "board": "sim",
  "devices": [
    {"name": "py", "kind": "modbus-tcp", "no_comm_timeout_ms": 10000,
     "modbus_tcp": {"address": "127.0.0.1:` + port + `", "unit_id": 1, "timeout_ms": 2000, "order": "CDAB",
                    "max_registers": 125, "max_bits": 2000, "max_gap": 10},
     "tags": [
      {"name": "U16", "type": "uint16", "address": "hr:0", "scan_class": "fast", "access": "read-write"},
      {"name": "I32", "type": "int32", "address": "hr:2", "scan_class": "fast", "access": "read-write"},
      {"name": "F32", "type": "float32", "address": "hr:4", "order": "ABCD", "scan_class": "fast", "access": "read-write"},
      {"name": "Bit5", "type": "bool", "address": "hr:8", "bit": 5, "scan_class": "fast", "access": "read-write"},
      {"name": "Level", "type": "uint16", "address": "hr:10", "scan_class": "fast", "access": "read-write",
       "scaling": {"raw_min": 0, "raw_max": 1000, "eu_min": 0, "eu_max": 100}},
      {"name": "Name", "type": "string", "address": "hr:12", "length": 2, "scan_class": "slow", "access": "read-write"},
      {"name": "RO", "type": "uint16", "address": "hr:20", "scan_class": "fast", "access": "read"},
      {"name": "Coil", "type": "bool", "address": "co:0", "scan_class": "fast", "access": "read-write"},
      {"name": "Far", "type": "uint16", "address": "hr:100", "scan_class": "slow", "access": "read-write"}]}
  ]
}`
}

// TestPymodbusWriteThrough writes, with the gopcua client, the tags of a
// Modbus TCP device served by pymodbus (an independent implementation),
// through edged as main runs it: every write that the device accepts is
// Good, pymodbus then holds exactly the expected registers and coils (read
// back with pymodbus's own client), and a Read returns the value; a
// subscription sees the written value; the device's exception 2 is the
// mapped Bad_ConfigurationError; type and range errors and a read-only tag
// are refused without touching the device. Then pymodbus goes away (a
// write gets the driver's error, the tag its last value as
// Uncertain_LastUsableValue) and comes back (writes reach it again).
func TestPymodbusWriteThrough(t *testing.T) {
	dev := startPymodbus(t)
	initial := dev.dump(t)
	if initial.hr[0] != 1111 || initial.hr[8] != 0x0101 || initial.hr[20] != 2020 || !initial.co[1] {
		t.Fatalf("pymodbus's initial data is not testdata/pymodbus_wt.py's: hr %v co %v", initial.hr[:21], initial.co[:2])
	}

	path := writeFile(t, "pymodbus.json", pymodbusConfig(dev.port))
	ctx, cancel, out, errc := startRun(t, "--listen", "127.0.0.1:0", "--config", path, "--report-every", "0")
	m := waitFor(t, out, endpointLine)

	cctx, ccancel := context.WithTimeout(ctx, 2*time.Minute) // only stops a hung test
	defer ccancel()
	c := dialGopcua(t, cctx, m[1])

	node := func(tag string) *gua.NodeID { return gua.MustParseNodeID("ns=2;s=py." + tag) }
	write := func(tag string, v any) gua.StatusCode {
		t.Helper()
		r, err := c.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
			NodeID: node(tag), AttributeID: gua.AttributeIDValue,
			Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(v)},
		}}})
		if err != nil {
			t.Fatalf("write py.%s = %v (%T): %v", tag, v, v, err)
		}
		if len(r.Results) != 1 {
			t.Fatalf("write py.%s: %d results", tag, len(r.Results))
		}
		return r.Results[0]
	}
	read := func(tag string) *gua.DataValue {
		t.Helper()
		r, err := c.Read(cctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: node(tag), AttributeID: gua.AttributeIDValue}}})
		if err != nil {
			t.Fatalf("read py.%s: %v", tag, err)
		}
		return r.Results[0]
	}
	// waitValue waits until a Read of tag returns v with status Good.
	waitValue := func(tag string, v any) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			dv := read(tag)
			if dv.Status == gua.StatusOK && dv.Value != nil && dv.Value.Value() == v {
				return
			}
			if time.Now().After(deadline) {
				var got any
				if dv.Value != nil {
					got = dv.Value.Value()
				}
				t.Fatalf("py.%s reads %v (%T, %v), want %v (%T)", tag, got, got, dv.Status, v, v)
			}
		}
	}
	// Every tag is polled before the writes: the initial values through
	// edged's driver are pymodbus's.
	waitValue("U16", uint16(1111))
	waitValue("Bit5", false)
	waitValue("Level", 50.0)
	waitValue("Name", "ab")
	waitValue("RO", uint16(2020))
	waitValue("Coil", false)
	if st := read("Far").Status; st != gua.StatusBadConfigurationError {
		t.Errorf("py.Far (beyond pymodbus's registers) reads %v, want BadConfigurationError (exception 2)", st)
	}

	// Writes the device accepts: Good, then a Read returns the value.
	for _, w := range []struct {
		tag string
		v   any
	}{
		{"U16", uint16(0xBEEF)},    // fc 6
		{"I32", int32(-123456789)}, // fc 16, CDAB
		{"F32", float32(-2.75)},    // fc 16, ABCD
		{"Bit5", true},             // fc 3 then fc 6, the other bits kept
		{"Level", 42.5},            // fc 6 of the raw 425
		{"Name", "edge"},           // fc 16
		{"Coil", true},             // fc 5
	} {
		if st := write(w.tag, w.v); st != gua.StatusOK {
			t.Fatalf("write py.%s = %v: %v, want Good", w.tag, w.v, st)
		}
		waitValue(w.tag, w.v)
	}
	want := *initial
	want.hr[0] = 0xBEEF
	i32 := uint32(0xF8A432EB) // int32(-123456789)
	if int32(i32) != -123456789 {
		t.Fatal("the test's int32 constant is wrong")
	}
	want.hr[2], want.hr[3] = uint16(i32), uint16(i32>>16) // CDAB: low word first
	f32 := math.Float32bits(-2.75)
	want.hr[4], want.hr[5] = uint16(f32>>16), uint16(f32) // ABCD
	want.hr[8] = 0x0121
	want.hr[10] = 425
	want.hr[12], want.hr[13] = 'e'<<8|'d', 'g'<<8|'e'
	want.co[0] = true
	written := dev.dump(t)
	checkData(t, "after the accepted writes", written, &want)

	// Writes refused before they reach the device.
	for _, w := range []struct {
		tag  string
		v    any
		want gua.StatusCode
	}{
		{"U16", "x", gua.StatusBadTypeMismatch},             // a String to a UInt16
		{"U16", int32(70000), gua.StatusBadTypeMismatch},    // an Int32 to a UInt16: the DataType must match
		{"U16", uint32(7), gua.StatusBadTypeMismatch},       // even a value that would fit
		{"F32", 1.5, gua.StatusBadTypeMismatch},             // a Double to a Float
		{"I32", uint16(1), gua.StatusBadTypeMismatch},       // a UInt16 to an Int32
		{"Coil", uint16(1), gua.StatusBadTypeMismatch},      // a UInt16 to a Boolean
		{"Level", 10000.0, gua.StatusBadOutOfRange},         // raw 100000 does not fit a uint16
		{"Level", -1.0, gua.StatusBadOutOfRange},            // raw -10 does not fit a uint16
		{"Name", "too long", gua.StatusBadOutOfRange},       // 8 characters in 2 registers
		{"RO", uint16(1), gua.StatusBadNotWritable},         // AccessLevel without CurrentWrite
		{"Far", uint16(1), gua.StatusBadConfigurationError}, // the device's exception 2
	} {
		if st := write(w.tag, w.v); st != w.want {
			t.Errorf("write py.%s = %v (%T): %v, want %v", w.tag, w.v, w.v, st, w.want)
		}
	}
	checkData(t, "after the refused writes", dev.dump(t), written)
	// The image still holds the written values.
	for tag, v := range map[string]any{"U16": uint16(0xBEEF), "Level": 42.5, "Name": "edge", "RO": uint16(2020)} {
		waitValue(tag, v)
	}

	// One request with writes that succeed and fail: each has its own
	// result, and the good ones reach the device.
	r, err := c.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{
		{NodeID: node("U16"), AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(uint16(1000))}},
		{NodeID: node("Far"), AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(uint16(1))}},
		{NodeID: node("Coil"), AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(false)}},
		{NodeID: node("RO"), AttributeID: gua.AttributeIDValue, Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(uint16(1))}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := []gua.StatusCode{gua.StatusOK, gua.StatusBadConfigurationError, gua.StatusOK, gua.StatusBadNotWritable}
	if !reflect.DeepEqual(r.Results, wantRes) {
		t.Errorf("mixed write: results %v, want %v", r.Results, wantRes)
	}
	want = *written
	want.hr[0] = 1000
	want.co[0] = false
	checkData(t, "after the mixed write", dev.dump(t), &want)
	waitValue("U16", uint16(1000))
	waitValue("Coil", false)

	// A subscription to U16 sees its current value, then the written one.
	notes := make(chan *opcua.PublishNotificationData, 256)
	sub, err := peer.GopcuaSubscribe(cctx, c, &opcua.SubscriptionParameters{Interval: 10 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	item := opcua.NewMonitoredItemCreateRequestWithDefaults(node("U16"), gua.AttributeIDValue, 1)
	item.RequestedParameters.SamplingInterval = 10
	mr, err := sub.Monitor(cctx, gua.TimestampsToReturnBoth, item)
	if err != nil {
		t.Fatal(err)
	}
	if st := mr.Results[0].StatusCode; st != gua.StatusOK {
		t.Fatalf("CreateMonitoredItems py.U16: %v", st)
	}
	next := func(what string) uint16 {
		t.Helper()
		for {
			select {
			case n := <-notes:
				if n.Error != nil {
					t.Fatalf("notification error: %v", n.Error)
				}
				dcn, ok := n.Value.(*gua.DataChangeNotification)
				if !ok {
					continue
				}
				for _, mi := range dcn.MonitoredItems {
					if mi.ClientHandle != 1 || mi.Value == nil || mi.Value.Value == nil {
						t.Fatalf("data change %+v", mi)
					}
					if mi.Value.Status != gua.StatusOK {
						t.Fatalf("data change of py.U16: status %v", mi.Value.Status)
					}
					v, ok := mi.Value.Value.Value().(uint16)
					if !ok {
						t.Fatalf("data change of py.U16: %v (%T)", mi.Value.Value.Value(), mi.Value.Value.Value())
					}
					return v
				}
			case <-cctx.Done():
				t.Fatalf("no data change of py.U16 (%s)", what)
			}
		}
	}
	if v := next("its current value"); v != 1000 {
		t.Fatalf("first data change of py.U16: %d, want its current 1000", v)
	}
	if st := write("U16", uint16(4242)); st != gua.StatusOK {
		t.Fatalf("write py.U16 = 4242: %v", st)
	}
	if v := next("the written 4242"); v != 4242 {
		t.Errorf("data change of py.U16 after the write: %d, want 4242", v)
	}
	if got := dev.dump(t).hr[0]; got != 4242 {
		t.Errorf("pymodbus holds hr 0 = %d after the write, want 4242", got)
	}
	if err := sub.Cancel(cctx); err != nil {
		t.Errorf("cancel the subscription: %v", err)
	}

	// The device goes away: a write gets the driver's error, not Good, and
	// the tag keeps its last value as Uncertain_LastUsableValue.
	dev.stop()
	switch st := write("U16", uint16(5)); st {
	case gua.StatusBadCommunicationError, gua.StatusBadNoCommunication, gua.StatusBadTimeout:
		t.Logf("write with the device gone: %v", st)
	default:
		t.Errorf("write py.U16 with the device gone: %v, want BadCommunicationError, BadNoCommunication or BadTimeout", st)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		dv := read("U16")
		if dv.Status == gua.StatusUncertainLastUsableValue {
			if v, _ := dv.Value.Value().(uint16); v != 4242 {
				t.Errorf("py.U16 with the device gone: %v, want the last value 4242", dv.Value.Value())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("py.U16 with the device gone: status %v, want UncertainLastUsableValue", dv.Status)
		}
	}
	// It comes back (with its initial data) on the same port: once the
	// driver has reconnected, writes are Good again and reach it.
	if dev, err = startPymodbusOn(t, dev.py, dev.port); err != nil {
		t.Fatal(err)
	}
	for n, deadline := 1, time.Now().Add(time.Minute); ; n++ {
		st := write("U16", uint16(321))
		if st == gua.StatusOK {
			t.Logf("write after the device came back: Good at attempt %d", n)
			break
		}
		if st != gua.StatusBadNoCommunication && st != gua.StatusBadCommunicationError && st != gua.StatusBadTimeout {
			t.Fatalf("write py.U16 while the device comes back: %v", st)
		}
		if time.Now().After(deadline) {
			t.Fatalf("write py.U16 after the device came back: still %v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitValue("U16", uint16(321))
	want = *initial
	want.hr[0] = 321
	checkData(t, "after the device came back", dev.dump(t), &want)
	c.Close(cctx)

	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// checkData reports every register and coil of got that differs from want.
func checkData(t *testing.T, when string, got, want *pymodbusData) {
	t.Helper()
	var diffs []string
	for i := range got.hr {
		if got.hr[i] != want.hr[i] {
			diffs = append(diffs, fmt.Sprintf("hr %d = %#04x, want %#04x", i, got.hr[i], want.hr[i]))
		}
	}
	for i := range got.co {
		if got.co[i] != want.co[i] {
			diffs = append(diffs, fmt.Sprintf("co %d = %v, want %v", i, got.co[i], want.co[i]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("pymodbus's data %s:\n\t%s", when, strings.Join(diffs, "\n\t"))
	}
}
