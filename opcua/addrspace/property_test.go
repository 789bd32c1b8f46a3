package addrspace

import (
	"errors"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func TestProperties(t *testing.T) {
	s := New()
	ns := s.AddNamespace("urn:test")
	tag := ua.NewStringNodeID(ns, "dev.tag")
	if err := s.AddNode(&Node{ID: tag, Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: ns, Name: "tag"}, AccessLevel: 1,
		Properties: []Property{{Name: ua.QualifiedName{NamespaceIndex: ns, Name: "Address"}, DataType: id.String, Value: ua.MustVariant("40001")}}},
		Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	pid := ua.NewStringNodeID(ns, "dev.tag.Address")
	var rc ReadContext
	var dv ua.DataValue
	s.Read(&rc, &ua.ReadValueID{NodeID: pid, AttributeID: uint32(ua.AttributeIDValue)}, ua.TimestampsToReturnBoth, &dv)
	if dv.Status != status.Good || dv.Value.Value() != "40001" || dv.SourceTimestamp.IsZero() {
		t.Fatalf("Read property: %v %v", dv.Status, dv.Value)
	}
	if a := testing.AllocsPerRun(100, func() {
		rc.Reset()
		s.Read(&rc, &ua.ReadValueID{NodeID: pid, AttributeID: uint32(ua.AttributeIDValue)}, ua.TimestampsToReturnBoth, &dv)
	}); a != 0 {
		t.Errorf("Read of a property: %v allocations", a)
	}
	s.Read(&rc, &ua.ReadValueID{NodeID: ua.NewStringNodeID(ns, "dev.tag.Nope"), AttributeID: uint32(ua.AttributeIDValue)}, ua.TimestampsToReturnBoth, &dv)
	if dv.Status != status.BadNodeIDUnknown {
		t.Errorf("Read of no property: %v", dv.Status)
	}
	// Browse of the tag lists it, forward HasProperty, as a Variable of PropertyType.
	var res ua.BrowseResult
	var cur BrowseCursor
	s.Browse(&ua.BrowseDescription{NodeID: tag, BrowseDirection: ua.BrowseDirectionForward, ResultMask: 63}, 0, &res, &cur)
	if res.StatusCode != status.Good || len(res.References) != 1 {
		t.Fatalf("Browse: %v %+v", res.StatusCode, res.References)
	}
	if r := res.References[0]; r.NodeID.NodeID != pid || r.ReferenceTypeID != ua.NewNumericNodeID(0, id.HasProperty) || !r.IsForward ||
		r.NodeClass != ua.NodeClassVariable || r.BrowseName.Name != "Address" || r.TypeDefinition.NodeID != ua.NewNumericNodeID(0, id.PropertyType) {
		t.Errorf("Browse: %+v", r)
	}
	// With a continuation after the first reference (Organizes), then the property.
	s.Browse(&ua.BrowseDescription{NodeID: tag, BrowseDirection: ua.BrowseDirectionBoth, ResultMask: 63}, 1, &res, &cur)
	if !cur.More() {
		t.Fatal("Browse with max 1: no continuation")
	}
	s.BrowseNext(&cur, 1, &res)
	if res.StatusCode != status.Good || len(res.References) != 1 || res.References[0].NodeID.NodeID != pid {
		t.Errorf("BrowseNext: %v %+v", res.StatusCode, res.References)
	}
	// The property's own references: inverse HasProperty to the tag.
	s.Browse(&ua.BrowseDescription{NodeID: pid, BrowseDirection: ua.BrowseDirectionInverse, ResultMask: 63}, 0, &res, &cur)
	if res.StatusCode != status.Good || len(res.References) != 1 || res.References[0].NodeID.NodeID != tag {
		t.Errorf("Browse of the property: %v %+v", res.StatusCode, res.References)
	}
	var tr ua.BrowsePathResult
	s.TranslateBrowsePath(&ua.BrowsePath{StartingNode: tag, RelativePath: ua.RelativePath{Elements: []ua.RelativePathElement{
		{ReferenceTypeID: ua.NewNumericNodeID(0, id.HasProperty), TargetName: ua.QualifiedName{NamespaceIndex: ns, Name: "Address"}}}}}, &tr)
	if tr.StatusCode != status.Good || len(tr.Targets) != 1 || tr.Targets[0].TargetID.NodeID != pid {
		t.Errorf("TranslateBrowsePath: %v %+v", tr.StatusCode, tr.Targets)
	}
	if st := s.Write(&ua.WriteValue{NodeID: pid, AttributeID: uint32(ua.AttributeIDValue), Value: ua.DataValue{Value: ua.MustVariant("x")}}, nil); st != status.BadNotWritable {
		t.Errorf("Write of a property: %v", st)
	}
	if refs := s.References(tag); len(refs) != 2 {
		t.Errorf("References: %+v", refs)
	}
	// A node may not take a property's id, nor a property a node's.
	if err := s.AddNode(&Node{ID: pid, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "x"}}); !errors.Is(err, ErrNodeExists) {
		t.Errorf("AddNode over a property: %v", err)
	}
	if err := s.AddNode(&Node{ID: ua.NewStringNodeID(ns, "dev"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "dev"},
		Properties: []Property{{Name: ua.QualifiedName{Name: "tag"}, DataType: id.String}}}); !errors.Is(err, ErrNodeExists) {
		t.Errorf("property over a node: %v", err)
	}
	if err := s.AddNode(&Node{ID: ua.NewStringNodeID(ns, "other"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "other"},
		Properties: []Property{{Name: ua.QualifiedName{Name: "a.b"}, DataType: id.String}}}); !errors.Is(err, ErrInvalidNode) {
		t.Errorf("property name with a dot: %v", err)
	}
	if err := s.RemoveNode(tag); err != nil {
		t.Fatal(err)
	}
	if s.Node(pid) != nil {
		t.Error("the property outlived its node")
	}
}
