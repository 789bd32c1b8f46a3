package subs

import (
	"fmt"
	"testing"

	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// testEvent is an event with its fields by path.
type testEvent struct {
	typ    ua.NodeID
	fields map[events.Field]*ua.Variant
}

func (e *testEvent) EventType() ua.NodeID             { return e.typ }
func (e *testEvent) Field(f events.Field) *ua.Variant { return e.fields[f] }
func (e *testEvent) ConditionID() *ua.Variant         { return nil }

func newEvent(ty *events.Types, typ uint32, values map[string]any) *testEvent {
	e := &testEvent{typ: ua.NewNumericNodeID(0, typ), fields: map[events.Field]*ua.Variant{}}
	values["EventType"] = e.typ
	for p, x := range values {
		v := ua.MustVariant(x)
		e.fields[ty.FieldOf(p)] = &v
	}
	return e
}

func selectOf(paths ...string) []ua.SimpleAttributeOperand {
	var out []ua.SimpleAttributeOperand
	for _, p := range paths {
		out = append(out, ua.SimpleAttributeOperand{TypeDefinitionID: ua.NewNumericNodeID(0, id.BaseEventType),
			BrowsePath: []ua.QualifiedName{{Name: p}}, AttributeID: uint32(ua.AttributeIDValue)})
	}
	return out
}

func evItemReq(node ua.NodeID, handle, qsize uint32, discardOldest bool, f *ua.EventFilter) ua.MonitoredItemCreateRequest {
	return ua.MonitoredItemCreateRequest{
		ItemToMonitor:  ua.ReadValueID{NodeID: node, AttributeID: uint32(ua.AttributeIDEventNotifier)},
		MonitoringMode: ua.MonitoringModeReporting,
		RequestedParameters: ua.MonitoringParameters{ClientHandle: handle, QueueSize: qsize, DiscardOldest: discardOldest,
			Filter: ua.ExtensionObject{Body: f}},
	}
}

// alarmFilter selects four fields of alarms of severity 500 or more.
func alarmFilter() *ua.EventFilter {
	lit := func(x any) ua.ExtensionObject {
		return ua.ExtensionObject{Body: &ua.LiteralOperand{Value: ua.MustVariant(x)}}
	}
	return &ua.EventFilter{SelectClauses: selectOf("EventType", "SourceName", "Severity", "Message"),
		WhereClause: ua.ContentFilter{Elements: []ua.ContentFilterElement{
			{FilterOperator: ua.FilterOperatorAnd, FilterOperands: []ua.ExtensionObject{{Body: &ua.ElementOperand{Index: 1}}, {Body: &ua.ElementOperand{Index: 2}}}},
			{FilterOperator: ua.FilterOperatorOfType, FilterOperands: []ua.ExtensionObject{lit(ua.NewNumericNodeID(0, id.AlarmConditionType))}},
			{FilterOperator: ua.FilterOperatorGreaterThanOrEqual, FilterOperands: []ua.ExtensionObject{
				{Body: &selectOf("Severity")[0]}, lit(uint16(500))}},
		}}}
}

// eventsOf returns the events of a Publish response, as "handle: fields".
func eventsOf(r *ua.PublishResponse) []string {
	var out []string
	for _, nd := range r.NotificationMessage.NotificationData {
		if l, ok := nd.Body.(*ua.EventNotificationList); ok {
			for _, e := range l.Events {
				s := fmt.Sprintf("%d:", e.ClientHandle)
				for _, f := range e.EventFields {
					s += fmt.Sprintf(" %v", f.Value())
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// publishEvents publishes until a response carries events.
func (tc *testConn) publishEvents() *ua.PublishResponse {
	tc.t.Helper()
	for range 500 {
		if r := tc.publish(); len(eventsOf(r)) > 0 {
			return r
		}
	}
	tc.t.Fatal("no events in 500 Publish responses")
	return nil
}

// TestEventItems: an event item on the Server object receives the events
// its filter passes, with the fields it selects; bad filters are refused
// with their results.
func TestEventItems(t *testing.T) {
	f := newSubFixture(t, Config{})
	m := f.s.subs
	ty := m.events
	server := ua.NewNumericNodeID(0, id.Server)
	sub := f.createSub(10, 100, 1000)
	res := f.createItems(sub,
		evItemReq(server, 7, 10, true, alarmFilter()),
		evItemReq(server, 8, 10, true, &ua.EventFilter{SelectClauses: selectOf("EventId"), WhereClause: ua.ContentFilter{
			Elements: []ua.ContentFilterElement{{FilterOperator: ua.FilterOperatorNot}}}}),
		evItemReq(ua.NewNumericNodeID(0, id.Server_ServerStatus), 9, 10, true, alarmFilter()),
		ua.MonitoredItemCreateRequest{ItemToMonitor: ua.ReadValueID{NodeID: server, AttributeID: uint32(ua.AttributeIDEventNotifier)},
			MonitoringMode: ua.MonitoringModeReporting, RequestedParameters: ua.MonitoringParameters{QueueSize: 1,
				Filter: ua.ExtensionObject{Body: &ua.DataChangeFilter{}}}},
	)
	if res[0].StatusCode != status.Good || res[0].RevisedQueueSize != 10 || res[0].RevisedSamplingInterval != 0 {
		t.Fatalf("event item: %+v", res[0])
	}
	if res[1].StatusCode != status.BadEventFilterInvalid {
		t.Fatalf("a bad where clause: %v", res[1].StatusCode)
	}
	efr, ok := res[1].FilterResult.Body.(*ua.EventFilterResult)
	if !ok || len(efr.WhereClauseResult.ElementResults) != 1 || efr.WhereClauseResult.ElementResults[0].StatusCode != status.BadFilterOperandCountMismatch {
		t.Fatalf("filter result %+v", res[1].FilterResult.Body)
	}
	if res[2].StatusCode != status.BadAttributeIDInvalid {
		t.Fatalf("EventNotifier of a node that notifies nothing: %v", res[2].StatusCode)
	}
	if res[3].StatusCode != status.BadEventFilterInvalid {
		t.Fatalf("a DataChangeFilter on events: %v", res[3].StatusCode)
	}
	alarm := newEvent(ty, id.ExclusiveLimitAlarmType, map[string]any{"SourceName": "sim.Sine", "Severity": uint16(700),
		"Message": ua.LocalizedText{Text: "sim.Sine above 0.9"}})
	low := newEvent(ty, id.ExclusiveLimitAlarmType, map[string]any{"SourceName": "sim.Ramp", "Severity": uint16(100)})
	audit := newEvent(ty, id.AuditCreateSessionEventType, map[string]any{"SourceName": "Session/CreateSession", "Severity": uint16(900)})
	m.PostEvent(low, server)
	m.PostEvent(alarm, server)
	m.PostEvent(audit, server)
	m.PostEvent(alarm, ua.NewStringNodeID(1, "elsewhere"))
	got := eventsOf(f.tc.publishEvents())
	want := []string{"7: i=9341 sim.Sine 700 { sim.Sine above 0.9}"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// TestEventQueueOverflow: a full queue keeps the newest (discardOldest)
// or the oldest events, with one EventQueueOverflowEventType event where
// the first were lost.
func TestEventQueueOverflow(t *testing.T) {
	f := newSubFixture(t, Config{})
	m := f.s.subs
	ty := m.events
	server := ua.NewNumericNodeID(0, id.Server)
	sub := f.createSub(50, 100, 1000)
	all := &ua.EventFilter{SelectClauses: selectOf("EventType", "SourceName")}
	res := f.createItems(sub, evItemReq(server, 1, 3, true, all), evItemReq(server, 2, 3, false, all))
	if res[0].StatusCode != status.Good || res[1].StatusCode != status.Good {
		t.Fatalf("%+v", res)
	}
	m.call(func() {
		for i := range 6 {
			ev := newEvent(ty, id.BaseEventType, map[string]any{"SourceName": fmt.Sprint("e", i)})
			m.deliver(ev, []ua.NodeID{server})
		}
	})
	var got []string
	for len(got) < 6 {
		got = append(got, eventsOf(f.tc.publishEvents())...)
	}
	want := []string{
		"1: i=3035 Internal/EventQueueOverflow", "1: i=2041 e4", "1: i=2041 e5",
		"2: i=2041 e0", "2: i=2041 e1", "2: i=3035 Internal/EventQueueOverflow",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n%q\nwant\n%q", got, want)
	}
	// Emptied, the queues overflow again.
	m.call(func() {
		for i := range 4 {
			m.deliver(newEvent(ty, id.BaseEventType, map[string]any{"SourceName": fmt.Sprint("f", i)}), []ua.NodeID{server})
		}
	})
	got = nil
	for len(got) < 6 {
		got = append(got, eventsOf(f.tc.publishEvents())...)
	}
	if got[0] != "1: i=3035 Internal/EventQueueOverflow" || got[5] != "2: i=3035 Internal/EventQueueOverflow" {
		t.Fatalf("second overflow: %q", got)
	}
}
