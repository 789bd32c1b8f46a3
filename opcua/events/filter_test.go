package events

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// testModel: a few of Part 5's and Part 9's event types and their fields.
type testModel struct {
	parent map[uint32]uint32
	fields map[string]testField // by path, "ActiveState/Id"
}

type testField struct {
	f    Field
	decl uint32 // the type that declares it
}

func nid(n uint32) ua.NodeID { return ua.NewNumericNodeID(0, n) }

func newTestModel() *testModel {
	m := &testModel{parent: map[uint32]uint32{
		id.ConditionType:                id.BaseEventType,
		id.AcknowledgeableConditionType: id.ConditionType,
		id.AlarmConditionType:           id.AcknowledgeableConditionType,
		id.LimitAlarmType:               id.AlarmConditionType,
		id.ExclusiveLimitAlarmType:      id.LimitAlarmType,
		id.AuditEventType:               id.BaseEventType,
		id.AuditSecurityEventType:       id.AuditEventType,
		id.AuditSessionEventType:        id.AuditSecurityEventType,
		id.AuditCreateSessionEventType:  id.AuditSessionEventType,
	}, fields: map[string]testField{}}
	for i, f := range []struct {
		path string
		decl uint32
	}{
		{"EventId", id.BaseEventType}, {"EventType", id.BaseEventType}, {"SourceNode", id.BaseEventType},
		{"SourceName", id.BaseEventType}, {"Time", id.BaseEventType}, {"ReceiveTime", id.BaseEventType},
		{"Message", id.BaseEventType}, {"Severity", id.BaseEventType},
		{"ConditionName", id.ConditionType}, {"Retain", id.ConditionType}, {"EnabledState/Id", id.ConditionType},
		{"ActiveState", id.AlarmConditionType}, {"ActiveState/Id", id.AlarmConditionType},
		{"AckedState/Id", id.AcknowledgeableConditionType},
		{"ClientUserId", id.AuditEventType}, {"Status", id.AuditEventType},
	} {
		m.fields[f.path] = testField{Field(i), f.decl}
	}
	return m
}

func (m *testModel) isEvent(t uint32) bool {
	_, ok := m.parent[t]
	return ok || t == id.BaseEventType
}

func (m *testModel) EventType(t ua.NodeID) bool {
	return t.Namespace == 0 && t.Type == ua.IDNumeric && m.isEvent(t.Numeric)
}

func (m *testModel) Subtype(t, base ua.NodeID) bool {
	if t.Namespace != 0 || base.Namespace != 0 || t.Type != ua.IDNumeric || base.Type != ua.IDNumeric {
		return t == base
	}
	for n := t.Numeric; ; {
		if n == base.Numeric {
			return true
		}
		p, ok := m.parent[n]
		if !ok {
			return false
		}
		n = p
	}
}

func (m *testModel) Field(typ ua.NodeID, path []ua.QualifiedName) (Field, bool) {
	var b strings.Builder
	for i, q := range path {
		if q.NamespaceIndex != 0 {
			return 0, false
		}
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(q.Name)
	}
	d, ok := m.fields[b.String()]
	if !ok || !m.Subtype(typ, nid(d.decl)) {
		return 0, false
	}
	return d.f, true
}

// testEvent is an event of the model.
type testEvent struct {
	typ    ua.NodeID
	fields map[Field]*ua.Variant
	cond   *ua.Variant
}

func (e *testEvent) EventType() ua.NodeID      { return e.typ }
func (e *testEvent) Field(f Field) *ua.Variant { return e.fields[f] }
func (e *testEvent) ConditionID() *ua.Variant  { return e.cond }

func (m *testModel) event(typ uint32, values map[string]any) *testEvent {
	e := &testEvent{typ: nid(typ), fields: map[Field]*ua.Variant{}}
	for path, x := range values {
		v := ua.MustVariant(x)
		if path == "ConditionId" {
			e.cond = &v
			continue
		}
		e.fields[m.fields[path].f] = &v
	}
	tv := ua.MustVariant(nid(typ))
	e.fields[m.fields["EventType"].f] = &tv
	return e
}

