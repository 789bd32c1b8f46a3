package events

import (
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// FuzzCompile: whatever EventFilter a client sends, Compile answers it
// and a compiled filter decides events, without panicking.
func FuzzCompile(f *testing.F) {
	m := newTestModel()
	seed := func(ef ua.EventFilter) { f.Add(ef.Encode(nil)) }
	seed(ua.EventFilter{SelectClauses: []ua.SimpleAttributeOperand{*sao(id.BaseEventType, "EventId")}})
	seed(ua.EventFilter{SelectClauses: []ua.SimpleAttributeOperand{*sao(id.BaseEventType, "Severity")}, WhereClause: ua.ContentFilter{Elements: []ua.ContentFilterElement{
		el(ua.FilterOperatorAnd, elem(1), elem(2)),
		el(ua.FilterOperatorOfType, lit(nid(id.AlarmConditionType))),
		el(ua.FilterOperatorLike, field(id.BaseEventType, "SourceName"), lit("s%[a-z]_")),
	}}})
	seed(ua.EventFilter{SelectClauses: []ua.SimpleAttributeOperand{*sao(id.BaseEventType, "Time")}, WhereClause: ua.ContentFilter{Elements: []ua.ContentFilterElement{
		el(ua.FilterOperatorCast, lit("1e300"), lit(nid(id.Float))),
		el(ua.FilterOperatorBetween, severity(), lit(-1.5), lit("9")),
	}}})
	events := []Event{m.alarm(), m.event(id.AuditCreateSessionEventType, map[string]any{"ClientUserId": "op"})}
	f.Fuzz(func(t *testing.T, b []byte) {
		var ef ua.EventFilter
		d := ua.NewDecoder(b)
		ef.Decode(d)
		if d.Err() != nil {
			return
		}
		flt, _, _ := Compile(m, &ef)
		if flt == nil {
			return
		}
		var out []ua.Variant
		for _, ev := range events {
			if flt.Match(ev) {
				out = flt.Select(ev, out)
			}
		}
	})
}
