package addrspace

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func TestAddNamespace(t *testing.T) {
	s := New()
	a := s.AddNamespace("urn:a")
	b := s.AddNamespace("urn:b")
	if a != 1 || b != 2 || s.AddNamespace("urn:a") != 1 {
		t.Errorf("indexes %d %d", a, b)
	}
	if i, ok := s.NamespaceIndex("urn:b"); !ok || i != 2 {
		t.Errorf("NamespaceIndex = %d %v", i, ok)
	}
	if _, ok := s.NamespaceIndex("urn:c"); ok {
		t.Error("unknown namespace found")
	}
	var rc ReadContext
	var dv ua.DataValue
	s.Read(&rc, &ua.ReadValueID{NodeID: nid(id.Server_NamespaceArray), AttributeID: 13}, ua.TimestampsToReturnNeither, &dv)
	want := []string{NamespaceURI0, "urn:a", "urn:b"}
	if got, _ := dv.Value.Value().([]string); !slices.Equal(got, want) {
		t.Errorf("NamespaceArray = %v", dv.Value)
	}
	if !slices.Equal(s.Namespaces(), want) {
		t.Errorf("Namespaces = %v", s.Namespaces())
	}
}

func TestAddNodeErrors(t *testing.T) {
	f := newFixture(t)
	qn := ua.QualifiedName{NamespaceIndex: f.ns, Name: "X"}
	for _, tc := range []struct {
		name string
		n    *Node
		refs []Reference
		want error
	}{
		{"null id", &Node{Class: ua.NodeClassObject, BrowseName: qn}, nil, ErrInvalidNode},
		{"unknown namespace", &Node{ID: ua.NewStringNodeID(9, "x"), Class: ua.NodeClassObject, BrowseName: qn}, nil, ErrInvalidNode},
		{"no browse name", &Node{ID: f.id("X"), Class: ua.NodeClassObject}, nil, ErrInvalidNode},
		{"no class", &Node{ID: f.id("X"), BrowseName: qn}, nil, ErrInvalidNode},
		{"exists", &Node{ID: f.id("Int"), Class: ua.NodeClassObject, BrowseName: qn}, nil, ErrNodeExists},
		{"unknown target", &Node{ID: f.id("X"), Class: ua.NodeClassObject, BrowseName: qn}, []Reference{mkRef(id.Organizes, f.id("Nope"), true)}, ErrUnknownNode},
		{"type not a ReferenceType", &Node{ID: f.id("X"), Class: ua.NodeClassObject, BrowseName: qn}, []Reference{mkRef(id.Int32, f.id("Plant"), true)}, ErrNotReference},
		{"unknown source", &Node{ID: f.id("X"), Class: ua.NodeClassVariable, BrowseName: qn, Source: 99}, nil, ErrInvalidNode},
	} {
		if err := f.s.AddNode(tc.n, tc.refs...); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A failed AddNode changes nothing.
	if f.s.Node(f.id("X")) != nil {
		t.Error("node X added")
	}
	if refs := f.s.References(f.id("Plant")); slices.ContainsFunc(refs, func(r Reference) bool { return r.Target.NodeID == f.id("X") }) {
		t.Error("reference to X added")
	}
	// Defaults: DisplayName and DataType.
	n := &Node{ID: f.id("V"), Class: ua.NodeClassVariable, BrowseName: qn}
	if err := f.s.AddNode(n, mkRef(id.HasComponent, f.id("Plant"), true)); err != nil {
		t.Fatal(err)
	}
	if n.DisplayName.Text != "X" || n.DataType != nid(id.BaseDataType) {
		t.Errorf("defaults: %v %v", n.DisplayName, n.DataType)
	}
	if err := f.s.AddReference(f.id("Nope"), nid(id.Organizes), ua.ExpandedNodeID{NodeID: f.id("V")}); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("AddReference from an unknown node: %v", err)
	}
}

