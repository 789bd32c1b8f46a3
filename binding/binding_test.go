package binding_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/plctest"
)

// rig is an engine over two fake devices, its configuration and a space
// with the binding.
type rig struct {
	cfg  config.Config
	e    *plc.Engine
	plc1 *plctest.Fake
	io   *plctest.Fake
	as   *addrspace.Space
	b    *binding.Binding
	rc   addrspace.ReadContext
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{plc1: &plctest.Fake{}, io: &plctest.Fake{}}
	r.cfg = config.Default()
	tcp := config.DefaultModbusTCP("127.0.0.1:502")
	r.cfg.Devices = []config.Device{
		{Name: "plc1", Kind: config.KindModbusTCP, NoCommTimeoutMs: 3000, ModbusTCP: tcp, Tags: []config.Tag{
			{Name: "Temp", Type: config.Int16, Address: "30001", ScanClass: "normal", Access: config.Read,
				Scaling: &config.Scaling{RawMin: 0, RawMax: 10000, EUMin: -50, EUMax: 150}, Units: "CEL", Description: "tank temperature"},
			{Name: "Counter", Type: config.UInt32, Address: "hr:0", ScanClass: "fast", Access: config.Read},
			{Name: "Setpoint", Type: config.Float32, Address: "hr:10", ScanClass: "slow", Access: config.ReadWrite, Units: "BAR"},
			{Name: "Recipe", Type: config.String, Address: "hr:100", Length: 8, ScanClass: "second", Access: config.ReadWrite},
			{Name: "Level", Type: config.Int16, Address: "hr:20", ScanClass: "fast", Access: config.ReadWrite, Unit: ptr(7)},
		}},
		{Name: "io", Kind: config.KindGPIO, NoCommTimeoutMs: 1000, Tags: []config.Tag{
			{Name: "Lamp", Type: config.Bool, Address: "DO1", ScanClass: "fast", Access: config.ReadWrite},
		}},
	}
	e, err := plc.New(plc.Config{
		Period: 5 * time.Millisecond,
		Devices: []plc.DeviceConfig{
			{Name: "plc1", Device: r.plc1},
			{Name: "io", Device: r.io},
		},
		Tags: []plc.Tag{
			{Device: "plc1", Name: "Temp", Type: plc.Float64, Scan: 10 * time.Millisecond},
			{Device: "plc1", Name: "Counter", Type: plc.UInt32, Address: "hr:0"},
			{Device: "plc1", Name: "Setpoint", Type: plc.Float32, Access: plc.ReadWrite, Scan: 100 * time.Millisecond},
			{Device: "plc1", Name: "Recipe", Type: plc.String, Access: plc.ReadWrite, Scan: time.Second},
			{Device: "plc1", Name: "Level", Type: plc.Int16, Access: plc.ReadWrite, Address: "hr:20"},
			{Device: "io", Name: "Lamp", Type: plc.Bool, Access: plc.ReadWrite},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	r.as = addrspace.New()
	r.as.AddNamespace("urn:edged:gateway") // as the server does: tags are ns=2
	r.b, err = binding.New(r.as, e, &r.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs the engine until the test ends and waits for n images.
func (r *rig) run(t *testing.T, n int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.e.Run(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	r.waitCycles(t, n)
	return stop
}

func (r *rig) waitCycles(t *testing.T, n int) {
	t.Helper()
	start := r.e.Image().Cycle()
	deadline := time.Now().Add(5 * time.Second)
	for r.e.Image().Cycle() < start+uint64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("no %d cycles in 5 s", n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (r *rig) read(nid ua.NodeID, attr ua.AttributeID) ua.DataValue {
	r.rc.Reset()
	var dv ua.DataValue
	r.as.Read(&r.rc, &ua.ReadValueID{NodeID: nid, AttributeID: uint32(attr)}, ua.TimestampsToReturnBoth, &dv)
	return dv
}

func (r *rig) write(nid ua.NodeID, v any) ua.StatusCode {
	return r.as.Write(&ua.WriteValue{NodeID: nid, AttributeID: uint32(ua.AttributeIDValue),
		Value: ua.DataValue{Value: ua.MustVariant(v)}}, nil)
}

func TestNamespaceAndNodeIDs(t *testing.T) {
	r := newRig(t)
	if got := r.b.Namespace(); got != 2 {
		t.Errorf("tags namespace index %d, want 2", got)
	}
	if i, ok := r.as.NamespaceIndex(binding.NamespaceURI); !ok || i != r.b.Namespace() {
		t.Errorf("NamespaceIndex(%s) = %d, %v", binding.NamespaceURI, i, ok)
	}
	if got, want := r.b.NodeID("plc1", "Temp").String(), "ns=2;s=plc1.Temp"; got != want {
		t.Errorf("NodeID = %s, want %s", got, want)
	}
}

// TestTagAttributes checks each tag's attributes against its configuration.
func TestTagAttributes(t *testing.T) {
	r := newRig(t)
	for _, c := range []struct {
		dev, tag string
		dt       uint32
		access   uint8
		sampling float64
	}{
		{"plc1", "Temp", id.Double, 1, 10},
		{"plc1", "Counter", id.UInt32, 1, 5},
		{"plc1", "Setpoint", id.Float, 3, 100},
		{"plc1", "Recipe", id.String, 3, 1000},
		{"plc1", "Level", id.Int16, 3, 5},
		{"io", "Lamp", id.Boolean, 3, 5},
	} {
		n := r.as.Node(r.b.NodeID(c.dev, c.tag))
		if n == nil {
			t.Errorf("%s.%s: no node", c.dev, c.tag)
			continue
		}
		if n.Class != ua.NodeClassVariable || n.DataType != ua.NewNumericNodeID(0, c.dt) || n.ValueRank != -1 ||
			n.AccessLevel != c.access || n.MinimumSamplingInterval != c.sampling || n.BrowseName.Name != c.tag {
			t.Errorf("%s.%s: class %v DataType %v ValueRank %d AccessLevel %d MinimumSamplingInterval %v BrowseName %v",
				c.dev, c.tag, n.Class, n.DataType, n.ValueRank, n.AccessLevel, n.MinimumSamplingInterval, n.BrowseName)
		}
		if dv := r.read(n.ID, ua.AttributeIDUserAccessLevel); !dv.Value.Equal(ua.MustVariant(c.access)) {
			t.Errorf("%s.%s: UserAccessLevel %v, want %d", c.dev, c.tag, dv.Value, c.access)
		}
		refs := r.as.References(n.ID)
		if !hasRef(refs, id.HasComponent, true, ua.NewStringNodeID(2, c.dev)) ||
			!hasRef(refs, id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.BaseDataVariableType)) {
			t.Errorf("%s.%s: references %v", c.dev, c.tag, refs)
		}
	}
	if dv := r.read(r.b.NodeID("plc1", "Temp"), ua.AttributeIDDescription); !dv.Value.Equal(ua.MustVariant(ua.LocalizedText{Locale: "en", Text: "tank temperature"})) {
		t.Errorf("Temp's Description %v", dv.Value)
	}
}

func hasRef(refs []addrspace.Reference, typ uint32, inverse bool, target ua.NodeID) bool {
	for _, r := range refs {
		if r.TypeID == ua.NewNumericNodeID(0, typ) && r.IsInverse == inverse && r.Target.NodeID == target {
			return true
		}
	}
	return false
}

// TestBrowsePath finds a tag from Objects through its device folder.
func TestBrowsePath(t *testing.T) {
	r := newRig(t)
	for _, dev := range []string{"plc1", "io"} {
		f := ua.NewStringNodeID(2, dev)
		refs := r.as.References(f)
		if !hasRef(refs, id.Organizes, true, ua.NewNumericNodeID(0, id.ObjectsFolder)) ||
			!hasRef(refs, id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.FolderType)) {
			t.Errorf("folder %s: references %v", dev, refs)
		}
	}
	bp := ua.BrowsePath{
		StartingNode: ua.NewNumericNodeID(0, id.ObjectsFolder),
		RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 2, Name: "plc1"}},
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 2, Name: "Setpoint"}},
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HasProperty), TargetName: ua.QualifiedName{Name: "EngineeringUnits"}},
		}},
	}
	var res ua.BrowsePathResult
	r.as.TranslateBrowsePath(&bp, &res)
	if res.StatusCode != status.Good || len(res.Targets) != 1 ||
		res.Targets[0].TargetID.NodeID != ua.NewStringNodeID(2, "plc1.Setpoint.EngineeringUnits") {
		t.Errorf("Objects/plc1/Setpoint/EngineeringUnits: %v %+v", res.StatusCode, res.Targets)
	}
}

