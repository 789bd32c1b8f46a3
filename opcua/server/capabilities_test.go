package server

import (
	"github.com/edged/edged/opcua/server/internal/subtest"
	"reflect"
	"time"

	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// TestServerValuesFitTheirDataType: every Variable under Objects whose
// Value reads Good has a value, of its DataType and ValueRank; a strict
// client reports a Good null as a wrong DataType.
func TestServerValuesFitTheirDataType(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	_, good := goodObjectValues(t, tc)
	for _, v := range good {
		n := s.as.Node(v.id)
		switch {
		case v.dv.Value.IsNull():
			t.Errorf("%v %s: Good and null", v.id, id.Name(v.id.Numeric))
		case s.as.CheckValue(v.id, v.dv.Value) != status.Good:
			t.Errorf("%v %s: Good with a %v value, not of DataType %v ValueRank %d", v.id, n.BrowseName.Name, v.dv.Value.Type(), n.DataType, n.ValueRank)
		}
	}
	t.Logf("%d Good values", len(good))
}

// TestServerCapabilitiesAreTheLimits: the capabilities a client plans its
// requests by are the limits the server enforces.
func TestServerCapabilitiesAreTheLimits(t *testing.T) {
	built := time.Date(2026, 11, 30, 7, 15, 0, 0, time.UTC)
	s := newTestServer(t, Config{MaxSessions: 7, BuildNumber: "0123abc", BuildDate: built})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	for _, c := range []struct {
		node uint32
		want any
	}{
		{id.Server_ServerCapabilities_MaxArrayLength, uint32(DefaultMaxArrayLength)},
		{id.Server_ServerCapabilities_MaxStringLength, uint32(ua.DefaultLimits.MaxStringLength)},
		{id.Server_ServerCapabilities_MaxByteStringLength, uint32(ua.DefaultLimits.MaxByteStringLength)},
		{id.Server_ServerCapabilities_MaxSessions, uint32(7)},
		{id.Server_ServerDiagnostics_EnabledFlag, false},
		{id.HistoryServerCapabilities_AccessHistoryDataCapability, false}, // no AddHistory
		{id.Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryReadData, uint32(DefaultMaxNodesPerRequest)},
		{id.Server_ServerStatus_BuildInfo_BuildNumber, "0123abc"},
		{id.Server_ServerStatus_BuildInfo_BuildDate, built},
	} {
		r := subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{
			NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, c.node), AttributeID: uint32(ua.AttributeIDValue)}}}))
		if got := r.Results[0].Value.Value(); r.Results[0].Status != status.Good || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %v (%v), want %v", id.Name(c.node), got, r.Results[0].Status, c.want)
		}
	}
	// Absent rather than null: no diagnostics arrays, no limits of
	// services the server does not offer.
	for _, n := range []uint32{
		id.Server_ServerDiagnostics_SubscriptionDiagnosticsArray,
		id.Server_ServerDiagnostics_SessionsDiagnosticsSummary,
		id.Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryReadEvents,
		id.Server_ServerCapabilities_OperationLimits_MaxNodesPerNodeManagement,
	} {
		r := subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{
			NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, n), AttributeID: uint32(ua.AttributeIDBrowseName)}}}))
		if r.Results[0].Status != status.BadNodeIDUnknown {
			t.Errorf("%s: %v, want Bad_NodeIdUnknown", id.Name(n), r.Results[0].Status)
		}
	}
}

// TestEnumValuesOnTheWire: a DataType's EnumValues reads Good as an array
// of EnumValueType over the wire.
func TestEnumValuesOnTheWire(t *testing.T) {
	s := newTestServer(t, Config{})
	tc := newTestConn(t, s, 1)
	tc.openSession()
	r := subtest.WantOK[ua.ReadResponse](t, tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{{
		NodeID: ua.NewNumericNodeID(0, id.NamingRuleType_EnumValues), AttributeID: uint32(ua.AttributeIDValue)}}}))
	eos, _ := r.Results[0].Value.Value().([]ua.ExtensionObject)
	if r.Results[0].Status != status.Good || len(eos) != 3 {
		t.Fatalf("NamingRuleType.EnumValues: %v %v", r.Results[0].Status, r.Results[0].Value)
	}
	if ev, ok := eos[2].Body.(*ua.EnumValueType); !ok || ev.Value != 3 || ev.DisplayName.Text != "Constraint" {
		t.Errorf("EnumValues[2] = %+v", eos[2].Body)
	}
}
