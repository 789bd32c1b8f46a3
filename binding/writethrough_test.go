package binding_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/plctest"
	"github.com/edged/edged/plc/sim"
)

// e2e is the simulator polled through the real Modbus driver, plus a dead
// Modbus device and a fake device that can hang, served by a real OPC UA
// server, for gopcua clients.
type e2e struct {
	url  string
	hung *plctest.Fake
	e    *plc.Engine
	b    *binding.Binding
}

// newE2E starts the rig; the server gives up waiting for a device after
// writeTimeout (0: its default), the engine never before the test ends.
func newE2E(t *testing.T, writeTimeout time.Duration) *e2e {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := sim.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := s.Config()
	for i := range cfg.Devices {
		if d := &cfg.Devices[i]; d.Name == "sim" {
			// Beyond the simulator's banks: every request is answered with
			// exception 2 (illegal data address).
			d.Tags = append(d.Tags, config.Tag{Name: "Beyond", Type: config.UInt16, Address: "hr:5000",
				ScanClass: "slow", Access: config.ReadWrite})
		}
	}
	// Nothing listens on port 1 of loopback.
	cfg.Devices = append(cfg.Devices, config.Device{Name: "dead", Kind: config.KindModbusTCP, NoCommTimeoutMs: 1000,
		ModbusTCP: config.DefaultModbusTCP("127.0.0.1:1"), Tags: []config.Tag{
			{Name: "Setpoint", Type: config.UInt16, Address: "hr:0", ScanClass: "fast", Access: config.ReadWrite},
		}})
	pc, drivers, err := devices.Build(&cfg, devices.Options{GPIO: s.GPIO(), SimAddress: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	r := &e2e{hung: &plctest.Fake{}}
	// A device of the engine that the configuration file cannot describe:
	// it hangs on demand.
	cfg.Devices = append(cfg.Devices, config.Device{Name: "hung", Kind: config.KindGPIO, NoCommTimeoutMs: 1000,
		Tags: []config.Tag{{Name: "Out", Type: config.Bool, Address: "DO1", ScanClass: "fast", Access: config.ReadWrite}}})
	pc.Devices = append(pc.Devices, plc.DeviceConfig{Name: "hung", Device: r.hung})
	pc.Tags = append(pc.Tags, plc.Tag{Device: "hung", Name: "Out", Type: plc.Bool, Access: plc.ReadWrite})
	pc.WriteTimeout = 10 * time.Minute // only a Release ends a write to "hung"
	if r.e, err = plc.New(pc); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.url = "opc.tcp://" + ln.Addr().String()
	srv, err := server.New(server.Config{EndpointURL: r.url, WriteTimeout: writeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if r.b, err = binding.New(srv.AddressSpace(), r.e, &cfg, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.b.AddWriteMethod("sim", "WriteCommand", "Command"); err != nil {
		t.Fatal(err)
	}
	ectx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	go func() { engineDone <- r.e.Run(ectx) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		r.hung.Release()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		stopEngine()
		if err := <-engineDone; err != nil {
			t.Error(err)
		}
		drivers.Close()
	})
	return r
}

func (r *e2e) connect(t *testing.T, ctx context.Context) *opcua.Client {
	t.Helper()
	c, err := opcua.NewClient(r.url, opcua.SecurityPolicy("None"), opcua.SecurityMode(gua.MessageSecurityModeNone),
		opcua.AuthAnonymous(), opcua.AutoReconnect(false), opcua.RequestTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// nodeID is the gopcua NodeId of tag device.tag.
func (r *e2e) nodeID(device, tag string) *gua.NodeID {
	return gua.NewStringNodeID(r.b.Namespace(), device+"."+tag)
}

func writeValue(n *gua.NodeID, v any) *gua.WriteValue {
	return &gua.WriteValue{NodeID: n, AttributeID: gua.AttributeIDValue,
		Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(v)}}
}

func e2eCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestWriteThroughSim writes sim.Setpoint and sim.Command in one request
// through gopcua: both are Good only once the simulated PLC has them, the
// next Read returns them, and sim.Status follows Command.
func TestWriteThroughSim(t *testing.T) {
	r := newE2E(t, 0)
	ctx := e2eCtx(t)
	c := r.connect(t, ctx)
	resp, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{
		writeValue(r.nodeID("sim", "Setpoint"), float32(42.5)),
		writeValue(r.nodeID("sim", "Command"), uint16(4711)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range resp.Results {
		if st != gua.StatusOK {
			t.Errorf("write %d: %v, want Good", i, st)
		}
	}
	// The write returned after the device confirmed it; the read-back of
	// that cycle is in the image at most a cycle later.
	deadline := time.Now().Add(30 * time.Second)
	for {
		rr, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: r.nodeID("sim", "Setpoint"), AttributeID: gua.AttributeIDValue},
			{NodeID: r.nodeID("sim", "Command"), AttributeID: gua.AttributeIDValue},
			{NodeID: r.nodeID("sim", "Status"), AttributeID: gua.AttributeIDValue},
		}})
		if err != nil {
			t.Fatal(err)
		}
		sp, cmd, st := rr.Results[0].Value.Value(), rr.Results[1].Value.Value(), rr.Results[2].Value.Value()
		if sp == float32(42.5) && cmd == uint16(4711) && st == uint16(4711) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Setpoint %v, Command %v, Status %v after the writes", sp, cmd, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWriteThroughErrors: a Modbus exception and a dead device each give
// the device's answer; type and access checks come first.
func TestWriteThroughErrors(t *testing.T) {
	r := newE2E(t, 0)
	ctx := e2eCtx(t)
	c := r.connect(t, ctx)
	// Exception 2, illegal data address, maps to Bad_ConfigurationError.
	if st := write1(t, ctx, c, r.nodeID("sim", "Beyond"), uint16(1)); st != gua.StatusBadConfigurationError {
		t.Errorf("write beyond the simulator's bank: %v, want BadConfigurationError", st)
	}
	// A device that does not answer: the engine's answer.
	switch st := write1(t, ctx, c, r.nodeID("dead", "Setpoint"), uint16(1)); st {
	case gua.StatusBadTimeout, gua.StatusBadCommunicationError, gua.StatusBadNoCommunication:
	default:
		t.Errorf("write to a dead device: %v, want BadTimeout, BadCommunicationError or BadNoCommunication", st)
	}
	if st := write1(t, ctx, c, r.nodeID("sim", "Command"), int32(1)); st != gua.StatusBadTypeMismatch {
		t.Errorf("Int32 to a UInt16 tag: %v", st)
	}
	if st := write1(t, ctx, c, r.nodeID("sim", "Counter"), uint32(1)); st != gua.StatusBadNotWritable {
		t.Errorf("write to a read tag: %v", st)
	}
}

func write1(t *testing.T, ctx context.Context, c *opcua.Client, n *gua.NodeID, v any) gua.StatusCode {
	t.Helper()
	resp, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{writeValue(n, v)}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Results[0]
}

// hang makes the device "hung" hang in a poll that has started.
func (r *e2e) hang() {
	r.hung.Hang()
	start := r.e.Image().Cycle()
	for r.e.Image().Cycle() < start+3 {
		time.Sleep(time.Millisecond)
	}
}

// waitForValue reads device.tag until it has its first value: the
// simulator's first poll over loopback can take more than the few cycles
// hang waits (under emulation, say).
func (r *e2e) waitForValue(t *testing.T, ctx context.Context, c *opcua.Client, device, tag string) {
	t.Helper()
	for {
		rr, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: r.nodeID(device, tag), AttributeID: gua.AttributeIDValue}}})
		if err != nil {
			t.Fatalf("read %s.%s: %v", device, tag, err)
		}
		switch st := rr.Results[0].Status; st {
		case gua.StatusOK:
			return
		case gua.StatusBadWaitingForInitialData:
			time.Sleep(time.Millisecond)
		default:
			t.Fatalf("%s.%s before its first value: %v", device, tag, st)
		}
	}
}

// TestWriteThroughNotBlocking: while a write waits for a hung device
// (which cannot answer before Release), another client reads and browses;
// after Release the write is Good.
func TestWriteThroughNotBlocking(t *testing.T) {
	r := newE2E(t, 0)
	ctx := e2eCtx(t)
	c := r.connect(t, ctx)
	r.waitForValue(t, ctx, c, "sim", "Counter")
	r.hang()
	res := make(chan gua.StatusCode, 1)
	go func() {
		resp, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{writeValue(r.nodeID("hung", "Out"), true)}})
		if err != nil {
			t.Error(err)
			res <- 0
			return
		}
		res <- resp.Results[0]
	}()
	other := r.connect(t, ctx)
	for range 5 {
		rr, err := other.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: r.nodeID("sim", "Counter"), AttributeID: gua.AttributeIDValue}}})
		if err != nil {
			t.Fatalf("read while a write waits: %v", err)
		}
		if rr.Results[0].Status != gua.StatusOK {
			t.Errorf("read while a write waits: %v", rr.Results[0].Status)
		}
		br, err := other.Browse(ctx, &gua.BrowseRequest{NodesToBrowse: []*gua.BrowseDescription{{
			NodeID: gua.NewStringNodeID(r.b.Namespace(), "sim"), BrowseDirection: gua.BrowseDirectionForward,
			IncludeSubtypes: true, ResultMask: uint32(gua.BrowseResultMaskAll)}}})
		if err != nil || br.Results[0].StatusCode != gua.StatusOK || len(br.Results[0].References) == 0 {
			t.Fatalf("browse while a write waits: %v", err)
		}
	}
	select {
	case st := <-res:
		t.Fatalf("the write to the hung device returned %v before Release", st)
	default:
	}
	r.hung.Release()
	if st := <-res; st != gua.StatusOK {
		t.Errorf("write after Release: %v, want Good", st)
	}
}

// TestWriteThroughTimeout: the server stops waiting after its
// WriteTimeout: Bad_Timeout.
func TestWriteThroughTimeout(t *testing.T) {
	r := newE2E(t, 2*time.Second)
	ctx := e2eCtx(t)
	c := r.connect(t, ctx)
	r.hang()
	resp, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{
		writeValue(r.nodeID("hung", "Out"), true),
		writeValue(r.nodeID("sim", "Setpoint"), float32(1)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The write to the simulator, answered in a cycle, is not held up.
	if resp.Results[0] != gua.StatusBadTimeout || resp.Results[1] != gua.StatusOK {
		t.Errorf("results %v, want [BadTimeout Good]", resp.Results)
	}
}