// TestProperties checks EngineeringUnits (UNECE) and EURange.
func TestProperties(t *testing.T) {
	r := newRig(t)
	eu := r.read(ua.NewStringNodeID(2, "plc1.Temp.EngineeringUnits"), ua.AttributeIDValue)
	eo, ok := eu.Value.Value().(ua.ExtensionObject)
	if eu.Status != status.Good || !ok {
		t.Fatalf("Temp's EngineeringUnits: %v %v", eu.Status, eu.Value)
	}
	info, ok := eo.Body.(*ua.EUInformation)
	cel, _ := config.LookupUnit("CEL")
	if !ok || info.NamespaceURI != "http://www.opcfoundation.org/UA/units/un/cefact" || info.UnitID != cel.UnitID ||
		info.UnitID != 4408652 || info.DisplayName.Text != "°C" || info.Description.Text != cel.Description {
		t.Errorf("Temp's EngineeringUnits %+v", eo.Body)
	}
	rg := r.read(ua.NewStringNodeID(2, "plc1.Temp.EURange"), ua.AttributeIDValue)
	eo, _ = rg.Value.Value().(ua.ExtensionObject)
	if rng, ok := eo.Body.(*ua.Range); !ok || rng.Low != -50 || rng.High != 150 {
		t.Errorf("Temp's EURange %v", rg.Value)
	}
	n := r.as.Node(ua.NewStringNodeID(2, "plc1.Temp.EURange"))
	if n.DataType != ua.NewNumericNodeID(0, id.Range) || n.BrowseName != (ua.QualifiedName{Name: "EURange"}) ||
		!hasRef(r.as.References(n.ID), id.HasProperty, true, r.b.NodeID("plc1", "Temp")) ||
		!hasRef(r.as.References(n.ID), id.HasTypeDefinition, false, ua.NewNumericNodeID(0, id.PropertyType)) {
		t.Errorf("EURange node %+v, references %v", n, r.as.References(n.ID))
	}
	if r.as.Node(ua.NewStringNodeID(2, "plc1.Setpoint.EngineeringUnits")) == nil {
		t.Error("Setpoint has no EngineeringUnits")
	}
	for _, nid := range []string{"plc1.Setpoint.EURange", "plc1.Counter.EngineeringUnits", "plc1.Counter.EURange"} {
		if r.as.Node(ua.NewStringNodeID(2, nid)) != nil {
			t.Errorf("%s exists but was not configured", nid)
		}
	}
	// Address and ScanClass: Counter's Address is the engine's, Temp's
	// (the engine has none) and Level's (with its unit id) their own.
	for nid, want := range map[string]string{
		"plc1.Counter.Address": "hr:0", "plc1.Counter.ScanClass": "fast (5 ms)",
		"plc1.Temp.Address": "30001", "plc1.Temp.ScanClass": "normal (10 ms)",
		"plc1.Level.Address": "hr:20 (unit 7)", "plc1.Level.ScanClass": "fast (5 ms)",
		"io.Lamp.Address": "DO1",
	} {
		dv := r.read(ua.NewStringNodeID(2, nid), ua.AttributeIDValue)
		if dv.Status != status.Good || dv.Value.Value() != want {
			t.Errorf("%s: %v %v, want %q", nid, dv.Status, dv.Value.Value(), want)
		}
	}
	var props []string
	for _, ref := range r.as.References(r.b.NodeID("plc1", "Temp")) {
		if ref.TypeID == ua.NewNumericNodeID(0, id.HasProperty) {
			props = append(props, ref.Target.NodeID.Text)
		}
	}
	if fmt.Sprint(props) != "[plc1.Temp.EngineeringUnits plc1.Temp.EURange plc1.Temp.Address plc1.Temp.ScanClass]" {
		t.Errorf("Temp's properties: %v", props)
	}
}

