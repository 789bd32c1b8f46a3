package addrspace

import (
	"math"
	"slices"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// names returns the browse names of the references' targets.
func names(res *ua.BrowseResult) []string {
	var out []string
	for _, r := range res.References {
		out = append(out, r.BrowseName.Name)
	}
	return out
}

func (f *fixture) browse(d ua.BrowseDescription) ua.BrowseResult {
	var res ua.BrowseResult
	var c BrowseCursor
	f.s.Browse(&d, 0, &res, &c)
	if c.More() {
		panic("cursor with no limit")
	}
	return res
}

// TestBrowseNS0Path browses Root → Objects → Server → ServerStatus →
// CurrentTime.
func TestBrowseNS0Path(t *testing.T) {
	f := newFixture(t)
	node := nid(id.RootFolder)
	for _, name := range []string{"Objects", "Server", "ServerStatus", "CurrentTime"} {
		res := f.browse(ua.BrowseDescription{NodeID: node, BrowseDirection: ua.BrowseDirectionForward,
			ReferenceTypeID: nid(id.HierarchicalReferences), IncludeSubtypes: true, ResultMask: uint32(ua.BrowseResultMaskAll)})
		if res.StatusCode != status.Good {
			t.Fatalf("Browse %v: %v", node, res.StatusCode)
		}
		i := slices.Index(names(&res), name)
		if i < 0 {
			t.Fatalf("Browse %v: no %s in %v", node, name, names(&res))
		}
		node = res.References[i].NodeID.NodeID
	}
	if node != nid(id.Server_ServerStatus_CurrentTime) {
		t.Errorf("path ends at %v", node)
	}
}

func TestBrowseDirectionsAndFilters(t *testing.T) {
	f := newFixture(t)
	plant := f.id("Plant")
	all := uint32(ua.BrowseResultMaskAll)
	for _, tc := range []struct {
		name string
		d    ua.BrowseDescription
		want []string
	}{
		{"forward all", ua.BrowseDescription{NodeID: plant, ResultMask: all},
			[]string{"FolderType", "Int", "RO", "NoRead", "Arr", "Str", "Bytes", "Matrix", "Strs", "Any", "Num", "Time", "State", "Status", "ByteArr", "Ext0", "Ext1", "Ext2", "Method", "Remote", "Int"}},
		{"inverse", ua.BrowseDescription{NodeID: plant, BrowseDirection: ua.BrowseDirectionInverse, ResultMask: all},
			[]string{"Objects"}},
		{"both, Organizes", ua.BrowseDescription{NodeID: plant, BrowseDirection: ua.BrowseDirectionBoth, ReferenceTypeID: nid(id.Organizes), ResultMask: all},
			[]string{"Objects", "Remote"}},
		{"HasChild without subtypes", ua.BrowseDescription{NodeID: plant, ReferenceTypeID: nid(id.HasChild), ResultMask: all}, nil},
		{"HasProperty", ua.BrowseDescription{NodeID: plant, ReferenceTypeID: nid(id.HasProperty), ResultMask: all}, []string{"Str"}},
		{"Aggregates+subtypes, methods", ua.BrowseDescription{NodeID: plant, ReferenceTypeID: nid(id.Aggregates), IncludeSubtypes: true,
			NodeClassMask: uint32(ua.NodeClassMethod), ResultMask: all}, []string{"Method"}},
		{"HasComponent+subtypes reaches MyRef", ua.BrowseDescription{NodeID: plant, ReferenceTypeID: nid(id.HasComponent), IncludeSubtypes: true,
			NodeClassMask: uint32(ua.NodeClassVariable), ResultMask: all},
			[]string{"Int", "RO", "NoRead", "Arr", "Bytes", "Matrix", "Strs", "Any", "Num", "Time", "State", "Status", "ByteArr", "Ext0", "Ext1", "Ext2", "Int"}},
		{"object types", ua.BrowseDescription{NodeID: plant, NodeClassMask: uint32(ua.NodeClassObjectType), ResultMask: all}, []string{"FolderType"}},
		{"mask bits above View ignored", ua.BrowseDescription{NodeID: plant, NodeClassMask: 0xFFFFFF00 | uint32(ua.NodeClassObjectType), ResultMask: all}, []string{"FolderType"}},
		{"subtypes of HasChild in ns0", ua.BrowseDescription{NodeID: nid(id.HasChild), ReferenceTypeID: nid(id.HasSubtype), ResultMask: all},
			[]string{"Aggregates", "HasSubtype", "HasReferenceDescription"}},
	} {
		res := f.browse(tc.d)
		got := names(&res)
		if tc.name == "forward all" {
			// The remote target has no browse name.
			if i := slices.Index(got, ""); i >= 0 {
				got[i] = "Remote"
			}
		}
		if res.StatusCode != status.Good || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v %q, want %q", tc.name, res.StatusCode, got, tc.want)
		}
	}
}