func TestReferencesBothEnds(t *testing.T) {
	f := newFixture(t)
	refs := f.s.References(f.id("Int"))
	want := []Reference{
		{TypeID: nid(id.HasComponent), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: f.id("Plant")}},
		{TypeID: nid(id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: nid(id.BaseDataVariableType)}},
		{TypeID: f.id("MyRef"), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: f.id("Plant")}},
	}
	if !slices.Equal(refs, want) {
		t.Errorf("references of Int: %+v", refs)
	}
	// Adding an existing reference again changes nothing.
	if err := f.s.AddReference(f.id("Plant"), nid(id.HasComponent), ua.ExpandedNodeID{NodeID: f.id("Int")}); err != nil {
		t.Fatal(err)
	}
	if got := f.s.References(f.id("Int")); !slices.Equal(got, want) {
		t.Errorf("after a duplicate: %+v", got)
	}
	// A new type is a subtype of its supertype.
	if !f.s.IsSubtype(f.id("MyRef"), nid(id.HierarchicalReferences)) || !f.s.IsSubtype(f.id("MyData"), nid(id.Number)) {
		t.Error("subtypes of added types")
	}
}

// TestConcurrent runs readers, browsers and writers at once, for the race
// detector.
func TestConcurrent(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rc ReadContext
			var dv ua.DataValue
			var res ua.BrowseResult
			var c BrowseCursor
			for i := range 300 {
				rc.Reset()
				f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Arr"), AttributeID: 13, IndexRange: "1:3"}, ua.TimestampsToReturnBoth, &dv)
				f.s.Read(&rc, &ua.ReadValueID{NodeID: f.id("Plant"), AttributeID: 4}, ua.TimestampsToReturnBoth, &dv)
				f.s.Browse(&ua.BrowseDescription{NodeID: f.id("Plant"), ResultMask: 63}, 3, &res, &c)
				for c.More() {
					f.s.BrowseNext(&c, 3, &res)
				}
				switch i % 3 {
				case 0:
					f.write("Arr", ua.AttributeIDValue, "", val([]float64{float64(i), 1, 2, 3}), nil)
				case 1:
					f.write("Plant", ua.AttributeIDDisplayName, "", val(ua.LocalizedText{Text: "p"}), nil)
				case 2:
					if i%30 == 2 {
						name := string(rune('a'+g)) + string(rune('a'+i/30))
						f.s.AddNode(&Node{ID: f.id(name), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: name}},
							mkRef(id.Organizes, f.id("Plant"), true))
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestAddSourceOnce(t *testing.T) {
	f := newFixture(t)
	if id := f.s.AddSource(f.src); id != f.sid {
		t.Errorf("the same source registered again: id %d, want %d", id, f.sid)
	}
	if a, b := f.s.AddSource(&imageSource{}), f.s.AddSource(&imageSource{}); a == b || a == f.sid {
		t.Errorf("two sources share id %d", a)
	}
	fn := SourceFunc(func(uint32, *ua.DataValue) {})
	if a, b := f.s.AddSource(fn), f.s.AddSource(fn); a == b {
		t.Errorf("SourceFuncs share id %d", a)
	}
}

// TestRemoveNode: removing a node removes what it owns (HasComponent,
// HasProperty children, recursively) and every reference to them, at
// both ends; Read then answers Bad_NodeIdUnknown; the node can be added
// again.
func TestRemoveNode(t *testing.T) {
	f := newFixture(t)
	if err := f.s.RemoveNode(f.id("Plant")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Plant", "Int", "Str", "Matrix"} {
		if f.s.Node(f.id(name)) != nil {
			t.Errorf("%s is still there", name)
		}
		var dv ua.DataValue
		f.s.Read(&ReadContext{}, &ua.ReadValueID{NodeID: f.id(name), AttributeID: uint32(ua.AttributeIDBrowseName)}, ua.TimestampsToReturnNeither, &dv)
		if dv.Status != status.BadNodeIDUnknown {
			t.Errorf("Read of removed %s: %v", name, dv.Status)
		}
	}
	// No reference to a removed node is left anywhere.
	for _, n := range f.s.nodes.all() {
		for _, r := range n.refs {
			if r.target != nil && f.s.nodes.get(r.target.ID) != r.target {
				t.Fatalf("%v keeps a reference to removed %v", n.ID, r.target.ID)
			}
		}
	}
	if err := f.s.RemoveNode(f.id("Plant")); err == nil {
		t.Fatal("removed twice")
	}
	if err := f.s.AddNode(&Node{ID: f.id("Plant"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{NamespaceIndex: f.ns, Name: "Plant"}},
		Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatalf("added again: %v", err)
	}
}
