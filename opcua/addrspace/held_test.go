package addrspace

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// heldFixture is the fixture with Variables held by "Plant": Ext1 of the
// image, writable through a sinkRecorder, with a property, and RO.
func heldFixture(t *testing.T) (*fixture, *sinkRecorder) {
	t.Helper()
	f := newFixture(t)
	sink := &sinkRecorder{}
	rw := uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeCurrentWrite)
	for _, v := range []*Variable{
		{Name: "H1", Description: &ua.LocalizedText{Locale: "en", Text: "held one"}, DataType: id.Int64, AccessLevel: rw,
			Source: f.sid, Handle: 1, Class: &VariableClass{Sink: sink, MinimumSamplingInterval: 5},
			Properties: []Property{{Name: ua.QualifiedName{NamespaceIndex: f.ns, Name: "Address"}, DataType: id.String, Value: ua.MustVariant("HR 1")}}},
		{Name: "H2", DataType: id.Int64, AccessLevel: 1, Source: f.sid, Handle: 2},
	} {
		if err := f.s.AddVariable(f.id("Plant"), v); err != nil {
			t.Fatal(err)
		}
	}
	return f, sink
}

func readAttr(f *fixture, nodeID ua.NodeID, a ua.AttributeID) ua.DataValue {
	var rc ReadContext
	var dv ua.DataValue
	f.s.Read(&rc, &ua.ReadValueID{NodeID: nodeID, AttributeID: uint32(a)}, ua.TimestampsToReturnBoth, &dv)
	return dv
}

// A held Variable reads as the Variable it stands for, every attribute,
// its Value from the source without allocating.
func TestHeldRead(t *testing.T) {
	f, _ := heldFixture(t)
	h1 := f.id("Plant.H1")
	for _, c := range []struct {
		a    ua.AttributeID
		want any
	}{
		{ua.AttributeIDNodeID, h1},
		{ua.AttributeIDNodeClass, int32(ua.NodeClassVariable)},
		{ua.AttributeIDBrowseName, ua.QualifiedName{NamespaceIndex: f.ns, Name: "H1"}},
		{ua.AttributeIDDisplayName, ua.LocalizedText{Text: "H1"}},
		{ua.AttributeIDDescription, ua.LocalizedText{Locale: "en", Text: "held one"}},
		{ua.AttributeIDValue, int64(11)},
		{ua.AttributeIDDataType, nid(id.Int64)},
		{ua.AttributeIDValueRank, ValueRankScalar},
		{ua.AttributeIDAccessLevel, uint8(3)},
		{ua.AttributeIDUserAccessLevel, uint8(3)},
		{ua.AttributeIDMinimumSamplingInterval, 5.0},
		{ua.AttributeIDHistorizing, false},
		{ua.AttributeIDWriteMask, uint32(0)},
	} {
		dv := readAttr(f, h1, c.a)
		if dv.Status != status.Good || dv.Value.Value() != c.want {
			t.Errorf("attribute %v: %v %v, want %v", c.a, dv.Status, dv.Value.Value(), c.want)
		}
	}
	if dv := readAttr(f, h1, ua.AttributeIDExecutable); dv.Status != status.BadAttributeIDInvalid {
		t.Errorf("Executable: %v", dv.Status)
	}
	if dv := readAttr(f, f.id("Plant.H1.Address"), ua.AttributeIDValue); dv.Status != status.Good || dv.Value.Value() != "HR 1" {
		t.Errorf("property: %v %v", dv.Status, dv.Value)
	}
	for _, bad := range []string{"Plant.H3", "Plant.H1.Nope", "Plant.H1.Address.X", "H1", "Plant.H1."} {
		if dv := readAttr(f, f.id(bad), ua.AttributeIDValue); dv.Status != status.BadNodeIDUnknown {
			t.Errorf("%s: %v", bad, dv.Status)
		}
	}
	// One ReadContext's scratch node, after H1 and its property, is H2's.
	var rc ReadContext
	var dv ua.DataValue
	for _, c := range []struct {
		node ua.NodeID
		a    ua.AttributeID
		want any
	}{
		{h1, ua.AttributeIDDescription, ua.LocalizedText{Locale: "en", Text: "held one"}},
		{f.id("Plant.H2"), ua.AttributeIDDescription, ua.LocalizedText{}},
		{f.id("Plant.H2"), ua.AttributeIDValue, int64(12)},
		{f.id("Plant.H1.Address"), ua.AttributeIDValueRank, ValueRankScalar},
		{f.id("Plant.H2"), ua.AttributeIDAccessLevel, uint8(1)},
		{f.id("Plant.H2"), ua.AttributeIDMinimumSamplingInterval, 0.0},
		{f.id("Plant.H2"), ua.AttributeIDBrowseName, ua.QualifiedName{NamespaceIndex: f.ns, Name: "H2"}},
	} {
		f.s.Read(&rc, &ua.ReadValueID{NodeID: c.node, AttributeID: uint32(c.a)}, ua.TimestampsToReturnBoth, &dv)
		if dv.Status != status.Good || dv.Value.Value() != c.want {
			t.Errorf("in turn, %v %v: %v %v, want %v", c.node, c.a, dv.Status, dv.Value.Value(), c.want)
		}
	}
	for _, nodeID := range []ua.NodeID{h1, f.id("Plant.H1.Address")} {
		rv := ua.ReadValueID{NodeID: nodeID, AttributeID: uint32(ua.AttributeIDValue)}
		if a := testing.AllocsPerRun(100, func() {
			rc.Reset()
			f.s.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv)
		}); a != 0 {
			t.Errorf("Read of %v: %v allocations", nodeID, a)
		}
	}
}