// alarm is a High limit alarm of sim.Sine, active, not acknowledged.
func (m *testModel) alarm() *testEvent {
	return m.event(id.ExclusiveLimitAlarmType, map[string]any{
		"EventId": []byte{1, 2, 3}, "SourceName": "sim.Sine", "Severity": uint16(700),
		"Message":        ua.LocalizedText{Locale: "en", Text: "sim.Sine above 0.9"},
		"Time":           time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC),
		"ActiveState":    ua.LocalizedText{Locale: "en", Text: "High"},
		"ActiveState/Id": true, "AckedState/Id": false, "Retain": true,
		"ConditionName": "High", "ConditionId": ua.NewStringNodeID(2, "sim.Sine/High"),
	})
}

// Operand constructors.
func lit(x any) ua.ExtensionObject {
	return ua.ExtensionObject{Body: &ua.LiteralOperand{Value: ua.MustVariant(x)}}
}
func elem(i uint32) ua.ExtensionObject {
	return ua.ExtensionObject{Body: &ua.ElementOperand{Index: i}}
}
func field(typ uint32, path string) ua.ExtensionObject {
	return ua.ExtensionObject{Body: sao(typ, path)}
}
func sao(typ uint32, path string) *ua.SimpleAttributeOperand {
	o := &ua.SimpleAttributeOperand{TypeDefinitionID: nid(typ), AttributeID: uint32(ua.AttributeIDValue)}
	if path != "" {
		for _, p := range strings.Split(path, "/") {
			o.BrowsePath = append(o.BrowsePath, ua.QualifiedName{Name: p})
		}
	}
	return o
}
func el(op ua.FilterOperator, ops ...ua.ExtensionObject) ua.ContentFilterElement {
	return ua.ContentFilterElement{FilterOperator: op, FilterOperands: ops}
}

func severity() ua.ExtensionObject { return field(id.BaseEventType, "Severity") }

// whereOf compiles a filter selecting the EventId with where clause els.
func whereOf(t *testing.T, m Model, els ...ua.ContentFilterElement) *Filter {
	t.Helper()
	f, res, code := Compile(m, &ua.EventFilter{SelectClauses: []ua.SimpleAttributeOperand{*sao(id.BaseEventType, "EventId")},
		WhereClause: ua.ContentFilter{Elements: els}})
	if code != status.Good {
		t.Fatalf("compile: %v %+v", code, res)
	}
	return f
}

// truth evaluates where clause els on ev as the first element's value:
// "TRUE", "FALSE" or "NULL" (a non-Boolean result, as Bitwise gives, is
// its value).
func truth(t *testing.T, m *testModel, ev Event, els ...ua.ContentFilterElement) string {
	t.Helper()
	f := whereOf(t, m, els...)
	f.mu.Lock()
	for _, i := range f.order {
		f.res[i] = f.eval(&f.where[i], ev)
	}
	r := f.res[0]
	f.mu.Unlock()
	if r.t == ua.TypeNull {
		return "NULL"
	}
	if r.t == ua.TypeBoolean {
		if r.n != 0 {
			return "TRUE"
		}
		return "FALSE"
	}
	var v ua.Variant
	r.toVariant(&v)
	return fmt.Sprintf("%v(%v)", v.Type(), v.Value())
}

