package binding

import (
	"testing"

	"github.com/edged/edged/alarms"
	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// TestAlarmEvent: an alarm's change as an event: its type, the fields a
// client selects, all of them fields namespace 0's types declare (none
// numbered anew).
func TestAlarmEvent(t *testing.T) {
	ty := events.NewTypes()
	n := ty.Fields()
	b := &Binding{as: addrspace.New(), ns: 2}
	var st alarms.State
	st.Active, st.Retain, st.Enabled, st.Severity, st.Level, st.Time = true, true, true, 500, alarms.High, 1e18
	cfg := &alarms.Config{Kind: alarms.ExclusiveLimit, Name: "Limit", Source: "sim.Sine", Severity: 500, Message: "sim.Sine above 0.9",
		Limits: alarms.Limits{HighHigh: alarms.NoLimit, High: 0.9, Low: alarms.NoLimit, LowLow: alarms.NoLimit}}
	e, _ := b.AlarmEvent(ty, &alarms.Event{Config: cfg, State: st})
	if ty.Fields() != n {
		t.Fatalf("%d fields numbered anew", ty.Fields()-n)
	}
	if e.EventType() != ua.NewNumericNodeID(0, id.ExclusiveLimitAlarmType) {
		t.Fatalf("type %v", e.EventType())
	}
	for path, want := range map[string]any{
		"SourceName": "sim.Sine", "Severity": uint16(500), "ActiveState/Id": true, "AckedState/Id": false, "Retain": true,
		"HighLimit": 0.9, "ConditionName": "Limit",
	} {
		v := e.Field(ty.FieldOf(path))
		if v == nil || v.Value() != want {
			t.Errorf("%s: %v, want %v", path, v, want)
		}
	}
	// Fields lists every field the event has.
	listed := map[events.Field]bool{}
	for _, f := range e.(events.FieldLister).Fields() {
		listed[f] = true
	}
	for f := range ty.Fields() {
		if e.Field(events.Field(f)) != nil && !listed[events.Field(f)] {
			t.Errorf("%s is not listed", ty.Path(events.Field(f)))
		}
	}
	// The Watch reuses the alarms.Event it delivers: the event keeps its
	// own EventId.
	ev := &alarms.Event{Config: cfg, State: st}
	ev.State.EventID[15] = 1
	e1, _ := b.AlarmEvent(ty, ev)
	ev.State.EventID[15] = 2
	if id, _ := e1.Field(ty.FieldOf("EventId")).ByteString(); len(id) != 16 || id[15] != 1 {
		t.Errorf("EventId %x after the next event, want ...01", id)
	}
	if e.Field(ty.FieldOf("LowLimit")) != nil {
		t.Error("an unset limit is in the event")
	}
	if c, _ := e.ConditionID().NodeIDValue(); c != ua.NewStringNodeID(2, "sim.Sine/Limit") {
		t.Errorf("ConditionId %v", c)
	}
}

// TestConditionNodes: the conditions are objects of their alarm types
// under their devices (HasCondition), with the condition types' methods,
// made anew on each SetConditions.
func TestConditionNodes(t *testing.T) {
	as := addrspace.New()
	ns := as.AddNamespace("urn:test")
	if err := as.AddNode(&addrspace.Node{ID: ua.NewStringNodeID(ns, "sim"), Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{NamespaceIndex: ns, Name: "sim"}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	b := &Binding{as: as, ns: ns}
	if err := b.AddConditionMethods(ConditionMethods{Set: func() *alarms.Set { return nil }}); err != nil {
		t.Fatal(err)
	}
	cs := []alarms.Config{{Kind: alarms.ExclusiveLimit, Name: "Limit", Source: "sim.Sine"}, {Kind: alarms.Communication, Name: "Communication", Source: "sim"}}
	for range 2 {
		if err := b.SetConditions(cs); err != nil {
			t.Fatal(err)
		}
	}
	n := as.Node(ua.NewStringNodeID(ns, "sim.Sine/Limit"))
	if n == nil || n.Class != ua.NodeClassObject {
		t.Fatalf("condition node %+v", n)
	}
	if as.Node(ua.NewNumericNodeID(0, id.AcknowledgeableConditionType_Acknowledge)) == nil {
		t.Fatal("no Acknowledge method")
	}
	if err := b.SetConditions(cs[1:]); err != nil {
		t.Fatal(err)
	}
	if as.Node(ua.NewStringNodeID(ns, "sim.Sine/Limit")) != nil || as.Node(ua.NewStringNodeID(ns, "sim/Communication")) == nil {
		t.Fatal("the conditions were not made anew")
	}
}

// BenchmarkAlarmEvent: one alarm change made into its event.
func BenchmarkAlarmEvent(b *testing.B) {
	ty := events.NewTypes()
	bd := &Binding{as: addrspace.New(), ns: 2}
	var st alarms.State
	st.Active, st.Retain, st.Enabled, st.Severity, st.Level, st.Time = true, true, true, 500, alarms.High, 1e18
	cfg := &alarms.Config{Kind: alarms.ExclusiveLimit, Name: "Limit", Source: "sim.Sine", Severity: 500, Message: "sim.Sine above 0.9",
		Limits: alarms.Limits{HighHigh: alarms.NoLimit, High: 0.9, Low: alarms.NoLimit, LowLow: alarms.NoLimit}}
	ev := &alarms.Event{Cond: 5, Config: cfg, State: st} // not the first condition
	b.ReportAllocs()
	for b.Loop() {
		bd.AlarmEvent(ty, ev)
	}
}

// TestAlarmEventAllocs: after a condition's first event, an event is two
// allocations (itself, and its EventId's header): the fields its
// configuration fixes are made once, whatever the condition's number.
func TestAlarmEventAllocs(t *testing.T) {
	ty := events.NewTypes()
	bd := &Binding{as: addrspace.New(), ns: 2}
	cfg := &alarms.Config{Kind: alarms.OffNormal, Name: "OffNormal", Source: "sim.Bit", Severity: 500}
	ev := &alarms.Event{Cond: 7, Config: cfg}
	if n := testing.AllocsPerRun(100, func() { bd.AlarmEvent(ty, ev) }); n > 2 {
		t.Errorf("%v allocations an event", n)
	}
}