// The holder lists its held Variables after its references, through
// continuation points; a held Variable has its references and properties.
func TestHeldBrowse(t *testing.T) {
	f, _ := heldFixture(t)
	var res ua.BrowseResult
	var cur BrowseCursor
	all := ua.BrowseDescription{NodeID: f.id("Plant"), BrowseDirection: ua.BrowseDirectionForward,
		ReferenceTypeID: nid(id.HasComponent), ResultMask: 63}
	f.s.Browse(&all, 0, &res, &cur)
	n := len(res.References)
	if n < 3 {
		t.Fatalf("Browse: %v %d references", res.StatusCode, n)
	}
	last := res.References[n-1]
	if last.NodeID.NodeID != f.id("Plant.H2") || res.References[n-2].NodeID.NodeID != f.id("Plant.H1") ||
		last.ReferenceTypeID != nid(id.HasComponent) || !last.IsForward || last.NodeClass != ua.NodeClassVariable ||
		last.BrowseName != (ua.QualifiedName{NamespaceIndex: f.ns, Name: "H2"}) || last.DisplayName.Text != "H2" ||
		last.TypeDefinition.NodeID != nid(id.BaseDataVariableType) {
		t.Errorf("Browse: last %+v", last)
	}
	// Page by one: the same references in the same order.
	var paged []ua.NodeID
	f.s.Browse(&all, 1, &res, &cur)
	for {
		for _, r := range res.References {
			paged = append(paged, r.NodeID.NodeID)
		}
		if !cur.More() {
			break
		}
		f.s.BrowseNext(&cur, 1, &res)
	}
	if len(paged) != n || paged[n-1] != f.id("Plant.H2") {
		t.Errorf("paged: %v", paged)
	}
	// Objects only: no held Variable.
	f.s.Browse(&ua.BrowseDescription{NodeID: f.id("Plant"), BrowseDirection: ua.BrowseDirectionForward, NodeClassMask: uint32(ua.NodeClassObject)}, 0, &res, &cur)
	for _, r := range res.References {
		if r.NodeClass != ua.NodeClassObject && r.NodeClass != 0 {
			t.Errorf("class mask Object: %+v", r)
		}
	}
	// The held Variable: inverse HasComponent, HasTypeDefinition, HasProperty.
	f.s.Browse(&ua.BrowseDescription{NodeID: f.id("Plant.H1"), BrowseDirection: ua.BrowseDirectionBoth, ResultMask: 63}, 0, &res, &cur)
	got := map[ua.NodeID]bool{}
	for _, r := range res.References {
		got[r.NodeID.NodeID] = r.IsForward
	}
	if fw, ok := got[f.id("Plant")]; !ok || fw || !got[nid(id.BaseDataVariableType)] || !got[f.id("Plant.H1.Address")] || len(got) != 3 {
		t.Errorf("Browse of H1: %+v", res.References)
	}
	// The property's inverse HasProperty leads back to H1.
	f.s.Browse(&ua.BrowseDescription{NodeID: f.id("Plant.H1.Address"), BrowseDirection: ua.BrowseDirectionInverse, ResultMask: 63}, 0, &res, &cur)
	if len(res.References) != 1 || res.References[0].NodeID.NodeID != f.id("Plant.H1") {
		t.Errorf("Browse of the property: %+v", res.References)
	}
	// A change of the holder's Variables ends a cursor.
	f.s.Browse(&all, 1, &res, &cur)
	if err := f.s.RemoveNode(f.id("Plant.H2")); err != nil {
		t.Fatal(err)
	}
	if f.s.BrowseNext(&cur, 1, &res); res.StatusCode != status.BadContinuationPointInvalid {
		t.Errorf("BrowseNext after a removal: %v", res.StatusCode)
	}
	refs := f.s.References(f.id("Plant"))
	if r := refs[len(refs)-1]; r.Target.NodeID != f.id("Plant.H1") || r.TypeID != nid(id.HasComponent) || r.IsInverse {
		t.Errorf("References: last %+v", r)
	}
}