// TestWhereOperators: every operator of the Standard Event Subscription
// facet on an alarm event, with the conversions between types, missing
// fields (NULL) and the three-valued logic.
func TestWhereOperators(t *testing.T) {
	m := newTestModel()
	ev := m.alarm()
	missing := field(id.AuditEventType, "ClientUserId") // the alarm has none
	type tc struct {
		name string
		els  []ua.ContentFilterElement
		want string
	}
	E := ua.FilterOperatorEquals
	cases := []tc{
		{"Equals UInt16 field, UInt16", []ua.ContentFilterElement{el(E, severity(), lit(uint16(700)))}, "TRUE"},
		{"Equals UInt16 field, Int32 (converted to Int32)", []ua.ContentFilterElement{el(E, severity(), lit(int32(700)))}, "TRUE"},
		{"Equals UInt16 field, Double", []ua.ContentFilterElement{el(E, severity(), lit(700.0))}, "TRUE"},
		{"Equals UInt16 field, String \"700\" (String to UInt16)", []ua.ContentFilterElement{el(E, severity(), lit("700"))}, "TRUE"},
		{"Equals UInt16 field, String \"abc\" (no conversion)", []ua.ContentFilterElement{el(E, severity(), lit("abc"))}, "FALSE"},
		{"Equals UInt16 field, Int32 -1 (out of range)", []ua.ContentFilterElement{el(E, severity(), lit(int32(-1)))}, "FALSE"},
		{"Equals LocalizedText field, String (text)", []ua.ContentFilterElement{el(E, field(id.BaseEventType, "Message"), lit("sim.Sine above 0.9"))}, "TRUE"},
		{"Equals String case-sensitive", []ua.ContentFilterElement{el(E, field(id.BaseEventType, "SourceName"), lit("SIM.SINE"))}, "FALSE"},
		{"Equals ConditionId, NodeId", []ua.ContentFilterElement{el(E, ua.ExtensionObject{Body: &ua.SimpleAttributeOperand{TypeDefinitionID: nid(id.ConditionType), AttributeID: uint32(ua.AttributeIDNodeID)}}, lit(ua.NewStringNodeID(2, "sim.Sine/High")))}, "TRUE"},
		{"Equals NodeId, String (NodeId to String)", []ua.ContentFilterElement{el(E, field(id.BaseEventType, "EventType"), lit("i=9341"))}, "TRUE"},
		{"Equals Boolean field, Boolean", []ua.ContentFilterElement{el(E, field(id.AlarmConditionType, "ActiveState/Id"), lit(true))}, "TRUE"},
		{"Equals Boolean field, Int32 1 (Boolean to Int32)", []ua.ContentFilterElement{el(E, field(id.AlarmConditionType, "ActiveState/Id"), lit(int32(1)))}, "TRUE"},
		{"Equals ByteString", []ua.ContentFilterElement{el(E, field(id.BaseEventType, "EventId"), lit([]byte{1, 2, 3}))}, "TRUE"},
		{"Equals missing field", []ua.ContentFilterElement{el(E, missing, lit("x"))}, "NULL"},
		{"Equals field of a subtype the alarm is not", []ua.ContentFilterElement{el(E, field(id.AuditEventType, "Status"), lit(true))}, "NULL"},
		{"IsNull missing field", []ua.ContentFilterElement{el(ua.FilterOperatorIsNull, missing)}, "TRUE"},
		{"IsNull present field", []ua.ContentFilterElement{el(ua.FilterOperatorIsNull, severity())}, "FALSE"},
		{"GreaterThan UInt16, UInt16", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThan, severity(), lit(uint16(500)))}, "TRUE"},
		{"GreaterThan UInt16, Double 700.5", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThan, severity(), lit(700.5))}, "FALSE"},
		{"GreaterThan String (not ordered)", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThan, field(id.BaseEventType, "SourceName"), lit("a"))}, "FALSE"},
		{"GreaterThan DateTime", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThan, field(id.BaseEventType, "Time"), lit(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))}, "TRUE"},
		{"GreaterThan missing field", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThan, missing, lit(int32(1)))}, "NULL"},
		{"LessThan Int64 literal", []ua.ContentFilterElement{el(ua.FilterOperatorLessThan, severity(), lit(int64(701)))}, "TRUE"},
		{"GreaterThanOrEqual equal", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThanOrEqual, severity(), lit(uint16(700)))}, "TRUE"},
		{"LessThanOrEqual Float", []ua.ContentFilterElement{el(ua.FilterOperatorLessThanOrEqual, severity(), lit(float32(699.5)))}, "FALSE"},
		{"Like % and _", []ua.ContentFilterElement{el(ua.FilterOperatorLike, field(id.BaseEventType, "SourceName"), lit("sim.S_ne%"))}, "TRUE"},
		{"Like [list]", []ua.ContentFilterElement{el(ua.FilterOperatorLike, field(id.BaseEventType, "SourceName"), lit("[rs]im.%"))}, "TRUE"},
		{"Like [^list]", []ua.ContentFilterElement{el(ua.FilterOperatorLike, field(id.BaseEventType, "SourceName"), lit("[^s]im.%"))}, "FALSE"},
		{"Like on LocalizedText (to String)", []ua.ContentFilterElement{el(ua.FilterOperatorLike, field(id.BaseEventType, "Message"), lit("%0.9"))}, "TRUE"},
		{"Like on a number (no implicit String)", []ua.ContentFilterElement{el(ua.FilterOperatorLike, severity(), lit("7%"))}, "FALSE"},
		{"Not TRUE", []ua.ContentFilterElement{el(ua.FilterOperatorNot, elem(1)), el(E, severity(), lit(uint16(700)))}, "FALSE"},
		{"Not FALSE", []ua.ContentFilterElement{el(ua.FilterOperatorNot, elem(1)), el(E, severity(), lit(uint16(1)))}, "TRUE"},
		{"Not NULL", []ua.ContentFilterElement{el(ua.FilterOperatorNot, elem(1)), el(E, missing, lit("x"))}, "NULL"},
		{"Between inside", []ua.ContentFilterElement{el(ua.FilterOperatorBetween, severity(), lit(int32(500)), lit(800.0))}, "TRUE"},
		{"Between at the bounds", []ua.ContentFilterElement{el(ua.FilterOperatorBetween, severity(), lit(uint16(700)), lit(uint16(700)))}, "TRUE"},
		{"Between outside", []ua.ContentFilterElement{el(ua.FilterOperatorBetween, severity(), lit(int32(1)), lit(int32(699)))}, "FALSE"},
		{"Between missing", []ua.ContentFilterElement{el(ua.FilterOperatorBetween, missing, lit(int32(1)), lit(int32(2)))}, "NULL"},
		{"InList found", []ua.ContentFilterElement{el(ua.FilterOperatorInList, severity(), lit(int32(100)), lit(int32(700)), lit("900"))}, "TRUE"},
		{"InList not found", []ua.ContentFilterElement{el(ua.FilterOperatorInList, severity(), lit(int32(100)), lit(int32(200)))}, "FALSE"},
		{"And TRUE TRUE", []ua.ContentFilterElement{el(ua.FilterOperatorAnd, elem(1), elem(2)), el(E, severity(), lit(uint16(700))), el(ua.FilterOperatorOfType, lit(nid(id.AlarmConditionType)))}, "TRUE"},
		{"And TRUE NULL", []ua.ContentFilterElement{el(ua.FilterOperatorAnd, elem(1), elem(2)), el(E, severity(), lit(uint16(700))), el(E, missing, lit("x"))}, "NULL"},
		{"And FALSE NULL", []ua.ContentFilterElement{el(ua.FilterOperatorAnd, elem(1), elem(2)), el(E, severity(), lit(uint16(1))), el(E, missing, lit("x"))}, "FALSE"},
		{"Or FALSE NULL", []ua.ContentFilterElement{el(ua.FilterOperatorOr, elem(1), elem(2)), el(E, severity(), lit(uint16(1))), el(E, missing, lit("x"))}, "NULL"},
		{"Or TRUE NULL", []ua.ContentFilterElement{el(ua.FilterOperatorOr, elem(1), elem(2)), el(E, severity(), lit(uint16(700))), el(E, missing, lit("x"))}, "TRUE"},
		{"Or FALSE FALSE", []ua.ContentFilterElement{el(ua.FilterOperatorOr, elem(1), elem(2)), el(E, severity(), lit(uint16(1))), el(E, severity(), lit(uint16(2)))}, "FALSE"},
		{"And of a non-Boolean literal", []ua.ContentFilterElement{el(ua.FilterOperatorAnd, lit(int32(1)), lit(true))}, "NULL"},
		{"Cast UInt16 to String", []ua.ContentFilterElement{el(E, elem(1), lit("700")), el(ua.FilterOperatorCast, severity(), lit(nid(id.String)))}, "TRUE"},
		{"Cast String to Double", []ua.ContentFilterElement{el(ua.FilterOperatorCast, lit("2.5"), lit(nid(id.Double)))}, "Double(2.5)"},
		{"Cast Double to Int32 rounds", []ua.ContentFilterElement{el(ua.FilterOperatorCast, lit(2.5), lit(nid(id.Int32)))}, "Int32(3)"},
		{"Cast Int32 to Byte out of range", []ua.ContentFilterElement{el(ua.FilterOperatorCast, lit(int32(300)), lit(nid(id.Byte)))}, "NULL"},
		{"Cast Int32 to Boolean", []ua.ContentFilterElement{el(ua.FilterOperatorCast, lit(int32(2)), lit(nid(id.Boolean)))}, "TRUE"},
		{"OfType the type itself", []ua.ContentFilterElement{el(ua.FilterOperatorOfType, lit(nid(id.ExclusiveLimitAlarmType)))}, "TRUE"},
		{"OfType a supertype", []ua.ContentFilterElement{el(ua.FilterOperatorOfType, lit(nid(id.AlarmConditionType)))}, "TRUE"},
		{"OfType another branch", []ua.ContentFilterElement{el(ua.FilterOperatorOfType, lit(nid(id.AuditEventType)))}, "FALSE"},
		{"BitwiseAnd", []ua.ContentFilterElement{el(ua.FilterOperatorBitwiseAnd, severity(), lit(uint16(0x0F0)))}, "UInt16(176)"},
		{"BitwiseOr Int32 and UInt16", []ua.ContentFilterElement{el(ua.FilterOperatorBitwiseOr, lit(int32(1)), severity())}, "Int32(701)"},
		{"BitwiseAnd of a Double", []ua.ContentFilterElement{el(ua.FilterOperatorBitwiseAnd, lit(1.5), lit(int32(1)))}, "NULL"},
		{"BitwiseAnd compared", []ua.ContentFilterElement{el(ua.FilterOperatorGreaterThan, elem(1), lit(int32(0))), el(ua.FilterOperatorBitwiseAnd, severity(), lit(uint16(4)))}, "TRUE"},
		{"an element not reached is not evaluated", []ua.ContentFilterElement{el(E, severity(), lit(uint16(700))), el(ua.FilterOperatorNot, lit(int32(7)))}, "TRUE"},
		{"a shared element", []ua.ContentFilterElement{el(ua.FilterOperatorAnd, elem(1), elem(2)), el(ua.FilterOperatorNot, elem(3)), el(ua.FilterOperatorNot, elem(3)), el(E, severity(), lit(uint16(1)))}, "TRUE"},
	}
	for _, c := range cases {
		if got := truth(t, m, ev, c.els...); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	t.Logf("%d where clauses evaluated", len(cases))
}