// TestReadIsImage checks that a Read returns exactly the image's sample.
func TestReadIsImage(t *testing.T) {
	r := newRig(t)
	temp, _ := r.e.Lookup("plc1", "Temp")
	cnt, _ := r.e.Lookup("plc1", "Counter")
	rec, _ := r.e.Lookup("plc1", "Recipe")
	if dv := r.read(r.b.NodeID("plc1", "Counter"), ua.AttributeIDValue); dv.Status != status.BadWaitingForInitialData || !dv.Value.IsNull() {
		t.Errorf("Counter before the first cycle: %v %v", dv.Status, dv.Value)
	}
	r.plc1.Set(temp, plc.Float64Value(21.25))
	r.plc1.Set(cnt, plc.UInt32Value(42))
	r.plc1.Set(rec, plc.StringValue("PUMP-7"))
	r.plc1.SetTagStatus(cnt, status.Good)
	r.run(t, 3)
	// A poll that ends after its cycle's collect timeout (a slow machine,
	// qemu) is merged in a later image: wait for the first samples.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		im := r.e.Image()
		if !im.Sample(temp).Timestamp().IsZero() && !im.Sample(cnt).Timestamp().IsZero() && !im.Sample(rec).Timestamp().IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no sample of Temp, Counter and Recipe in 5 s")
		}
	}
	for _, c := range []struct {
		tag string
		h   plc.Handle
		v   any
	}{{"Temp", temp, 21.25}, {"Counter", cnt, uint32(42)}, {"Recipe", rec, "PUMP-7"}} {
		// The image of the same request as the Read: take it after.
		dv := r.read(r.b.NodeID("plc1", c.tag), ua.AttributeIDValue)
		s := r.e.Image().Sample(c.h)
		if dv.Status != status.Good || !dv.Value.Equal(ua.MustVariant(c.v)) {
			t.Errorf("%s: %v %v, want Good %v", c.tag, dv.Status, dv.Value, c.v)
		}
		if dv.SourceTimestamp.IsZero() || dv.SourceTimestamp.After(s.Timestamp()) {
			t.Errorf("%s: source timestamp %v, image's now %v", c.tag, dv.SourceTimestamp, s.Timestamp())
		}
	}

	// A device that stops answering: Uncertain, the last value, its time.
	r.plc1.SetError(status.BadTimeout)
	r.waitCycles(t, 5)
	// Under emulation the failing poll may be merged cycles later.
	for deadline := time.Now().Add(5 * time.Second); r.e.Image().Sample(cnt).Status != plc.Status(status.UncertainLastUsableValue) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	dv := r.read(r.b.NodeID("plc1", "Counter"), ua.AttributeIDValue)
	s := r.e.Image().Sample(cnt)
	if dv.Status != status.UncertainLastUsableValue || dv.Status != ua.StatusCode(s.Status) ||
		!dv.Value.Equal(ua.MustVariant(uint32(42))) || !dv.SourceTimestamp.Equal(s.Timestamp()) {
		t.Errorf("Counter of a silent device: %v %v %v; image %v %v %v", dv.Status, dv.Value, dv.SourceTimestamp, s.Status, s.Value, s.Timestamp())
	}
	// A Bad tag status: no value.
	r.plc1.SetError(nil)
	r.plc1.SetTagStatus(cnt, plc.Status(0x80DB0000)) // a mapped exception the binding does not know
	// Wait for the image that has it: under emulation a poll may end
	// after its cycle's collect timeout and be merged cycles later.
	for deadline := time.Now().Add(5 * time.Second); r.e.Image().Sample(cnt).Status != 0x80DB0000 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	dv = r.read(r.b.NodeID("plc1", "Counter"), ua.AttributeIDValue)
	if dv.Status != 0x80DB0000 || !dv.Value.IsNull() {
		t.Errorf("Counter with a Bad status: %v %v", dv.Status, dv.Value)
	}
}