// Paths reach held Variables and their properties, and lead back.
func TestHeldTranslate(t *testing.T) {
	f, _ := heldFixture(t)
	qn := func(s string) ua.QualifiedName { return ua.QualifiedName{NamespaceIndex: f.ns, Name: s} }
	for _, c := range []struct {
		start ua.NodeID
		elems []ua.RelativePathElement
		want  ua.NodeID
	}{
		{nid(id.ObjectsFolder), []ua.RelativePathElement{{ReferenceTypeID: nid(id.Organizes), TargetName: qn("Plant")}, {TargetName: qn("H1")}}, f.id("Plant.H1")},
		{f.id("Plant"), []ua.RelativePathElement{{ReferenceTypeID: nid(id.HierarchicalReferences), IncludeSubtypes: true, TargetName: qn("H2")}}, f.id("Plant.H2")},
		{f.id("Plant"), []ua.RelativePathElement{{ReferenceTypeID: nid(id.HasComponent), TargetName: qn("H1")}, {ReferenceTypeID: nid(id.HasProperty), TargetName: qn("Address")}}, f.id("Plant.H1.Address")},
		{f.id("Plant.H1"), []ua.RelativePathElement{{ReferenceTypeID: nid(id.HasComponent), IsInverse: true, TargetName: qn("Plant")}}, f.id("Plant")},
	} {
		var res ua.BrowsePathResult
		f.s.TranslateBrowsePath(&ua.BrowsePath{StartingNode: c.start, RelativePath: ua.RelativePath{Elements: c.elems}}, &res)
		if res.StatusCode != status.Good || len(res.Targets) != 1 || res.Targets[0].TargetID.NodeID != c.want {
			t.Errorf("%v %v: %v %+v, want %v", c.start, c.elems, res.StatusCode, res.Targets, c.want)
		}
	}
	var res ua.BrowsePathResult
	f.s.TranslateBrowsePath(&ua.BrowsePath{StartingNode: f.id("Plant"), RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
		{ReferenceTypeID: nid(id.HasProperty), TargetName: qn("H1")}}}}, &res)
	if res.StatusCode != status.BadNoMatch {
		t.Errorf("HasProperty to a held Variable: %v %+v", res.StatusCode, res.Targets)
	}
}