// TestMatchAndSelect: a UaExpert-like filter (its select clauses, OfType
// AlarmConditionType and Severity ≥ 500) passes the alarm and selects its
// fields, null for those it has not; other events do not pass.
func TestMatchAndSelect(t *testing.T) {
	m := newTestModel()
	f := uaExpertFilter(t, m)
	ev := m.alarm()
	if !f.Match(ev) {
		t.Fatal("the alarm does not pass")
	}
	out := f.Select(ev, nil)
	want := []string{"[1 2 3]", "i=9341", "<nil>", "sim.Sine", "2026-12-06 06:00:00 +0000 UTC", "<nil>", "{en sim.Sine above 0.9}", "700", "ns=2;s=sim.Sine/High", "true", "false"}
	if len(out) != len(want) {
		t.Fatalf("%d fields, want %d", len(out), len(want))
	}
	for i := range out {
		if got := fmt.Sprint(out[i].Value()); got != want[i] {
			t.Errorf("field %d: %s, want %s", i, got, want[i])
		}
	}
	low := m.alarm()
	v := ua.MustVariant(uint16(100))
	low.fields[m.fields["Severity"].f] = &v
	audit := m.event(id.AuditCreateSessionEventType, map[string]any{"Severity": uint16(900), "ClientUserId": "op"})
	if f.Match(low) || f.Match(audit) {
		t.Fatal("an event of low severity or of another type passes")
	}
	if empty := whereOf(t, m); !empty.Match(audit) {
		t.Fatal("an empty where clause does not pass every event")
	}
}

