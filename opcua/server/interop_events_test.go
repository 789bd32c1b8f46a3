package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// postedEvent is an event the test posts, its fields by path.
type postedEvent struct {
	typ    ua.NodeID
	fields map[events.Field]*ua.Variant
}

func (e *postedEvent) EventType() ua.NodeID             { return e.typ }
func (e *postedEvent) Field(f events.Field) *ua.Variant { return e.fields[f] }
func (e *postedEvent) ConditionID() *ua.Variant         { return nil }

func newPostedEvent(ty *events.Types, typ uint32, values map[string]any) *postedEvent {
	e := &postedEvent{typ: ua.NewNumericNodeID(0, typ), fields: map[events.Field]*ua.Variant{}}
	values["EventType"] = e.typ
	for p, x := range values {
		v := ua.MustVariant(x)
		e.fields[ty.FieldOf(p)] = &v
	}
	return e
}

// gopcuaSelect selects the BaseEventType fields named paths.
func gopcuaSelect(paths ...string) []*gua.SimpleAttributeOperand {
	var out []*gua.SimpleAttributeOperand
	for _, p := range paths {
		out = append(out, peer.GopcuaField(id.BaseEventType, p))
	}
	return out
}

// TestInteropEvents: gopcua subscribes to the Server object's events with
// a select clause and a where clause (OfType AlarmConditionType and
// Severity ≥ 500) and receives the events the server posts that pass it,
// with the fields it selected; a where clause with a bad element is
// refused with the EventFilterResult saying which.
func TestInteropEvents(t *testing.T) {
	srv, url := startServer(t, server.Config{})
	ctx := testCtx(t)
	c := connect(t, ctx, url)
	defer c.Close(ctx)
	notes := make(chan *opcua.PublishNotificationData, 16)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 10 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel(ctx)
	filter := &gua.EventFilter{SelectClauses: gopcuaSelect("EventType", "SourceName", "Severity", "Message"),
		WhereClause: &gua.ContentFilter{Elements: []*gua.ContentFilterElement{
			{FilterOperator: gua.FilterOperatorAnd, FilterOperands: []*gua.ExtensionObject{
				gua.NewExtensionObject(&gua.ElementOperand{Index: 1}), gua.NewExtensionObject(&gua.ElementOperand{Index: 2})}},
			{FilterOperator: gua.FilterOperatorOfType, FilterOperands: []*gua.ExtensionObject{
				gua.NewExtensionObject(&gua.LiteralOperand{Value: gua.MustVariant(gua.NewNumericNodeID(0, id.AlarmConditionType))})}},
			{FilterOperator: gua.FilterOperatorGreaterThanOrEqual, FilterOperands: []*gua.ExtensionObject{
				gua.NewExtensionObject(gopcuaSelect("Severity")[0]),
				gua.NewExtensionObject(&gua.LiteralOperand{Value: gua.MustVariant(uint16(500))})}},
		}}}
	item := func(handle uint32, f *gua.EventFilter) *gua.MonitoredItemCreateRequest {
		return peer.GopcuaEventItem(gua.NewNumericNodeID(0, id.Server), handle, 10, f.SelectClauses, f.WhereClause)
	}
	bad := &gua.EventFilter{SelectClauses: gopcuaSelect("EventId"), WhereClause: &gua.ContentFilter{Elements: []*gua.ContentFilterElement{
		{FilterOperator: gua.FilterOperatorInView, FilterOperands: []*gua.ExtensionObject{
			gua.NewExtensionObject(&gua.LiteralOperand{Value: gua.MustVariant(gua.NewNumericNodeID(0, id.ObjectsFolder))})}}}}}
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, item(42, filter), item(43, bad))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	if res.Results[1].StatusCode != gua.StatusBadEventFilterInvalid {
		t.Fatalf("InView: %v", res.Results[1].StatusCode)
	}
	efr, ok := res.Results[1].FilterResult.Value.(*gua.EventFilterResult)
	if !ok || len(efr.WhereClauseResult.ElementResults) != 1 || efr.WhereClauseResult.ElementResults[0].StatusCode != gua.StatusBadFilterOperatorUnsupported {
		t.Fatalf("InView's filter result: %#v", res.Results[1].FilterResult.Value)
	}
	ty := srv.EventTypes()
	srv.PostEvent(newPostedEvent(ty, id.ExclusiveLimitAlarmType, map[string]any{"SourceName": "sim.Ramp", "Severity": uint16(100)}))
	srv.PostEvent(newPostedEvent(ty, id.AuditCreateSessionEventType, map[string]any{"SourceName": "Session/CreateSession", "Severity": uint16(900)}))
	srv.PostEvent(newPostedEvent(ty, id.ExclusiveLimitAlarmType, map[string]any{"SourceName": "sim.Sine", "Severity": uint16(700),
		"Message": ua.LocalizedText{Locale: "en", Text: "sim.Sine above 0.9"}}))
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	evs, err := peer.GopcuaNextEvents(wait, notes)
	if err != nil {
		t.Fatalf("no event within 30 s: %v", err)
	}
	var got []string
	for _, e := range evs {
		s := fmt.Sprint(e.ClientHandle, ":")
		for _, f := range e.EventFields {
			s += fmt.Sprint(" ", f.Value())
		}
		got = append(got, s)
	}
	want := "[42: i=9341 sim.Sine 700 &{3 en sim.Sine above 0.9}]" // gopcua: *LocalizedText with its mask
	if fmt.Sprint(got) != want {
		t.Fatalf("events %s, want %s", got, want)
	}
}
