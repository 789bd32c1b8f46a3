package events

import (
	"strings"
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

func qpath(s string) []ua.QualifiedName {
	var q []ua.QualifiedName
	for _, p := range strings.Split(s, "/") {
		q = append(q, ua.QualifiedName{Name: p})
	}
	return q
}

// TestTypes: namespace 0's event types from the NodeSet: the hierarchy,
// the fields each type declares or inherits, one Field per path.
func TestTypes(t *testing.T) {
	ty := NewTypes()
	for _, c := range []struct {
		typ  uint32
		ok   bool
		base uint32
		sub  bool
	}{
		{id.BaseEventType, true, id.BaseEventType, true},
		{id.ExclusiveLimitAlarmType, true, id.ConditionType, true},
		{id.OffNormalAlarmType, true, id.AlarmConditionType, true},
		{id.AuditCreateSessionEventType, true, id.AuditSecurityEventType, true},
		{id.AuditCreateSessionEventType, true, id.ConditionType, false},
		{id.CertificateExpirationAlarmType, true, id.SystemOffNormalAlarmType, true},
		{id.EventQueueOverflowEventType, true, id.BaseEventType, true},
		{id.RefreshStartEventType, true, id.SystemEventType, true},
		{id.FolderType, false, id.BaseEventType, false},
	} {
		if got := ty.EventType(nid(c.typ)); got != c.ok {
			t.Errorf("EventType(%d) = %v", c.typ, got)
		}
		if got := ty.Subtype(nid(c.typ), nid(c.base)); got != c.sub {
			t.Errorf("Subtype(%d, %d) = %v", c.typ, c.base, got)
		}
	}
	for _, c := range []struct {
		typ  uint32
		path string
		ok   bool
	}{
		{id.BaseEventType, "Severity", true},
		{id.ExclusiveLimitAlarmType, "Severity", true},
		{id.ExclusiveLimitAlarmType, "ActiveState/Id", true},
		{id.ExclusiveLimitAlarmType, "LimitState/CurrentState/Id", true},
		{id.ExclusiveLimitAlarmType, "HighLimit", true},
		{id.AlarmConditionType, "ShelvingState/CurrentState", true},
		{id.AcknowledgeableConditionType, "AckedState/Id", true},
		{id.BaseEventType, "ActiveState/Id", true}, // a subtype's, named on BaseEventType
		{id.AuditCreateSessionEventType, "ClientUserId", true},
		{id.AuditActivateSessionEventType, "UserIdentityToken", true},
		{id.BaseEventType, "NoSuchField", false},
	} {
		if _, ok := ty.Field(nid(c.typ), qpath(c.path)); ok != c.ok {
			t.Errorf("Field(%d, %s) = %v", c.typ, c.path, ok)
		}
	}
	a, _ := ty.Field(nid(id.AlarmConditionType), qpath("ActiveState/Id"))
	b, _ := ty.Field(nid(id.ExclusiveLimitAlarmType), qpath("ActiveState/Id"))
	if a != b || a != ty.FieldOf("ActiveState/Id") {
		t.Errorf("ActiveState/Id: fields %d, %d, %d", a, b, ty.FieldOf("ActiveState/Id"))
	}
	n := ty.Fields()
	ty.Add(ua.NewStringNodeID(1, "MyEventType"), nid(id.BaseEventType), "1:Extra")
	if _, ok := ty.Field(ua.NewStringNodeID(1, "MyEventType"), []ua.QualifiedName{{NamespaceIndex: 1, Name: "Extra"}}); !ok || ty.Fields() != n+1 {
		t.Errorf("an added type's field: %v, %d fields", ok, ty.Fields())
	}
	t.Logf("%d event types in namespace 0, %d fields", len(ns0EventTypes), n)
}

// TestTypesCompile: the UaExpert-like filter compiles against the real
// types, and a field no event type declares selects null.
func TestTypesCompile(t *testing.T) {
	ty := NewTypes()
	uaExpertFilter(t, ty)
	_, _, code := Compile(ty, &ua.EventFilter{SelectClauses: []ua.SimpleAttributeOperand{*sao(id.ConditionType, "NoSuchField")}})
	if code != status.Good {
		t.Fatal(code)
	}
}