// TestReadAllocs asserts that reading a tag, and a Diagnostics variable,
// through the address space allocates nothing.
func TestReadAllocs(t *testing.T) {
	r := newRig(t)
	rec, _ := r.e.Lookup("plc1", "Recipe")
	r.plc1.Set(rec, plc.StringValue("PUMP-7"))
	stop := r.run(t, 3)
	stop() // the engine's goroutines must not count
	// Every request refreshes the Diagnostics cache: a period has passed.
	now := time.Now()
	binding.SetDiagnosticsClock(r.b, func() time.Time { now = now.Add(10 * time.Millisecond); return now })
	for _, nid := range []ua.NodeID{
		r.b.NodeID("plc1", "Counter"), r.b.NodeID("plc1", "Temp"), r.b.NodeID("plc1", "Recipe"),
		r.b.DiagnosticsNodeID("CycleTimeP99"), r.b.DeviceDiagnosticsNodeID("plc1", "State"),
	} {
		rv := ua.ReadValueID{NodeID: nid, AttributeID: uint32(ua.AttributeIDValue)}
		var dv ua.DataValue
		var rc addrspace.ReadContext
		r.as.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv) // warm the context
		if dv.Status.IsBad() {
			t.Errorf("%v: %v", nid, dv.Status)
		}
		if n := testing.AllocsPerRun(100, func() {
			rc.Reset()
			r.as.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv)
		}); n != 0 {
			t.Errorf("reading %v: %v allocations, want 0", nid, n)
		}
	}
}