func uaExpertFilter(t testing.TB, m Model) *Filter {
	var sel []ua.SimpleAttributeOperand
	for _, p := range []struct {
		typ  uint32
		path string
	}{{id.BaseEventType, "EventId"}, {id.BaseEventType, "EventType"}, {id.BaseEventType, "SourceNode"}, {id.BaseEventType, "SourceName"},
		{id.BaseEventType, "Time"}, {id.BaseEventType, "ReceiveTime"}, {id.BaseEventType, "Message"}, {id.BaseEventType, "Severity"}} {
		sel = append(sel, *sao(p.typ, p.path))
	}
	sel = append(sel, ua.SimpleAttributeOperand{TypeDefinitionID: nid(id.ConditionType), AttributeID: uint32(ua.AttributeIDNodeID)},
		*sao(id.AlarmConditionType, "ActiveState/Id"), *sao(id.AcknowledgeableConditionType, "AckedState/Id"))
	f, res, code := Compile(m, &ua.EventFilter{SelectClauses: sel, WhereClause: ua.ContentFilter{Elements: []ua.ContentFilterElement{
		el(ua.FilterOperatorAnd, elem(1), elem(2)),
		el(ua.FilterOperatorOfType, lit(nid(id.AlarmConditionType))),
		el(ua.FilterOperatorGreaterThanOrEqual, severity(), lit(uint16(500))),
	}}})
	if code != status.Good {
		t.Fatalf("compile: %v %+v", code, res)
	}
	return f
}

