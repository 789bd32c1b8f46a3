package addrspace

import (
	"errors"
	"fmt"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// addressSet is a PropertySet of two properties: Address, "HR <handle>",
// and Class, the same for every Variable.
type addressSet struct {
	names []PropertyName
	addr  []string // by handle
	class ua.Variant
}

func newAddressSet(ns uint16, handles int) *addressSet {
	s := &addressSet{
		names: []PropertyName{{Name: ua.QualifiedName{NamespaceIndex: ns, Name: "Address"}, DataType: id.String},
			{Name: ua.QualifiedName{NamespaceIndex: ns, Name: "Class"}, DataType: id.String}},
		class: ua.MustVariant("fast"),
	}
	for h := range handles {
		s.addr = append(s.addr, fmt.Sprintf("HR %d", h))
	}
	return s
}

func (s *addressSet) PropertyNames() []PropertyName { return s.names }

func (s *addressSet) PropertyValue(h uint32, i int) ua.Variant {
	if i == 1 {
		return s.class
	}
	var v ua.Variant
	v.SetString(s.addr[h])
	return v
}

// A held Variable's Shared properties follow its own: they read with the
// values the set gives for its handle (without allocating), browse,
// translate and list as references like the stored ones.
func TestSharedProperties(t *testing.T) {
	f := newFixture(t)
	set := newAddressSet(f.ns, 4)
	for _, v := range []*Variable{
		{Name: "S1", DataType: id.Int64, AccessLevel: 1, Source: f.sid, Handle: 1, Class: &VariableClass{Shared: set},
			Properties: []Property{{Name: ua.QualifiedName{NamespaceIndex: f.ns, Name: "Unit"}, DataType: id.String, Value: ua.MustVariant("mm")}}},
		{Name: "S2", DataType: id.Int64, AccessLevel: 1, Source: f.sid, Handle: 2, Class: &VariableClass{Shared: set}},
	} {
		if err := f.s.AddVariable(f.id("Plant"), v); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"Plant.S1.Unit": "mm", "Plant.S1.Address": "HR 1", "Plant.S1.Class": "fast",
		"Plant.S2.Address": "HR 2", "Plant.S2.Class": "fast",
	} {
		dv := readAttr(f, f.id(name), ua.AttributeIDValue)
		if dv.Status != status.Good || dv.Value.Value() != want || dv.SourceTimestamp.IsZero() {
			t.Errorf("%s: %v %v at %v, want %q", name, dv.Status, dv.Value.Value(), dv.SourceTimestamp, want)
		}
		if dv := readAttr(f, f.id(name), ua.AttributeIDDataType); dv.Value.Value() != nid(id.String) {
			t.Errorf("%s: DataType %v", name, dv.Value.Value())
		}
	}
	if dv := readAttr(f, f.id("Plant.S2.Unit"), ua.AttributeIDValue); dv.Status != status.BadNodeIDUnknown {
		t.Errorf("S2.Unit: %v", dv.Status)
	}
	var rc ReadContext
	var dv ua.DataValue
	rv := ua.ReadValueID{NodeID: f.id("Plant.S2.Address"), AttributeID: uint32(ua.AttributeIDValue)}
	if a := testing.AllocsPerRun(100, func() {
		rc.Reset()
		f.s.Read(&rc, &rv, ua.TimestampsToReturnBoth, &dv)
	}); a != 0 {
		t.Errorf("Read of a shared property: %v allocations", a)
	}

	var res ua.BrowseResult
	var cur BrowseCursor
	f.s.Browse(&ua.BrowseDescription{NodeID: f.id("Plant.S1"), BrowseDirection: ua.BrowseDirectionForward,
		ReferenceTypeID: nid(id.HasProperty), ResultMask: 63}, 0, &res, &cur)
	var got []string
	for _, r := range res.References {
		got = append(got, r.NodeID.NodeID.Text+"="+r.BrowseName.Name)
	}
	if fmt.Sprint(got) != "[Plant.S1.Unit=Unit Plant.S1.Address=Address Plant.S1.Class=Class]" {
		t.Errorf("Browse of S1's properties: %v (%v)", got, res.StatusCode)
	}
	refs := f.s.References(f.id("Plant.S2"))
	var props []string
	for _, r := range refs {
		if r.TypeID == nid(id.HasProperty) {
			props = append(props, r.Target.NodeID.Text)
		}
	}
	if fmt.Sprint(props) != "[Plant.S2.Address Plant.S2.Class]" {
		t.Errorf("References of S2: %v", props)
	}
	var tr ua.BrowsePathResult
	f.s.TranslateBrowsePath(&ua.BrowsePath{StartingNode: f.id("Plant"), RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
		{ReferenceTypeID: nid(id.HierarchicalReferences), IncludeSubtypes: true, TargetName: ua.QualifiedName{NamespaceIndex: f.ns, Name: "S2"}},
		{ReferenceTypeID: nid(id.HasProperty), TargetName: ua.QualifiedName{NamespaceIndex: f.ns, Name: "Class"}},
	}}}, &tr)
	if tr.StatusCode != status.Good || len(tr.Targets) != 1 || tr.Targets[0].TargetID.NodeID != f.id("Plant.S2.Class") {
		t.Errorf("TranslateBrowsePath to S2.Class: %v %v", tr.StatusCode, tr.Targets)
	}
	// A property's node, from its holder's References, is a Variable.
	if n := f.s.Node(f.id("Plant.S2.Class")); n == nil || n.Class != ua.NodeClassVariable || n.BrowseName.Name != "Class" {
		t.Errorf("node of S2.Class: %+v", n)
	}

	// A name twice (stored and shared), or a node where a shared property
	// would be, is refused.
	if err := f.s.AddVariable(f.id("Plant"), &Variable{Name: "S3", DataType: id.Int64, Source: f.sid, Handle: 3, Class: &VariableClass{Shared: set},
		Properties: []Property{{Name: ua.QualifiedName{NamespaceIndex: f.ns, Name: "Class"}, DataType: id.String}}}); !errors.Is(err, ErrInvalidNode) {
		t.Errorf("Class twice: %v", err)
	}
	if err := f.s.AddNode(&Node{ID: f.id("Plant.S2.Address"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "X"}},
		mkRef(id.Organizes, f.id("Plant"), true)); !errors.Is(err, ErrNodeExists) {
		t.Errorf("a node at S2.Address: %v", err)
	}
}
