package main

import (
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
)

// waitFor polls out until re matches and returns the match. The deadline
// only stops a hung test (emulated ARM is slow); no duration is asserted.
func waitFor(t *testing.T, out *lockedBuffer, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no output matching %q; got:\n%s", re, out.String())
	return nil
}

// startRun starts edged's run with the command-line args, as main does,
// and returns its context's cancel, its output and its result. The
// context ends at the latest when the test does.
func startRun(t *testing.T, args ...string) (context.Context, context.CancelFunc, *lockedBuffer, <-chan error) {
	t.Helper()
	// The interop tests talk SecurityPolicy None unless they say
	// otherwise; every run has a data folder of its own.
	args = append([]string{"--allow-insecure", "--anonymous-role", "Operator", "--data-dir", t.TempDir()}, args...)
	cfg, err := parseFlags(args, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seedDataDir(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out := new(lockedBuffer)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, out) }()
	return ctx, cancel, out, errc
}

// seedDataDir puts an application certificate with a fixed test key into
// cfg's data folder, as edged would make it at its first start, so that a
// test run under emulation does not spend seconds making a key.
func seedDataDir(t *testing.T, cfg config) {
	t.Helper()
	st, err := pki.Open(cfg.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	tpl := ownTemplate(cfg, cfg.hostname)
	tpl.Key = testkeys.RSA(2048)
	der, key, err := pki.NewCertificate(tpl)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveOwn(der, key); err != nil {
		t.Fatal(err)
	}
	// The ECC certificates too (quick to make): a client started before
	// edged reads the one of its policy.
	if _, err := ensureECC(st, tpl, io.Discard); err != nil {
		t.Fatal(err)
	}
}

var endpointLine = regexp.MustCompile(`OPC UA endpoint URL (opc\.tcp://(\S+):(\d+)) \(listening on (\S+)\)`)

func TestRun(t *testing.T) {
	ctx, cancel, out, errc := startRun(t, "--listen", "127.0.0.1:0", "--report-every", "50ms")

	m := waitFor(t, out, endpointLine)
	if m[2] != "127.0.0.1" || m[3] == "0" || m[4] != "127.0.0.1:"+m[3] {
		t.Errorf("endpoint line %q: want the bound 127.0.0.1 port, not 0", m[0])
	}
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.\{Counter,Sine,Ramp,Toggle,Setpoint,Command,Status\}`))
	waitFor(t, out, regexp.MustCompile(`scan: cycles=[1-9]\d* overruns=\d+ cycle p50/p99/max=`))

	// An OPC UA client reads the simulator's Counter, live, polled
	// through the Modbus driver.
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	c := dialGopcua(t, cctx, m[1])
	read := func(id string) *gua.DataValue {
		t.Helper()
		r, err := c.Read(cctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: gua.MustParseNodeID(id), AttributeID: gua.AttributeIDValue}},
			TimestampsToReturn: gua.TimestampsToReturnBoth})
		if err != nil {
			t.Fatal(err)
		}
		return r.Results[0]
	}
	counter := func() uint32 {
		t.Helper()
		dv := read("ns=2;s=sim.Counter")
		n, ok := dv.Value.Value().(uint32)
		if !ok {
			t.Fatalf("sim.Counter = %v (%v)", dv.Value.Value(), dv.Status)
		}
		return n
	}
	first := counter()
	for deadline := time.Now().Add(time.Minute); counter() == first; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("sim.Counter does not change")
		}
	}

	// Write sim.Command; the simulated PLC copies it into sim.Status.
	w, err := c.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
		NodeID: gua.MustParseNodeID("ns=2;s=sim.Command"), AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(uint16(4242))},
	}}})
	if err != nil || w.Results[0] != gua.StatusOK {
		t.Fatalf("write sim.Command: %v %v", err, w)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		dv := read("ns=2;s=sim.Status")
		if n, _ := dv.Value.Value().(uint16); n == 4242 && dv.Status == gua.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sim.Status is %v (%v), not the 4242 written to sim.Command", dv.Value.Value(), dv.Status)
		}
	}
	// The method sim.WriteCommand writes sim.Command and returns once the
	// PLC has it; sim.Status follows on the PLC's next tick.
	res, err := c.Call(cctx, &gua.CallMethodRequest{ObjectID: gua.MustParseNodeID("ns=2;s=sim"),
		MethodID: gua.MustParseNodeID("ns=2;s=sim.WriteCommand"), InputArguments: []*gua.Variant{gua.MustVariant(uint16(77))}})
	if err != nil || res.StatusCode != gua.StatusOK {
		t.Fatalf("call sim.WriteCommand: %v %v", err, res)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		dv := read("ns=2;s=sim.Status")
		if n, _ := dv.Value.Value().(uint16); n == 77 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sim.Status is %v after sim.WriteCommand(77)", dv.Value.Value())
		}
	}
	// Writing a read tag is refused.
	w, err = c.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
		NodeID: gua.MustParseNodeID("ns=2;s=sim.Status"), AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(uint16(1))},
	}}})
	if err != nil || w.Results[0] != gua.StatusBadNotWritable {
		t.Errorf("write sim.Status: %v %v, want BadNotWritable", err, w)
	}
	// The simulated GPIO board loops DO1 back to DI1.
	w, err = c.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
		NodeID: gua.MustParseNodeID("ns=2;s=io.DO1"), AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(true)},
	}}})
	if err != nil || w.Results[0] != gua.StatusOK {
		t.Fatalf("write io.DO1: %v %v", err, w)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := read("ns=2;s=io.DI1").Value.Value().(bool); b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("io.DI1 does not follow io.DO1")
		}
	}
	// Diagnostics.
	if n, _ := read("ns=3;s=Diagnostics.Cycles").Value.Value().(uint64); n == 0 {
		t.Error("Diagnostics.Cycles is 0")
	}
	if n, _ := read("ns=3;s=Devices.sim.Requests").Value.Value().(uint64); n == 0 {
		t.Error("Diagnostics of sim: Requests is 0")
	}
	if st, _ := read("ns=3;s=Devices.sim.State").Value.Value().(string); st != "connected" {
		t.Errorf("Diagnostics of sim: State %q, want connected", st)
	}
	c.Close(cctx)

	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.HasSuffix(out.String(), "edged: shut down cleanly\n") {
		t.Errorf("output does not end with the shutdown line:\n%s", out.String())
	}
	// After shutdown the port is free again.
	ln, err := net.Listen("tcp", "127.0.0.1:"+m[3])
	if err != nil {
		t.Errorf("port still bound after shutdown: %v", err)
	} else {
		ln.Close()
	}
}

// TestRunConfigFile runs a configuration file whose devices poll the
// built-in simulator: one of kind sim, one modbus-tcp at 127.0.0.1:0 (unit
// 7 of the same simulator) with a scaled tag.
// TestRunWithoutDevices: a configuration without devices (a gateway to
// be configured later) is served, and edged says so at start.
func TestRunWithoutDevices(t *testing.T) {
	path := writeFile(t, "empty.json", `{"version": 1, "base_cycle_ms": 5, "scan_classes": {"fast": 1}, "board": "sim", "devices": []}`)
	_, cancel, out, errc := startRun(t, "--listen", "127.0.0.1:0", "--config", path, "--report-every", "0")
	waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`the configuration has no devices: nothing is polled`))
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestRunConfigFile(t *testing.T) {
	path := writeFile(t, "sim.json", `{
  "version": 1, "base_cycle_ms": 5, "scan_classes": {"fast": 1, "slow": 20}, "board": "sim",
  "devices": [
    {"name": "line1", "kind": "sim", "no_comm_timeout_ms": 2000, "tags": [
      {"name": "Count", "type": "uint32", "address": "hr:0", "scan_class": "fast", "access": "read"}]},
    {"name": "line2", "kind": "modbus-tcp", "no_comm_timeout_ms": 2000,
     "modbus_tcp": {"address": "127.0.0.1:0", "unit_id": 7, "timeout_ms": 500, "order": "ABCD", "max_registers": 125, "max_bits": 2000, "max_gap": 10},
     "tags": [
      {"name": "Level", "type": "uint16", "address": "hr:200", "scan_class": "slow", "access": "read-write",
       "scaling": {"raw_min": 0, "raw_max": 1000, "eu_min": 0, "eu_max": 100}, "units": "P1"}]}
  ]
}`)
	ctx, cancel, out, errc := startRun(t, "--listen", "127.0.0.1:0", "--config", path, "--report-every", "0")
	m := waitFor(t, out, endpointLine)

	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	c := dialGopcua(t, cctx, m[1])
	read := func(id string) *gua.DataValue {
		t.Helper()
		r, err := c.Read(cctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: gua.MustParseNodeID(id), AttributeID: gua.AttributeIDValue}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Results[0]
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if n, _ := read("ns=2;s=line1.Count").Value.Value().(uint32); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("line1.Count does not count")
		}
	}
	// The scaled tag is a Double in engineering units, written as one.
	w, err := c.Write(cctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
		NodeID: gua.MustParseNodeID("ns=2;s=line2.Level"), AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(42.5)},
	}}})
	if err != nil || w.Results[0] != gua.StatusOK {
		t.Fatalf("write line2.Level: %v %v", err, w)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		dv := read("ns=2;s=line2.Level")
		if f, _ := dv.Value.Value().(float64); f == 42.5 && dv.Status == gua.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("line2.Level is %v (%v), want 42.5", dv.Value.Value(), dv.Status)
		}
	}
	eu := read("ns=2;s=line2.Level.EURange")
	if r, ok := eu.Value.Value().(*gua.ExtensionObject); !ok || r.Value == nil {
		t.Errorf("line2.Level's EURange: %v (%T)", eu.Value.Value(), eu.Value.Value())
	} else if rg, ok := r.Value.(*gua.Range); !ok || rg.Low != 0 || rg.High != 100 {
		t.Errorf("line2.Level's EURange: %#v", r.Value)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// dialGopcua connects a gopcua client to url (security None, anonymous)
// and closes it when the test ends.
func dialGopcua(t *testing.T, ctx context.Context, url string) *opcua.Client {
	t.Helper()
	c, err := opcua.NewClient(url, opcua.SecurityPolicy("None"), opcua.SecurityMode(gua.MessageSecurityModeNone),
		opcua.AuthAnonymous(), opcua.AutoReconnect(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