// TestCompileStatuses: what a bad filter gets, clause by clause and
// operand by operand (OPC 10000-4 §7.7 and §7.22.3).
func TestCompileStatuses(t *testing.T) {
	m := newTestModel()
	good := *sao(id.BaseEventType, "EventId")
	type tc struct {
		name    string
		sel     []ua.SimpleAttributeOperand
		els     []ua.ContentFilterElement
		code    ua.StatusCode
		selects []ua.StatusCode // nil: not looked at
		element ua.StatusCode   // of the last element
		ops     []ua.StatusCode // of the last element
	}
	cases := []tc{
		{name: "no select clause", code: status.BadEventFilterInvalid},
		{name: "65 elements", sel: []ua.SimpleAttributeOperand{good}, els: make([]ua.ContentFilterElement, 65), code: status.BadEventFilterInvalid},
		{name: "unknown path selects null", sel: []ua.SimpleAttributeOperand{*sao(id.BaseEventType, "NoSuchField")}, code: status.Good},
		{name: "path of a subtype's field on BaseEventType selects null", sel: []ua.SimpleAttributeOperand{*sao(id.BaseEventType, "ActiveState/Id")}, code: status.Good},
		{name: "type not an event type", sel: []ua.SimpleAttributeOperand{good, *sao(id.FolderType, "EventId")}, code: status.BadEventFilterInvalid,
			selects: []ua.StatusCode{status.Good, status.BadTypeDefinitionInvalid}},
		{name: "attribute DisplayName", sel: []ua.SimpleAttributeOperand{{TypeDefinitionID: nid(id.BaseEventType), AttributeID: uint32(ua.AttributeIDDisplayName)}},
			code: status.BadEventFilterInvalid, selects: []ua.StatusCode{status.BadAttributeIDInvalid}},
		{name: "index range", sel: []ua.SimpleAttributeOperand{{TypeDefinitionID: nid(id.BaseEventType), AttributeID: uint32(ua.AttributeIDValue),
			BrowsePath: []ua.QualifiedName{{Name: "EventId"}}, IndexRange: "x:y"}}, code: status.BadEventFilterInvalid, selects: []ua.StatusCode{status.BadIndexRangeInvalid}},
		{name: "empty browse name", sel: []ua.SimpleAttributeOperand{{TypeDefinitionID: nid(id.BaseEventType), AttributeID: uint32(ua.AttributeIDValue),
			BrowsePath: []ua.QualifiedName{{}}}}, code: status.BadEventFilterInvalid, selects: []ua.StatusCode{status.BadBrowseNameInvalid}},
		{name: "operator 18", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(18, lit(int32(1)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperatorInvalid},
		{name: "Equals with one operand", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorEquals, lit(int32(1)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandCountMismatch},
		{name: "Not with two", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorNot, lit(true), lit(true))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandCountMismatch},
		{name: "InList with one", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorInList, lit(int32(1)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandCountMismatch},
		{name: "InView", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorInView, lit(nid(id.ObjectsFolder)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperatorUnsupported},
		{name: "RelatedTo", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorRelatedTo, lit(int32(1)), lit(int32(1)), lit(int32(1)), lit(int32(1)), lit(int32(1)), lit(int32(1)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperatorUnsupported},
		{name: "element operand to itself", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorNot, elem(0))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterElementInvalid}},
		{name: "element operand backwards (a loop)", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorNot, elem(1)), el(ua.FilterOperatorNot, elem(0))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterElementInvalid}},
		{name: "element operand beyond the last", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorAnd, lit(true), elem(5))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.Good, status.BadFilterElementInvalid}},
		{name: "AttributeOperand", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorIsNull, ua.ExtensionObject{Body: &ua.AttributeOperand{NodeID: nid(id.Server)}})},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterOperandInvalid}},
		{name: "operand not a FilterOperand", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorIsNull, ua.ExtensionObject{})},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterOperandInvalid}},
		{name: "bad operand field", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorIsNull, field(id.FolderType, "EventId"))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadTypeDefinitionInvalid}},
		{name: "OfType of a String", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorOfType, lit("AlarmConditionType"))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterOperandInvalid}},
		{name: "OfType of an object type", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorOfType, lit(nid(id.FolderType)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterOperandInvalid}},
		{name: "OfType of a field", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorOfType, field(id.BaseEventType, "EventType"))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.BadFilterOperandInvalid}},
		{name: "Cast to a structure", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorCast, lit(int32(1)), lit(nid(id.ReadRequest)))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.Good, status.BadFilterOperandInvalid}},
		{name: "Cast to a String literal", sel: []ua.SimpleAttributeOperand{good}, els: []ua.ContentFilterElement{el(ua.FilterOperatorCast, lit(int32(1)), lit("Double"))},
			code: status.BadEventFilterInvalid, element: status.BadFilterOperandInvalid, ops: []ua.StatusCode{status.Good, status.BadFilterOperandInvalid}},
	}
	for _, c := range cases {
		f, res, code := Compile(m, &ua.EventFilter{SelectClauses: c.sel, WhereClause: ua.ContentFilter{Elements: c.els}})
		if code != c.code || (code == status.Good) != (f != nil) {
			t.Errorf("%s: %v (filter %v), want %v", c.name, code, f != nil, c.code)
			continue
		}
		if code == status.Good {
			if len(res.SelectClauseResults) != 0 || len(res.WhereClauseResult.ElementResults) != 0 {
				t.Errorf("%s: results %+v for a good filter", c.name, res)
			}
			continue
		}
		if c.selects != nil && fmt.Sprint(res.SelectClauseResults) != fmt.Sprint(c.selects) {
			t.Errorf("%s: select results %v, want %v", c.name, res.SelectClauseResults, c.selects)
		}
		if len(c.els) > 0 && len(c.els) <= MaxElements {
			er := res.WhereClauseResult.ElementResults
			if len(er) != len(c.els) {
				t.Errorf("%s: %d element results, want %d", c.name, len(er), len(c.els))
				continue
			}
			last := er[len(er)-1]
			if last.StatusCode != c.element || c.ops != nil && fmt.Sprint(last.OperandStatusCodes) != fmt.Sprint(c.ops) {
				t.Errorf("%s: element %v operands %v, want %v %v", c.name, last.StatusCode, last.OperandStatusCodes, c.element, c.ops)
			}
		}
	}
}