// TestWrite writes through the sink to the device: each write returns
// once the device has it.
func TestWrite(t *testing.T) {
	r := newRig(t)
	r.run(t, 2)
	sp, _ := r.e.Lookup("plc1", "Setpoint")
	rec, _ := r.e.Lookup("plc1", "Recipe")
	lamp, _ := r.e.Lookup("io", "Lamp")
	for _, c := range []struct {
		dev, tag string
		v        any
		want     ua.StatusCode
	}{
		{"plc1", "Setpoint", float32(21.5), status.Good},
		{"plc1", "Recipe", "MIX-2", status.Good},
		{"io", "Lamp", true, status.Good},
		{"plc1", "Setpoint", 21.5, status.BadTypeMismatch},    // a Double to a Float
		{"plc1", "Level", int32(7), status.BadTypeMismatch},   // an Int32 to an Int16
		{"plc1", "Counter", uint32(1), status.BadNotWritable}, // a read tag
		{"plc1", "Setpoint", []float32{1}, status.BadTypeMismatch},
		{"plc1", "Setpoint", float32(math.NaN()), status.BadOutOfRange}, // never to the PLC
		{"plc1", "Setpoint", float32(math.Inf(1)), status.BadOutOfRange},
	} {
		if got := r.write(r.b.NodeID(c.dev, c.tag), c.v); got != c.want {
			t.Errorf("write %v to %s.%s: %v, want %v", c.v, c.dev, c.tag, got, c.want)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		im := r.e.Image()
		if im.Value(sp).Float32() == 21.5 && im.Value(rec).Text() == "MIX-2" && im.Value(lamp).Bool() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("written values not read back: %v %v %v", im.Value(sp), im.Value(rec), im.Value(lamp))
		}
		time.Sleep(time.Millisecond)
	}
	if dv := r.read(r.b.NodeID("plc1", "Setpoint"), ua.AttributeIDValue); !dv.Value.Equal(ua.MustVariant(float32(21.5))) {
		t.Errorf("Setpoint read back %v", dv.Value)
	}
	w := r.plc1.Written()
	if len(w) != 2 || w[0].Handle != sp || w[1].Handle != rec {
		t.Errorf("plc1 received %+v", w)
	}
	// IndexRange is not supported on tags.
	wv := ua.WriteValue{NodeID: r.b.NodeID("plc1", "Recipe"), AttributeID: uint32(ua.AttributeIDValue), IndexRange: "0:1",
		Value: ua.DataValue{Value: ua.MustVariant("AB")}}
	if st := r.as.Write(&wv, nil); st != status.BadWriteNotSupported {
		t.Errorf("write with IndexRange: %v", st)
	}
}

