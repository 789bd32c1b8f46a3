package binding_test

import (
	"testing"
	"time"

	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
)

func folderID(r *e2e, device string) *gua.NodeID {
	return gua.NewStringNodeID(r.b.Namespace(), device)
}

// TestCallWriteCommand calls sim.WriteCommand through gopcua: Good once
// the simulated PLC has the command, which then shows in sim.Command at
// once and in sim.Status after the PLC's next tick (the data change a
// client waits for). Argument errors are those of Part 4.
func TestCallWriteCommand(t *testing.T) {
	r := newE2E(t, 0)
	ctx := e2eCtx(t)
	c := r.connect(t, ctx)
	call := func(method string, in ...any) *gua.CallMethodResult {
		t.Helper()
		req := &gua.CallMethodRequest{ObjectID: folderID(r, "sim"), MethodID: r.nodeID("sim", method)}
		for _, v := range in {
			req.InputArguments = append(req.InputArguments, gua.MustVariant(v))
		}
		res, err := c.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("WriteCommand", uint16(815)); res.StatusCode != gua.StatusOK {
		t.Fatalf("WriteCommand(815): %v", res.StatusCode)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rr, err := c.Read(ctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{
			{NodeID: r.nodeID("sim", "Command"), AttributeID: gua.AttributeIDValue},
			{NodeID: r.nodeID("sim", "Status"), AttributeID: gua.AttributeIDValue},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if rr.Results[0].Value.Value() == uint16(815) && rr.Results[1].Value.Value() == uint16(815) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Command %v, Status %v after WriteCommand(815)", rr.Results[0].Value.Value(), rr.Results[1].Value.Value())
		}
		time.Sleep(5 * time.Millisecond)
	}

	if res := call("WriteCommand"); res.StatusCode != gua.StatusBadArgumentsMissing {
		t.Errorf("WriteCommand(): %v", res.StatusCode)
	}
	if res := call("WriteCommand", uint16(1), uint16(2)); res.StatusCode != gua.StatusBadTooManyArguments {
		t.Errorf("WriteCommand(1, 2): %v", res.StatusCode)
	}
	res := call("WriteCommand", int32(1))
	if res.StatusCode != gua.StatusBadInvalidArgument || len(res.InputArgumentResults) != 1 ||
		res.InputArgumentResults[0] != gua.StatusBadTypeMismatch {
		t.Errorf("WriteCommand(Int32): %v %v", res.StatusCode, res.InputArgumentResults)
	}
	// A method of another device's folder is not sim's.
	other, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: folderID(r, "sim"), MethodID: r.nodeID("io", "Reconnect")})
	if err != nil || other.StatusCode != gua.StatusBadMethodInvalid {
		t.Errorf("io.Reconnect on sim: %v %v", err, other)
	}
	unknown, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: folderID(r, "nope"), MethodID: r.nodeID("sim", "Reconnect")})
	if err != nil || unknown.StatusCode != gua.StatusBadNodeIDUnknown {
		t.Errorf("call on an unknown object: %v %v", err, unknown)
	}
}

// TestCallWriteCommandTimeout: the method waits for the device like a
// Write; the server's WriteTimeout ends the wait with Bad_Timeout.
func TestCallWriteCommandTimeout(t *testing.T) {
	r := newE2E(t, 300*time.Millisecond)
	ctx := e2eCtx(t)
	if err := r.b.AddWriteMethod("hung", "Switch", "Out"); err != nil {
		t.Fatal(err)
	}
	c := r.connect(t, ctx)
	r.hang()
	res, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: folderID(r, "hung"), MethodID: r.nodeID("hung", "Switch"),
		InputArguments: []*gua.Variant{gua.MustVariant(true)}})
	if err != nil || res.StatusCode != gua.StatusBadTimeout {
		t.Errorf("Switch on a hung device: %v %v", err, res)
	}
}

// TestCallReconnect: Reconnect on the simulator's folder drops the
// Modbus connection, which the next poll reopens (the driver's
// Reconnects counts it); GPIO and fake devices cannot reconnect.
func TestCallReconnect(t *testing.T) {
	r := newE2E(t, 0)
	ctx := e2eCtx(t)
	c := r.connect(t, ctx)
	reconnects := func() uint64 {
		var d plc.Diagnostics
		r.e.Diagnostics(&d)
		for _, dd := range d.Devices {
			if dd.Name == "sim" {
				return dd.Driver.Reconnects
			}
		}
		t.Fatal("no device sim")
		return 0
	}
	// Wait for the first connection.
	for deadline := time.Now().Add(30 * time.Second); r.e.Image().Sample(mustLookup(t, r, "sim", "Counter")).Status != status.Good; {
		if time.Now().After(deadline) {
			t.Fatal("sim.Counter not read in 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	before := reconnects()
	res, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: folderID(r, "sim"), MethodID: r.nodeID("sim", "Reconnect")})
	if err != nil || res.StatusCode != gua.StatusOK {
		t.Fatalf("sim.Reconnect: %v %v", err, res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for reconnects() <= before {
		if time.Now().After(deadline) {
			t.Fatalf("Reconnects still %d after sim.Reconnect", before)
		}
		time.Sleep(time.Millisecond)
	}
	for _, dev := range []string{"io", "hung"} {
		res, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: folderID(r, dev), MethodID: r.nodeID(dev, "Reconnect")})
		if err != nil || res.StatusCode != gua.StatusBadNotSupported {
			t.Errorf("%s.Reconnect: %v %v, want BadNotSupported", dev, err, res)
		}
	}
}

func mustLookup(t *testing.T, r *e2e, device, tag string) plc.Handle {
	t.Helper()
	h, ok := r.e.Lookup(device, tag)
	if !ok {
		t.Fatalf("no tag %s.%s", device, tag)
	}
	return h
}