// TestLike: the wildcards of OPC 10000-4 §7.7.3.
func TestLike(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"", "", true}, {"", "%", true}, {"a", "", false}, {"abc", "abc", true}, {"abc", "ab", false},
		{"abc", "a%", true}, {"abc", "%c", true}, {"abc", "%b%", true}, {"abc", "%d%", false}, {"abc", "a_c", true},
		{"ac", "a_c", false}, {"abc", "___", true}, {"abc", "[a-c]bc", true}, {"dbc", "[a-c]bc", false},
		{"dbc", "[^a-c]bc", true}, {"a%c", `a\%c`, true}, {"abc", `a\%c`, false}, {"a_c", `a\_c`, true},
		{"[x", "[x", true}, {"a]", "a]", true}, {"]", "[]]", true}, {"x", "[]]", false},
		{"Müller", "M_ller", true}, {"aaab", "%a%b", true}, {"aaaa", "%a%b", false}, {"a\\", `a\`, true},
		{"mississippi", "m%iss%pi", true}, {"mississippi", "m%iss%ppx", false},
	} {
		if got := like(c.s, c.p); got != c.want {
			t.Errorf("like(%q, %q) = %v", c.s, c.p, got)
		}
	}
}

// TestMatchAllocs: deciding an event and selecting its fields allocate
// nothing.
func TestMatchAllocs(t *testing.T) {
	m := newTestModel()
	f := uaExpertFilter(t, m)
	ev := m.alarm()
	out := make([]ua.Variant, 0, 16)
	if a := testing.AllocsPerRun(1000, func() {
		if f.Match(ev) {
			out = f.Select(ev, out)
		}
	}); a != 0 {
		t.Fatalf("%v allocations per event", a)
	}
	// Into a new slice (a queued event's fields): one allocation.
	if a := testing.AllocsPerRun(1000, func() { out = f.Select(ev, nil) }); a != 1 {
		t.Fatalf("Select into nil: %v allocations, want 1", a)
	}
}

// BenchmarkMatch: the UaExpert-like filter deciding an alarm and
// selecting its 11 fields.
func BenchmarkMatch(b *testing.B) {
	m := newTestModel()
	f := uaExpertFilter(b, m)
	ev := m.alarm()
	out := make([]ua.Variant, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		if f.Match(ev) {
			out = f.Select(ev, out)
		}
	}
}