// TestWriteResults: the device's answer, or Engine.Write's refusal,
// reaches the client.
func TestWriteResults(t *testing.T) {
	r := newRig(t)
	stop := r.run(t, 2)
	// A failing device: its answer is the write's result, and counted.
	r.plc1.SetWriteError(status.BadCommunicationError)
	if st := r.write(r.b.NodeID("plc1", "Setpoint"), float32(1)); st != status.BadCommunicationError {
		t.Errorf("write to a failing device: %v, want BadCommunicationError", st)
	}
	r.plc1.SetWriteError(nil)
	// A device that hangs in a poll never gets to the write: the engine
	// gives up after its WriteTimeout. Meanwhile the address space serves
	// reads: the write waits outside its lock.
	r.io.Hang()
	r.waitCycles(t, 3) // a poll of io has started and hangs
	wv := ua.WriteValue{NodeID: r.b.NodeID("io", "Lamp"), AttributeID: uint32(ua.AttributeIDValue),
		Value: ua.DataValue{Value: ua.MustVariant(true)}}
	st, p := r.as.WriteStart(&wv, nil)
	if st != status.Good || p == nil {
		t.Fatalf("WriteStart to a hung device: %v, %v; want Good and a pending result", st, p)
	}
	if dv := r.read(r.b.NodeID("plc1", "Counter"), ua.AttributeIDValue); dv.Status.IsBad() && dv.Status != status.BadWaitingForInitialData {
		t.Errorf("read while a write waits: %v", dv.Status)
	}
	if st := <-p; st != status.BadTimeout {
		t.Errorf("write to a hung device: %v, want BadTimeout", st)
	}
	r.io.Release()
	deadline := time.Now().Add(5 * time.Second)
	for {
		dv := r.read(r.b.DeviceDiagnosticsNodeID("plc1", "WriteErrors"), ua.AttributeIDValue)
		if n, _ := dv.Value.Uint64(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("WriteErrors %v, want 1", dv.Value)
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	if st := r.write(r.b.NodeID("plc1", "Setpoint"), float32(1)); st != status.BadShutdown {
		t.Errorf("write after Run: %v, want BadShutdown", st)
	}
}

// TestDiagnostics reads the Diagnostics object's variables.
func TestDiagnostics(t *testing.T) {
	r := newRig(t)
	r.run(t, 20)
	time.Sleep(10 * time.Millisecond) // older than a period: refreshed
	num := func(nid ua.NodeID) float64 {
		t.Helper()
		dv := r.read(nid, ua.AttributeIDValue)
		if dv.Status != status.Good {
			t.Errorf("%v: %v", nid, dv.Status)
		}
		switch x := dv.Value.Value().(type) {
		case uint64:
			return float64(x)
		case float64:
			return x
		}
		t.Errorf("%v: %v", nid, dv.Value)
		return math.NaN()
	}
	// The values are the engine's, as fresh as a period.
	var before, after plc.Diagnostics
	r.e.Diagnostics(&before)
	cycles := num(r.b.DiagnosticsNodeID("Cycles"))
	r.e.Diagnostics(&after)
	if cycles < float64(before.Cycles)-2 || cycles > float64(after.Cycles) || cycles < 1 {
		t.Errorf("Cycles %v, engine's %d then %d", cycles, before.Cycles, after.Cycles)
	}
	if p := num(r.b.DiagnosticsNodeID("Period")); p != 5 {
		t.Errorf("Period %v ms, want 5", p)
	}
	for _, name := range []string{"Overruns", "CycleTimeP50", "CycleTimeP99", "CycleTimeMax", "StartJitterP50", "StartJitterP99", "StartJitterMax"} {
		if v := num(r.b.DiagnosticsNodeID(name)); v < 0 || math.IsNaN(v) {
			t.Errorf("%s %v", name, v)
		}
	}
	if num(r.b.DiagnosticsNodeID("CycleTimeMax")) < num(r.b.DiagnosticsNodeID("CycleTimeP50")) {
		t.Error("CycleTimeMax below CycleTimeP50")
	}
	if n := num(r.b.DeviceDiagnosticsNodeID("plc1", "Requests")); n < 1 {
		t.Errorf("plc1 Requests %v", n)
	}
	if n := num(r.b.DeviceDiagnosticsNodeID("io", "Polls")); n < 1 {
		t.Errorf("io Polls %v", n)
	}
	if dv := r.read(r.b.DeviceDiagnosticsNodeID("plc1", "LastError"), ua.AttributeIDValue); dv.Value.Type() != ua.TypeString {
		t.Errorf("LastError %v", dv.Value)
	}
	// Browsable: Objects/Diagnostics/plc1/Requests.
	bp := ua.BrowsePath{
		StartingNode: ua.NewNumericNodeID(0, id.ObjectsFolder),
		RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 3, Name: "Diagnostics"}},
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 3, Name: "plc1"}},
			{ReferenceTypeID: ua.NewNumericNodeID(0, id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: 3, Name: "Requests"}},
		}},
	}
	var res ua.BrowsePathResult
	r.as.TranslateBrowsePath(&bp, &res)
	if res.StatusCode != status.Good || len(res.Targets) != 1 || res.Targets[0].TargetID.NodeID != r.b.DeviceDiagnosticsNodeID("plc1", "Requests") {
		t.Errorf("Objects/Diagnostics/plc1/Requests: %v %+v", res.StatusCode, res.Targets)
	}
}