func TestBrowseResultMask(t *testing.T) {
	f := newFixture(t)
	d := ua.BrowseDescription{NodeID: f.id("Plant"), ReferenceTypeID: nid(id.HasProperty)}
	full := ua.ReferenceDescription{
		ReferenceTypeID: nid(id.HasProperty),
		IsForward:       true,
		NodeID:          ua.ExpandedNodeID{NodeID: f.id("Str")},
		BrowseName:      ua.QualifiedName{NamespaceIndex: f.ns, Name: "Str"},
		DisplayName:     ua.LocalizedText{Text: "Str"},
		NodeClass:       ua.NodeClassVariable,
		TypeDefinition:  ua.ExpandedNodeID{NodeID: nid(id.PropertyType)},
	}
	for mask := uint32(0); mask <= 63; mask++ {
		d.ResultMask = mask
		res := f.browse(d)
		if len(res.References) != 1 {
			t.Fatalf("mask %d: %d references", mask, len(res.References))
		}
		want := ua.ReferenceDescription{NodeID: full.NodeID}
		m := ua.BrowseResultMask(mask)
		if m&ua.BrowseResultMaskReferenceTypeID != 0 {
			want.ReferenceTypeID = full.ReferenceTypeID
		}
		if m&ua.BrowseResultMaskIsForward != 0 {
			want.IsForward = true
		}
		if m&ua.BrowseResultMaskNodeClass != 0 {
			want.NodeClass = full.NodeClass
		}
		if m&ua.BrowseResultMaskBrowseName != 0 {
			want.BrowseName = full.BrowseName
		}
		if m&ua.BrowseResultMaskDisplayName != 0 {
			want.DisplayName = full.DisplayName
		}
		if m&ua.BrowseResultMaskTypeDefinition != 0 {
			want.TypeDefinition = full.TypeDefinition
		}
		if res.References[0] != want {
			t.Errorf("mask %d: %+v, want %+v", mask, res.References[0], want)
		}
	}
	// No TypeDefinition for other node classes.
	res := f.browse(ua.BrowseDescription{NodeID: f.id("Plant"), NodeClassMask: uint32(ua.NodeClassMethod), ResultMask: 63})
	if len(res.References) != 1 || !res.References[0].TypeDefinition.IsNull() {
		t.Errorf("method: %+v", res.References)
	}
}

func TestBrowseErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		d    ua.BrowseDescription
		want ua.StatusCode
	}{
		{ua.BrowseDescription{NodeID: f.id("Nope")}, status.BadNodeIDUnknown},
		{ua.BrowseDescription{NodeID: f.id("Plant"), BrowseDirection: 3}, status.BadBrowseDirectionInvalid},
		{ua.BrowseDescription{NodeID: f.id("Plant"), BrowseDirection: -1}, status.BadBrowseDirectionInvalid},
		{ua.BrowseDescription{NodeID: f.id("Plant"), ReferenceTypeID: nid(id.Int32)}, status.BadReferenceTypeIDInvalid},
		{ua.BrowseDescription{NodeID: f.id("Plant"), ReferenceTypeID: f.id("Nope")}, status.BadReferenceTypeIDInvalid},
	} {
		res := ua.BrowseResult{References: make([]ua.ReferenceDescription, 3)}
		var c BrowseCursor
		f.s.Browse(&tc.d, 0, &res, &c)
		if res.StatusCode != tc.want || len(res.References) != 0 || c.More() {
			t.Errorf("Browse(%+v) = %v with %d references, want %v", tc.d, res.StatusCode, len(res.References), tc.want)
		}
	}
}