// A Write of a held Variable's Value goes to its sink with its handle,
// without allocating; its other attributes are not writable.
func TestHeldWrite(t *testing.T) {
	f, sink := heldFixture(t)
	wv := ua.WriteValue{NodeID: f.id("Plant.H1"), AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant(int64(42))}}
	if st := f.s.Write(&wv, nil); st != status.Good || sink.h != 1 || sink.got.Value() != int64(42) {
		t.Fatalf("Write: %v, sink %d %v", st, sink.h, sink.got)
	}
	if a := testing.AllocsPerRun(100, func() { f.s.Write(&wv, nil) }); a != 0 {
		t.Errorf("Write: %v allocations", a)
	}
	wv.Value.Value = ua.MustVariant("text")
	if st := f.s.Write(&wv, nil); st != status.BadTypeMismatch {
		t.Errorf("Write of a String: %v", st)
	}
	if st := f.s.Write(&ua.WriteValue{NodeID: f.id("Plant.H2"), AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant(int64(1))}}, nil); st != status.BadNotWritable {
		t.Errorf("Write of read-only H2: %v", st)
	}
	if st := f.s.Write(&ua.WriteValue{NodeID: f.id("Plant.H1"), AttributeID: uint32(ua.AttributeIDDisplayName), Value: ua.DataValue{Value: ua.MustVariant(ua.LocalizedText{Text: "x"})}}, nil); st != status.BadNotWritable {
		t.Errorf("Write of DisplayName: %v", st)
	}
	if st := f.s.Write(&ua.WriteValue{NodeID: f.id("Plant.H1.Address"), AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant("x")}}, nil); st != status.BadNotWritable {
		t.Errorf("Write of the property: %v", st)
	}
}

// AddVariable checks what it adds; names are one namespace with the
// stored nodes and properties; removal frees them.
func TestHeldAddRemove(t *testing.T) {
	f, _ := heldFixture(t)
	ok := func() *Variable { return &Variable{Name: "N", DataType: id.Int64, AccessLevel: 1, Source: f.sid} }
	for _, c := range []struct {
		holder ua.NodeID
		v      *Variable
		want   error
	}{
		{f.id("Nope"), ok(), ErrUnknownNode},
		{nid(id.ObjectsFolder), ok(), ErrInvalidNode},
		{f.id("Plant.H1"), ok(), ErrUnknownNode},
		{f.id("Plant"), &Variable{Name: "H1", DataType: id.Int64, Source: f.sid}, ErrNodeExists},
		{f.id("Plant"), &Variable{Name: "a.b", DataType: id.Int64, Source: f.sid}, ErrInvalidNode},
		{f.id("Plant"), &Variable{DataType: id.Int64, Source: f.sid}, ErrInvalidNode},
		{f.id("Plant"), &Variable{Name: "N", DataType: id.ObjectsFolder, Source: f.sid}, ErrInvalidNode},
		{f.id("Plant"), &Variable{Name: "N", DataType: id.Int64}, ErrInvalidNode},
		{f.id("Plant"), &Variable{Name: "N", DataType: id.Int64, Source: 99}, ErrInvalidNode},
	} {
		if err := f.s.AddVariable(c.holder, c.v); !errors.Is(err, c.want) {
			t.Errorf("AddVariable(%v, %q): %v, want %v", c.holder, c.v.Name, err, c.want)
		}
	}
	if err := f.s.AddNode(&Node{ID: f.id("Plant.H1"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "x"}}); !errors.Is(err, ErrNodeExists) {
		t.Errorf("AddNode over a held Variable: %v", err)
	}
	if err := f.s.AddNode(&Node{ID: f.id("Plant.H1.Address"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "x"}}); !errors.Is(err, ErrNodeExists) {
		t.Errorf("AddNode over a held Variable's property: %v", err)
	}
	if err := f.s.SetValue(f.id("Plant.H1"), ua.MustVariant(int64(1))); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("SetValue of a held Variable: %v", err)
	}
	if f.s.Node(f.id("Plant.H1")) == nil || f.s.Node(f.id("Plant.H1")).Source != f.sid {
		t.Error("Node of a held Variable")
	}
	if err := f.s.RemoveNode(f.id("Plant.H1")); err != nil {
		t.Fatal(err)
	}
	if dv := readAttr(f, f.id("Plant.H1"), ua.AttributeIDValue); dv.Status != status.BadNodeIDUnknown {
		t.Errorf("Read after RemoveNode: %v", dv.Status)
	}
	if dv := readAttr(f, f.id("Plant.H1.Address"), ua.AttributeIDValue); dv.Status != status.BadNodeIDUnknown {
		t.Errorf("Read of the property after RemoveNode: %v", dv.Status)
	}
	if err := f.s.AddVariable(f.id("Plant"), &Variable{Name: "H1", DataType: id.Int64, AccessLevel: 1, Source: f.sid, Handle: 0}); err != nil {
		t.Fatalf("AddVariable after RemoveNode: %v", err)
	}
	if dv := readAttr(f, f.id("Plant.H1"), ua.AttributeIDValue); dv.Value.Value() != int64(10) {
		t.Errorf("Read of the new H1: %v %v", dv.Status, dv.Value)
	}
	before := f.s.Len()
	if err := f.s.RemoveNode(f.id("Plant")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Plant.H1", "Plant.H2"} {
		if dv := readAttr(f, f.id(name), ua.AttributeIDValue); dv.Status != status.BadNodeIDUnknown {
			t.Errorf("Read of %s after removing its holder: %v", name, dv.Status)
		}
	}
	if f.s.Len() >= before-2 {
		t.Errorf("Len %d after removing the holder, %d before", f.s.Len(), before)
	}
}

