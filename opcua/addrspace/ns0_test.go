package addrspace

import (
	"slices"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func nid(n uint32) ua.NodeID { return ua.NewNumericNodeID(0, n) }

func TestNS0NodeCount(t *testing.T) {
	s := New()
	if s.Len() != ns0NodeCount {
		t.Errorf("Len = %d, want %d", s.Len(), ns0NodeCount)
	}
	// Types, folders and the Server object without the parts edged does
	// not implement: about a thousand nodes, well below the whole of
	// namespace 0.
	if s.Len() < 900 || s.Len() > 3000 {
		t.Errorf("namespace 0 has %d nodes", s.Len())
	}
	t.Logf("namespace 0: %d nodes, %d references (counted at both ends)", ns0NodeCount, ns0RefCount)
}

// TestNS0MustHave checks nodes that clients read.
func TestNS0MustHave(t *testing.T) {
	s := New()
	for _, n := range []uint32{
		id.RootFolder, id.ObjectsFolder, id.TypesFolder, id.ViewsFolder,
		id.ObjectTypesFolder, id.VariableTypesFolder, id.DataTypesFolder, id.ReferenceTypesFolder,
		id.Server, id.Server_ServerArray, id.Server_NamespaceArray, id.Server_ServerStatus,
		id.Server_ServerStatus_StartTime, id.Server_ServerStatus_CurrentTime, id.Server_ServerStatus_State,
		id.Server_ServerStatus_BuildInfo, id.Server_ServerStatus_BuildInfo_ProductUri,
		id.Server_ServerStatus_BuildInfo_ManufacturerName, id.Server_ServerStatus_BuildInfo_ProductName,
		id.Server_ServerStatus_BuildInfo_SoftwareVersion, id.Server_ServerStatus_BuildInfo_BuildNumber,
		id.Server_ServerStatus_BuildInfo_BuildDate, id.Server_ServerStatus_SecondsTillShutdown,
		id.Server_ServerStatus_ShutdownReason, id.Server_ServiceLevel, id.Server_ServerCapabilities,
		id.Server_ServerCapabilities_ServerProfileArray, id.Server_ServerCapabilities_LocaleIdArray,
		id.Server_ServerCapabilities_MinSupportedSampleRate, id.Server_ServerCapabilities_MaxBrowseContinuationPoints,
		id.Server_ServerCapabilities_OperationLimits, id.Server_ServerCapabilities_OperationLimits_MaxNodesPerRead,
		id.Server_ServerCapabilities_OperationLimits_MaxNodesPerBrowse,
		id.Server_ServerDiagnostics, id.Server_ServerDiagnostics_ServerDiagnosticsSummary,
		id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSessionCount,
		id.Server_ServerDiagnostics_EnabledFlag,
		id.BaseEventType_EventId, id.BaseEventType_Time, id.BaseEventType_Severity,
		id.ServerState_EnumStrings, id.ModellingRule_Mandatory,
	} {
		if s.Node(nid(n)) == nil {
			t.Errorf("no node i=%d (%s)", n, id.Name(n))
		}
	}
	for _, n := range []uint32{id.ServerType_ServerStatus, id.OPCBinarySchema_TypeSystem} {
		if s.Node(nid(n)) != nil {
			t.Errorf("node i=%d (%s) should be outside the subset", n, id.Name(n))
		}
	}
}

// TestNS0ReferencesBothEnds checks that every reference is listed at both
// ends, leads to a node of the space and has a ReferenceType as type.
func TestNS0ReferencesBothEnds(t *testing.T) {
	s := New()
	n := 0
	for _, node := range s.nodes.all() {
		for _, r := range node.refs {
			n++
			if r.typ == nil || r.typ.Class != ua.NodeClassReferenceType {
				t.Fatalf("%v: reference of type %v", node.ID, r.typ)
			}
			if r.target == nil {
				t.Fatalf("%v: reference without local target", node.ID)
			}
			if s.nodes.get(r.target.ID) != r.target {
				t.Fatalf("%v: target %v not in the space", node.ID, r.target.ID)
			}
			if !r.target.hasRef(r.typ, node, nil, !r.inverse) {
				t.Errorf("%v -%s(inverse %v)-> %v has no counterpart", node.ID, r.typ.BrowseName.Name, r.inverse, r.target.ID)
			}
		}
	}
	if n != ns0RefCount {
		t.Errorf("%d references, want %d", n, ns0RefCount)
	}
}

func TestNS0Subtypes(t *testing.T) {
	s := New()
	for _, tc := range []struct {
		t, super uint32
		want     bool
	}{
		{id.HasComponent, id.HierarchicalReferences, true},
		{id.HasComponent, id.References, true},
		{id.HasProperty, id.HasChild, true},
		{id.Organizes, id.HasChild, false},
		{id.HasTypeDefinition, id.NonHierarchicalReferences, true},
		{id.HasTypeDefinition, id.HierarchicalReferences, false},
		{id.HierarchicalReferences, id.HasComponent, false},
		{id.Int32, id.Number, true},
		{id.Int32, id.Integer, true},
		{id.Int32, id.UInteger, false},
		{id.Int32, id.BaseDataType, true},
		{id.UtcTime, id.DateTime, true},
		{id.Duration, id.Double, true},
		{id.ServerStatusDataType, id.Structure, true},
		{id.BuildInfo, id.Structure, true},
		{id.ServerState, id.Enumeration, true},
		{id.LocaleId, id.String, true},
		{id.FolderType, id.BaseObjectType, true},
		{id.ServerType, id.BaseObjectType, true},
		{id.PropertyType, id.BaseVariableType, true},
		{id.ServerStatusType, id.BaseDataVariableType, true},
		{id.BaseObjectType, id.FolderType, false},
		{id.Int32, id.Int32, true},
		{id.Int32, 999999, false},
	} {
		if got := s.IsSubtype(nid(tc.t), nid(tc.super)); got != tc.want {
			t.Errorf("IsSubtype(%s, %s) = %v, want %v", id.Name(tc.t), id.Name(tc.super), got, tc.want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { s.IsSubtype(nid(id.HasProperty), nid(id.References)) }); allocs != 0 {
		t.Errorf("IsSubtype allocates %v times", allocs)
	}
}

func TestNS0Attributes(t *testing.T) {
	s := New()
	if n := s.Node(nid(id.Server)); n.EventNotifier != 1 || n.Class != ua.NodeClassObject || n.BrowseName.Name != "Server" {
		t.Errorf("Server: %+v", n)
	}
	hr := s.Node(nid(id.HierarchicalReferences))
	if !hr.IsAbstract || hr.InverseName.Text != "InverseHierarchicalReferences" || hr.Symmetric {
		t.Errorf("HierarchicalReferences: abstract %v inverse %q symmetric %v", hr.IsAbstract, hr.InverseName.Text, hr.Symmetric)
	}
	if !s.Node(nid(id.References)).Symmetric {
		t.Error("References not symmetric")
	}
	ct := s.Node(nid(id.Server_ServerStatus_CurrentTime))
	if ct.DataType != nid(id.UtcTime) || ct.ValueRank != ValueRankScalar || ct.AccessLevel != 1 {
		t.Errorf("CurrentTime: DataType %v ValueRank %d AccessLevel %d", ct.DataType, ct.ValueRank, ct.AccessLevel)
	}
	na := s.Node(nid(id.Server_NamespaceArray))
	if na.ValueRank != 1 || !slices.Equal(na.ArrayDimensions, []uint32{0}) || na.MinimumSamplingInterval != 1000 {
		t.Errorf("NamespaceArray: ValueRank %d dims %v msi %v", na.ValueRank, na.ArrayDimensions, na.MinimumSamplingInterval)
	}
	if got, _ := na.Value.Value.Value().([]string); !slices.Equal(got, []string{NamespaceURI0}) {
		t.Errorf("NamespaceArray = %v", na.Value.Value)
	}
	es, _ := s.Node(nid(id.ServerState_EnumStrings)).Value.Value.Value().([]ua.LocalizedText)
	if len(es) != 8 || es[0].Text != "Running" || es[7].Text != "Unknown" {
		t.Errorf("ServerState EnumStrings = %v", es)
	}
	if d := s.Node(nid(id.RootFolder)).Description.Text; d != "The root of the server address space." {
		t.Errorf("RootFolder Description %q", d)
	}
}

// TestNS0MethodArguments checks the InputArguments and OutputArguments
// properties of the methods of namespace 0: each holds an array of
// Arguments, as many as its ArrayDimensions says, naming DataTypes of the
// space; and a few against the NodeSet.
func TestNS0MethodArguments(t *testing.T) {
	s := New()
	hasProperty := s.nodes.get(nid(id.HasProperty))
	props := 0
	for _, m := range s.nodes.all() {
		if m.Class != ua.NodeClassMethod {
			continue
		}
		for _, r := range m.refs {
			p := r.target
			if r.inverse || r.typ != hasProperty || p.BrowseName.Name != "InputArguments" && p.BrowseName.Name != "OutputArguments" {
				continue
			}
			props++
			eos, ok := p.Value.Value.Value().([]ua.ExtensionObject)
			if !ok || len(eos) == 0 {
				t.Errorf("%v %s.%s: value %v", p.ID, m.BrowseName.Name, p.BrowseName.Name, p.Value.Value)
				continue
			}
			if p.DataType != nid(id.Argument) || p.ValueRank != ValueRankOneDimension {
				t.Errorf("%v: DataType %v, ValueRank %d", p.ID, p.DataType, p.ValueRank)
			}
			if len(p.ArrayDimensions) == 1 && p.ArrayDimensions[0] != 0 && int(p.ArrayDimensions[0]) != len(eos) {
				t.Errorf("%v: %d Arguments, ArrayDimensions %v", p.ID, len(eos), p.ArrayDimensions)
			}
			for i := range eos {
				a, ok := eos[i].Body.(*ua.Argument)
				if !ok {
					t.Errorf("%v [%d]: body %T", p.ID, i, eos[i].Body)
					continue
				}
				if dt := s.nodes.get(a.DataType); a.Name == "" || dt == nil || dt.Class != ua.NodeClassDataType ||
					a.ValueRank < ValueRankScalarOrOneDimension || a.ValueRank > 3 {
					t.Errorf("%v [%d]: %+v", p.ID, i, a)
				}
			}
		}
	}
	// Every property of the table belongs to a method; the Server
	// object's GetMonitoredItems, ResendData, SetSubscriptionDurable and
	// RequestServerStateChange have arguments.
	if props != len(ns0ArgProps) || props < 6 {
		t.Errorf("%d arguments properties of methods, %d in the table", props, len(ns0ArgProps))
	}
	t.Logf("%d arguments properties, %d Arguments", props, ns0ArgCount)

	args := func(n uint32) []ua.Argument {
		eos, _ := s.Node(nid(n)).Value.Value.Value().([]ua.ExtensionObject)
		var out []ua.Argument
		for _, eo := range eos {
			if a, ok := eo.Body.(*ua.Argument); ok {
				out = append(out, *a)
			}
		}
		return out
	}
	for _, c := range []struct {
		node uint32
		want []ua.Argument
	}{
		{id.Server_GetMonitoredItems_InputArguments, []ua.Argument{
			{Name: "SubscriptionId", DataType: nid(id.UInt32), ValueRank: -1},
		}},
		{id.Server_GetMonitoredItems_OutputArguments, []ua.Argument{
			{Name: "ServerHandles", DataType: nid(id.UInt32), ValueRank: 1, ArrayDimensions: []uint32{0}},
			{Name: "ClientHandles", DataType: nid(id.UInt32), ValueRank: 1, ArrayDimensions: []uint32{0}},
		}},
		{id.Server_RequestServerStateChange_InputArguments, []ua.Argument{
			{Name: "State", DataType: nid(id.ServerState), ValueRank: -1},
			{Name: "EstimatedReturnTime", DataType: nid(id.DateTime), ValueRank: -1},
			{Name: "SecondsTillShutdown", DataType: nid(id.UInt32), ValueRank: -1},
			{Name: "Reason", DataType: nid(id.LocalizedText), ValueRank: -1},
			{Name: "Restart", DataType: nid(id.Boolean), ValueRank: -1},
		}},
	} {
		got := args(c.node)
		if !slices.EqualFunc(got, c.want, func(a, b ua.Argument) bool {
			return a.Name == b.Name && a.DataType == b.DataType && a.ValueRank == b.ValueRank &&
				slices.Equal(a.ArrayDimensions, b.ArrayDimensions) && (a.ArrayDimensions == nil) == (b.ArrayDimensions == nil) &&
				a.Description == b.Description
		}) {
			t.Errorf("%s = %+v, want %+v", id.Name(c.node), got, c.want)
		}
	}
}

// TestNS0EnumValues: the EnumValues properties of namespace 0's DataTypes
// hold their EnumValueTypes (nsgen left them null before).
func TestNS0EnumValues(t *testing.T) {
	s := New()
	n := 0
	for id, node := range s.nodes.all() {
		if node.BrowseName.Name != "EnumValues" || id.Namespace != 0 {
			continue
		}
		n++
		eos, ok := node.Value.Value.Value().([]ua.ExtensionObject)
		if !ok || len(eos) == 0 {
			t.Errorf("%v EnumValues: %v", id, node.Value.Value)
			continue
		}
		for i := range eos {
			if ev, ok := eos[i].Body.(*ua.EnumValueType); !ok || ev.DisplayName.Text == "" {
				t.Errorf("%v EnumValues[%d]: %+v", id, i, eos[i].Body)
			}
		}
		if st := s.CheckValue(id, node.Value.Value); st != status.Good {
			t.Errorf("%v EnumValues: CheckValue %v", id, st)
		}
	}
	if n < 10 {
		t.Errorf("%d EnumValues properties in namespace 0", n)
	}
	eos, _ := s.Node(nid(id.NamingRuleType_EnumValues)).Value.Value.Value().([]ua.ExtensionObject)
	if len(eos) != 3 || eos[0].Body.(*ua.EnumValueType).Value != 1 || eos[0].Body.(*ua.EnumValueType).DisplayName.Text != "Mandatory" {
		t.Errorf("NamingRuleType's EnumValues: %+v", eos)
	}
}