func TestBrowseContinuation(t *testing.T) {
	f := newFixture(t)
	d := ua.BrowseDescription{NodeID: f.id("Plant"), ReferenceTypeID: nid(id.HasComponent), IncludeSubtypes: true,
		NodeClassMask: uint32(ua.NodeClassVariable), ResultMask: uint32(ua.BrowseResultMaskBrowseName)}
	want := names(ptr(f.browse(d)))
	for _, max := range []uint32{1, 2, 3, 5, 16, 17, 100} {
		var res ua.BrowseResult
		var c BrowseCursor
		f.s.Browse(&d, max, &res, &c)
		got := names(&res)
		for c.More() {
			if uint32(len(res.References)) != max {
				t.Fatalf("max %d: page of %d", max, len(res.References))
			}
			f.s.BrowseNext(&c, max, &res)
			if res.StatusCode != status.Good {
				t.Fatalf("max %d: BrowseNext %v", max, res.StatusCode)
			}
			got = append(got, names(&res)...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("max %d: %q, want %q", max, got, want)
		}
		// A finished cursor is invalid.
		f.s.BrowseNext(&c, max, &res)
		if res.StatusCode != status.BadContinuationPointInvalid {
			t.Errorf("max %d: finished cursor: %v", max, res.StatusCode)
		}
	}
	// Exactly max matches: no cursor.
	var res ua.BrowseResult
	var c BrowseCursor
	f.s.Browse(&d, uint32(len(want)), &res, &c)
	if c.More() {
		t.Error("cursor after all references")
	}
	// A change of the node's references invalidates the cursor.
	f.s.Browse(&d, 2, &res, &c)
	if !c.More() {
		t.Fatal("no cursor")
	}
	if err := f.s.AddNode(&Node{ID: f.id("Late"), Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{Name: "Late"}},
		mkRef(id.HasComponent, f.id("Plant"), true)); err != nil {
		t.Fatal(err)
	}
	f.s.BrowseNext(&c, 2, &res)
	if res.StatusCode != status.BadContinuationPointInvalid || c.More() {
		t.Errorf("BrowseNext after a change: %v", res.StatusCode)
	}
	// A cursor of another node stays valid.
	d2 := ua.BrowseDescription{NodeID: nid(id.Server), ResultMask: 63}
	f.s.Browse(&d2, 1, &res, &c)
	if err := f.s.AddNode(&Node{ID: f.id("Later"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "Later"}},
		mkRef(id.Organizes, f.id("Plant"), true)); err != nil {
		t.Fatal(err)
	}
	f.s.BrowseNext(&c, 1, &res)
	if res.StatusCode != status.Good || len(res.References) != 1 {
		t.Errorf("BrowseNext of another node: %v", res.StatusCode)
	}
}

func ptr[T any](v T) *T { return &v }

func TestBrowseAllocs(t *testing.T) {
	f := newFixture(t)
	d := ua.BrowseDescription{NodeID: nid(id.Server), BrowseDirection: ua.BrowseDirectionBoth, ReferenceTypeID: nid(id.References),
		IncludeSubtypes: true, ResultMask: uint32(ua.BrowseResultMaskAll)}
	var res ua.BrowseResult
	var c BrowseCursor
	f.s.Browse(&d, 0, &res, &c)
	if len(res.References) < 10 {
		t.Fatalf("Server has %d references", len(res.References))
	}
	if allocs := testing.AllocsPerRun(100, func() { f.s.Browse(&d, 0, &res, &c) }); allocs != 0 {
		t.Errorf("Browse allocates %v times", allocs)
	}
}

func TestTranslateBrowsePath(t *testing.T) {
	f := newFixture(t)
	el := func(typ uint32, sub, inv bool, ns uint16, name string) ua.RelativePathElement {
		var rt ua.NodeID
		if typ != 0 {
			rt = nid(typ)
		}
		return ua.RelativePathElement{ReferenceTypeID: rt, IncludeSubtypes: sub, IsInverse: inv,
			TargetName: ua.QualifiedName{NamespaceIndex: ns, Name: name}}
	}
	ns := f.ns
	done := uint32(math.MaxUint32)
	for _, tc := range []struct {
		name  string
		start ua.NodeID
		elems []ua.RelativePathElement
		want  ua.StatusCode
		tgts  []ua.BrowsePathTarget
	}{
		{"Objects/Server/ServerStatus/CurrentTime", nid(id.RootFolder), []ua.RelativePathElement{
			el(id.Organizes, false, false, 0, "Objects"), el(id.HierarchicalReferences, true, false, 0, "Server"),
			el(id.HasComponent, false, false, 0, "ServerStatus"), el(id.HasComponent, false, false, 0, "CurrentTime")},
			status.Good, []ua.BrowsePathTarget{{TargetID: ua.ExpandedNodeID{NodeID: nid(id.Server_ServerStatus_CurrentTime)}, RemainingPathIndex: done}}},
		{"null type: any reference", nid(id.Server), []ua.RelativePathElement{el(0, false, false, 0, "ServerStatus"), el(0, false, false, 0, "State")},
			status.Good, []ua.BrowsePathTarget{{TargetID: ua.ExpandedNodeID{NodeID: nid(id.Server_ServerStatus_State)}, RemainingPathIndex: done}}},
		{"inverse", f.id("Int"), []ua.RelativePathElement{el(id.HasComponent, false, true, ns, "Plant"), el(id.Organizes, false, true, 0, "Objects")},
			status.Good, []ua.BrowsePathTarget{{TargetID: ua.ExpandedNodeID{NodeID: nid(id.ObjectsFolder)}, RemainingPathIndex: done}}},
		{"subtypes off", nid(id.ObjectsFolder), []ua.RelativePathElement{el(id.HierarchicalReferences, false, false, 0, "Server")}, status.BadNoMatch, nil},
		{"wrong namespace", nid(id.ObjectsFolder), []ua.RelativePathElement{el(id.Organizes, false, false, ns, "Server")}, status.BadNoMatch, nil},
		{"empty last name: all targets", f.id("Plant"), []ua.RelativePathElement{el(id.HasProperty, false, false, 0, "")},
			status.Good, []ua.BrowsePathTarget{{TargetID: ua.ExpandedNodeID{NodeID: f.id("Str")}, RemainingPathIndex: done}}},
		{"empty inner name", nid(id.RootFolder), []ua.RelativePathElement{el(id.Organizes, false, false, 0, ""), el(id.Organizes, false, false, 0, "Server")},
			status.BadBrowseNameInvalid, nil},
		{"no elements", nid(id.RootFolder), nil, status.BadNothingToDo, nil},
		{"unknown start", f.id("Nope"), []ua.RelativePathElement{el(id.Organizes, false, false, 0, "Objects")}, status.BadNodeIDUnknown, nil},
		{"unknown type", nid(id.RootFolder), []ua.RelativePathElement{el(id.Int32, false, false, 0, "Objects")}, status.BadNoMatch, nil},
		{"remote target", f.id("Plant"), []ua.RelativePathElement{el(id.Organizes, false, false, ns, "Remote"), el(id.Organizes, false, false, 0, "X"), el(id.Organizes, false, false, 0, "Y")},
			status.Good, []ua.BrowsePathTarget{{TargetID: ua.ExpandedNodeID{NodeID: nid(99), ServerIndex: 2}, RemainingPathIndex: 1}}},
		{"two matches deduplicated", f.id("Plant"), []ua.RelativePathElement{el(id.HasComponent, true, false, ns, "Int")},
			status.Good, []ua.BrowsePathTarget{{TargetID: ua.ExpandedNodeID{NodeID: f.id("Int")}, RemainingPathIndex: done}}},
	} {
		bp := ua.BrowsePath{StartingNode: tc.start, RelativePath: ua.RelativePath{Elements: tc.elems}}
		res := ua.BrowsePathResult{Targets: make([]ua.BrowsePathTarget, 2)}
		f.s.TranslateBrowsePath(&bp, &res)
		if res.StatusCode != tc.want || !slices.Equal(res.Targets, tc.tgts) {
			t.Errorf("%s: %v %+v, want %v %+v", tc.name, res.StatusCode, res.Targets, tc.want, tc.tgts)
		}
	}
}