// TestUnknownTag: a configured tag the engine lacks is an error naming it.
func TestUnknownTag(t *testing.T) {
	r := newRig(t)
	cfg := r.cfg
	cfg.Devices = append([]config.Device(nil), cfg.Devices...)
	cfg.Devices[1].Tags = append(cfg.Devices[1].Tags, config.Tag{Name: "Ghost", Type: config.Bool, Address: "DI1", ScanClass: "fast", Access: config.Read})
	_, err := binding.New(addrspace.New(), r.e, &cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "devices[io].tags[Ghost]") {
		t.Errorf("New with an unknown tag: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestApply: Apply shows a changed tag anew, removes a tag that went and
// leaves the others; a failing Apply leaves what it shows consistent for
// the next.
func TestApply(t *testing.T) {
	r := newRig(t)
	next := r.cfg
	next.Devices = slices.Clone(r.cfg.Devices)
	tags := slices.Clone(next.Devices[0].Tags)
	tags[1].ScanClass = "slow"                       // Counter
	tags[3].Description = "recipe name"              // Recipe
	next.Devices[0].Tags = slices.Delete(tags, 4, 5) // no Level
	if err := r.b.Apply(&next); err != nil {
		t.Fatal(err)
	}
	for nid, want := range map[string]any{
		"plc1.Counter.ScanClass": "slow (100 ms)",
		"plc1.Temp.ScanClass":    "normal (10 ms)",
		"plc1.Counter.Address":   "hr:0",
	} {
		if dv := r.read(ua.NewStringNodeID(2, nid), ua.AttributeIDValue); dv.Value.Value() != want {
			t.Errorf("%s: %v %v, want %v", nid, dv.Status, dv.Value.Value(), want)
		}
	}
	if dv := r.read(r.b.NodeID("plc1", "Recipe"), ua.AttributeIDDescription); dv.Value.Value() != (ua.LocalizedText{Locale: "en", Text: "recipe name"}) {
		t.Errorf("Recipe's Description: %v", dv.Value.Value())
	}
	if r.as.Node(r.b.NodeID("plc1", "Level")) != nil {
		t.Error("plc1.Level is still shown")
	}
	if r.as.Node(r.b.NodeID("io", "Lamp")) == nil {
		t.Error("io.Lamp is gone")
	}
	// Level back: shown again; Counter as before.
	if err := r.b.Apply(&r.cfg); err != nil {
		t.Fatal(err)
	}
	if dv := r.read(ua.NewStringNodeID(2, "plc1.Level.Address"), ua.AttributeIDValue); dv.Value.Value() != "hr:20 (unit 7)" {
		t.Errorf("Level's Address after it came back: %v %v", dv.Status, dv.Value.Value())
	}
	if dv := r.read(ua.NewStringNodeID(2, "plc1.Counter.ScanClass"), ua.AttributeIDValue); dv.Value.Value() != "fast (5 ms)" {
		t.Errorf("Counter's ScanClass after the second Apply: %v", dv.Value.Value())
	}
	// A tag the engine does not have fails the Apply after the tags
	// before it; the next Apply still knows what is shown.
	bad := r.cfg
	bad.Devices = slices.Clone(r.cfg.Devices)
	bad.Devices[0].Tags = append(slices.Clone(r.cfg.Devices[0].Tags[:2]), config.Tag{Name: "Ghost", Type: config.Int16, Address: "hr:30", ScanClass: "fast", Access: config.Read})
	bad.Devices[0].Tags = append(bad.Devices[0].Tags, r.cfg.Devices[0].Tags[2:]...)
	bad.Devices[0].Tags[0].ScanClass = "slow" // Temp changes before the failure
	if err := r.b.Apply(&bad); err == nil || !strings.Contains(err.Error(), "Ghost") {
		t.Fatalf("Apply with a tag the engine lacks: %v", err)
	}
	if err := r.b.Apply(&r.cfg); err != nil {
		t.Fatal(err)
	}
	for nid, want := range map[string]any{"plc1.Temp.ScanClass": "normal (10 ms)", "plc1.Setpoint.ScanClass": "slow (100 ms)"} {
		if dv := r.read(ua.NewStringNodeID(2, nid), ua.AttributeIDValue); dv.Value.Value() != want {
			t.Errorf("after the failed Apply, %s: %v %v, want %v", nid, dv.Status, dv.Value.Value(), want)
		}
	}
	if r.as.Node(r.b.NodeID("plc1", "Ghost")) != nil {
		t.Error("plc1.Ghost is shown")
	}
}