// A held Variable takes 64 bytes on a 64-bit machine (a gateway keeps
// one a tag), and the Space keeps a copy of the Variable it was given:
// the caller may reuse it for the next one.
func TestHeldCopy(t *testing.T) {
	// (On a 32-bit machine both take 44 bytes: there a pointer is 4.)
	if n := unsafe.Sizeof(held{}); unsafe.Sizeof(uintptr(0)) == 8 && n != 64 || n > unsafe.Sizeof(Variable{}) {
		t.Errorf("a held Variable takes %d bytes, want 64 on a 64-bit machine and at most a Variable's %d", n, unsafe.Sizeof(Variable{}))
	}
	f := newFixture(t)
	v := Variable{Name: "C1", DataType: id.Int64, AccessLevel: 1, Source: f.sid, Handle: 1}
	if err := f.s.AddVariable(f.id("Plant"), &v); err != nil {
		t.Fatal(err)
	}
	v.Name, v.Handle, v.DataType = "C2", 2, id.Double
	if err := f.s.AddVariable(f.id("Plant"), &v); err != nil {
		t.Fatal(err)
	}
	v.Name = "C1" // a name taken: refused
	if err := f.s.AddVariable(f.id("Plant"), &v); !errors.Is(err, ErrNodeExists) {
		t.Fatalf("a second C1: %v, want ErrNodeExists", err)
	}
	for name, want := range map[string]uint32{"C1": id.Int64, "C2": id.Double} {
		dv := readAttr(f, f.id("Plant."+name), ua.AttributeIDDataType)
		if got, ok := dv.Value.Value().(ua.NodeID); !ok || got != ua.NewNumericNodeID(0, want) {
			t.Errorf("%s: DataType %v, want i=%d", name, dv.Value.Value(), want)
		}
		dv = readAttr(f, f.id("Plant."+name), ua.AttributeIDBrowseName)
		if got, ok := dv.Value.Value().(ua.QualifiedName); !ok || got.Name != name {
			t.Errorf("%s: BrowseName %v", name, dv.Value.Value())
		}
	}
}
