package server

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// memEvents is an EventStore in memory, with the store's rule: a time not
// after the last is moved after it.
type memEvents struct {
	mu   sync.Mutex
	ts   []int64
	recs [][]byte
}

func (m *memEvents) AppendEvent(t int64, rec []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.ts); n > 0 && t <= m.ts[n-1] {
		t = m.ts[n-1] + 1
	}
	m.ts = append(m.ts, t)
	m.recs = append(m.recs, slices.Clone(rec))
	return nil
}

func (m *memEvents) ScanEvents(from, to int64, reverse bool, fn func(int64, []byte) bool) error {
	m.mu.Lock()
	ts, recs := slices.Clone(m.ts), slices.Clone(m.recs)
	m.mu.Unlock()
	idx := make([]int, 0, len(ts))
	for i, t := range ts {
		if t >= from && t <= to {
			idx = append(idx, i)
		}
	}
	if reverse {
		slices.Reverse(idx)
	}
	for _, i := range idx {
		if !fn(ts[i], recs[i]) {
			break
		}
	}
	return nil
}

// eventFilter selects paths (of BaseEventType) where the event is of
// type typ (OfType), no where clause for 0.
func eventFilter(typ uint32, paths ...string) ua.EventFilter {
	var f ua.EventFilter
	for _, p := range paths {
		f.SelectClauses = append(f.SelectClauses, ua.SimpleAttributeOperand{TypeDefinitionID: ua.NewNumericNodeID(0, id.BaseEventType),
			BrowsePath: []ua.QualifiedName{{Name: p}}, AttributeID: uint32(ua.AttributeIDValue)})
	}
	if typ != 0 {
		f.WhereClause.Elements = []ua.ContentFilterElement{{FilterOperator: ua.FilterOperatorOfType,
			FilterOperands: []ua.ExtensionObject{{Body: &ua.LiteralOperand{Value: ua.MustVariant(ua.NewNumericNodeID(0, typ))}}}}}
	}
	return f
}

// TestEventHistory: the events posted are read back by HistoryRead with
// ReadEventDetails, on the Server object and on the notifier they went
// to: filtered, selected, forward and backward, in pieces with
// continuation points; audit events only for SecurityAdmin and Auditor
// sessions; a node that keeps no event history is
// Bad_HistoryOperationUnsupported; a corrupt record is left out.
func TestEventHistory(t *testing.T) {
	store := &memEvents{}
	t0 := time.Date(2020, 1, 2, 8, 0, 0, 0, time.UTC) // before the sessions' own audit events
	s := newTestServer(t, Config{Audit: func([]byte) {}})
	dev := ua.NewStringNodeID(1, "dev")
	if err := s.as.AddNode(&addrspace.Node{ID: dev, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "dev"}, EventNotifier: 1},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetEventHistory(store, dev); err != nil {
		t.Fatal(err)
	}
	ev := func(typ uint32, i int, audit bool) events.Event {
		e := plainEvent{typ: ua.NewNumericNodeID(0, typ), fields: map[events.Field]*ua.Variant{}}
		set := func(p string, v ua.Variant) { e.fields[s.events.FieldOf(p)] = &v }
		set("EventType", ua.MustVariant(e.typ))
		set("Time", ua.MustVariant(t0.Add(time.Duration(i)*time.Second)))
		set("Message", ua.MustVariant(ua.LocalizedText{Text: fmt.Sprint("event ", i)}))
		set("Severity", ua.MustVariant(uint16(100+i)))
		if audit {
			return &auditEvent{e}
		}
		return &e
	}
	// 30 alarm events to dev (the Server gets every one), 10 audit events.
	for i := range 30 {
		s.PostEvent(ev(id.ExclusiveLimitAlarmType, i, false), dev)
	}
	for i := 30; i < 40; i++ {
		s.PostEvent(ev(id.AuditActivateSessionEventType, i, true))
	}
	store.AppendEvent(t0.Add(time.Hour).UnixNano(), []byte{eventRecordVersion, 0, 0xff}) // corrupt

	sessionWith := func(roles Roles) *testConn {
		tc := newTestConn(t, s, 7)
		tc.openSession()
		sess := s.sessions.get(tc.token)
		sess.roles.Store(uint32(roles))
		return tc
	}
	observer := sessionWith(RolesOf(RoleAuthenticatedUser, RoleObserver))
	auditor := sessionWith(RolesOf(RoleAuthenticatedUser, RoleAuditor))
	read := func(tc *testConn, node ua.NodeID, d ua.ReadEventDetails, cp []byte) ua.HistoryReadResult {
		t.Helper()
		resp := subtest.WantOK[ua.HistoryReadResponse](t, tc.call(&ua.HistoryReadRequest{
			HistoryReadDetails: ua.ExtensionObject{Body: &d}, TimestampsToReturn: ua.TimestampsToReturnSource,
			NodesToRead: []ua.HistoryReadValueID{{NodeID: node, ContinuationPoint: cp}}}))
		return resp.Results[0]
	}
	messages := func(r ua.HistoryReadResult) []string {
		var out []string
		if he, ok := r.HistoryData.Body.(*ua.HistoryEvent); ok {
			for _, e := range he.Events {
				lt, _ := e.EventFields[0].Value().(ua.LocalizedText)
				out = append(out, lt.Text)
			}
		}
		return out
	}
	all := ua.ReadEventDetails{StartTime: t0, EndTime: t0.Add(2 * time.Hour), Filter: eventFilter(0, "Message")}
	server := ua.NewNumericNodeID(0, id.Server)

	// The Observer: the 30 alarm events on the Server and on dev, no
	// audit event; the Auditor all 40 on the Server.
	for _, c := range []struct {
		who  string
		tc   *testConn
		node ua.NodeID
		want int
	}{{"observer", observer, server, 30}, {"observer", observer, dev, 30}, {"auditor", auditor, server, 40}, {"auditor", auditor, dev, 30}} {
		r := read(c.tc, c.node, all, nil)
		if got := messages(r); r.StatusCode != status.Good || len(got) != c.want || got[0] != "event 0" {
			t.Errorf("%s on %v: %v, %d events (%q…), want %d", c.who, c.node, r.StatusCode, len(got), got[:min(1, len(got))], c.want)
		}
	}
	// A where clause, backward (StartTime after EndTime), 4 a call.
	d := ua.ReadEventDetails{StartTime: t0.Add(2 * time.Hour), EndTime: t0, NumValuesPerNode: 4,
		Filter: eventFilter(id.AuditEventType, "Message", "Severity")}
	var got []string
	var cp []byte
	calls := 0
	for {
		r := read(auditor, server, d, cp)
		calls++
		if r.StatusCode != status.Good {
			t.Fatalf("call %d: %v", calls, r.StatusCode)
		}
		got = append(got, messages(r)...)
		if cp = r.ContinuationPoint; cp == nil {
			break
		}
	}
	if len(got) != 10 || got[0] != "event 39" || got[9] != "event 30" || calls != 3 {
		t.Errorf("audit events backward, 4 a call: %q in %d calls", got, calls)
	}
	// The observer's read of audit events: none.
	if r := read(observer, server, d, nil); r.StatusCode != status.GoodNoData || len(messages(r)) != 0 {
		t.Errorf("an Observer's read of audit events: %v, %q", r.StatusCode, messages(r))
	}
	// Open-ended: from a start, 5 values forward.
	r := read(observer, dev, ua.ReadEventDetails{StartTime: t0.Add(10 * time.Second), NumValuesPerNode: 5, Filter: eventFilter(0, "Message")}, nil)
	if got := messages(r); len(got) != 5 || got[0] != "event 10" || r.ContinuationPoint == nil {
		t.Errorf("5 from event 10: %q, continuation %v", got, r.ContinuationPoint != nil)
	}
	// No times at all; a filter that does not compile; a node without
	// event history.
	if r := read(observer, server, ua.ReadEventDetails{Filter: eventFilter(0, "Message")}, nil); r.StatusCode != status.BadInvalidTimestampArgument {
		t.Errorf("no times: %v", r.StatusCode)
	}
	if r := read(observer, server, ua.ReadEventDetails{StartTime: t0, EndTime: t0.Add(time.Hour)}, nil); r.StatusCode != status.BadEventFilterInvalid {
		t.Errorf("no select clause: %v", r.StatusCode)
	}
	if r := read(observer, ua.NewNumericNodeID(0, id.ObjectsFolder), all, nil); r.StatusCode != status.BadHistoryOperationUnsupported {
		t.Errorf("Objects: %v", r.StatusCode)
	}
	// EventNotifier says so.
	n := s.as.Node(dev)
	if n.EventNotifier&eventNotifierHistory == 0 {
		t.Errorf("dev's EventNotifier %#x: no HistoryRead bit", n.EventNotifier)
	}
}

// BenchmarkKeepEvent: an alarm-like event (40 fields) encoded and kept.
func BenchmarkKeepEvent(b *testing.B) {
	s, store, e, notifiers := keepEventSetup(b)
	b.ReportAllocs()
	for b.Loop() {
		s.keepEvent(e, notifiers)
	}
	b.ReportMetric(float64(store.bytes)/float64(store.n), "B/record")
}

// TestKeepEventAllocs: an event goes to the store without allocating.
func TestKeepEventAllocs(t *testing.T) {
	s, store, e, notifiers := keepEventSetup(t)
	if n := testing.AllocsPerRun(100, func() { s.keepEvent(e, notifiers) }); n != 0 {
		t.Errorf("%v allocations an event", n)
	}
	if store.n == 0 {
		t.Fatal("nothing kept")
	}
}

// keepEventSetup is a server with an event store that counts, and an
// alarm's event of 29 fields.
func keepEventSetup(tb testing.TB) (*Server, *countEvents, *plainEvent, []ua.NodeID) {
	s := newTestServer(tb, Config{})
	store := &countEvents{}
	if err := s.SetEventHistory(store); err != nil {
		tb.Fatal(err)
	}
	e := &plainEvent{typ: ua.NewNumericNodeID(0, id.OffNormalAlarmType), fields: map[events.Field]*ua.Variant{}}
	for i, p := range []string{"EventId", "EventType", "SourceNode", "SourceName", "Time", "ReceiveTime", "Message", "Severity", "LastSeverity",
		"ConditionClassId", "ConditionClassName", "ConditionName", "BranchId", "Retain", "EnabledState", "EnabledState/Id",
		"Quality", "Comment", "ClientUserId", "AckedState", "AckedState/Id", "ConfirmedState", "ConfirmedState/Id",
		"ActiveState", "ActiveState/Id", "ActiveState/TransitionTime", "ShelvingState/CurrentState", "SuppressedOrShelved", "InputNode"} {
		v := ua.MustVariant(fmt.Sprint("value ", i))
		if p == "Time" {
			v = ua.MustVariant(time.Unix(1_700_000_000, 0))
		}
		e.fields[s.events.FieldOf(p)] = &v
	}
	return s, store, e, []ua.NodeID{ua.NewStringNodeID(2, "sim"), ua.NewNumericNodeID(0, id.Server)}
}

// countEvents is an EventStore that counts what it is given.
type countEvents struct{ n, bytes int }

func (c *countEvents) AppendEvent(t int64, rec []byte) error {
	c.n++
	c.bytes += len(rec)
	return nil
}

func (c *countEvents) ScanEvents(int64, int64, bool, func(int64, []byte) bool) error { return nil }

// TestEventRecords: a record names its fields by their paths' hashes
// (version 2) and decodes to the same fields; a record of version 1
// (paths as strings) decodes too; another version, or a truncated record,
// is an error.
func TestEventRecords(t *testing.T) {
	s := newTestServer(t, Config{})
	if err := s.SetEventHistory(&memEvents{}); err != nil {
		t.Fatal(err)
	}
	e := plainEvent{typ: ua.NewNumericNodeID(0, id.OffNormalAlarmType), fields: map[events.Field]*ua.Variant{}}
	for p, v := range map[string]any{"Message": ua.LocalizedText{Text: "door open"}, "Severity": uint16(300), "ActiveState/Id": true} {
		x := ua.MustVariant(v)
		e.fields[s.events.FieldOf(p)] = &x
	}
	notifiers := []ua.NodeID{ua.NewNumericNodeID(0, id.Server)}
	check := func(name string, rec []byte) {
		t.Helper()
		var got storedEvent
		if err := s.decodeEvent(rec, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.typ != e.typ || !slices.Equal(got.notifiers, notifiers) || len(got.fields) != 4 ||
			got.Field(s.events.FieldOf("Severity")).Value() != uint16(300) || got.Field(s.events.FieldOf("EventType")).Value() != e.typ {
			t.Fatalf("%s: %+v", name, got)
		}
	}
	rec := s.encodeEvent(nil, &e, notifiers)
	check("version 2", rec)
	// The same in version 1: the header, then each field's path.
	v1 := []byte{eventRecordPaths, 0}
	typ, nv := ua.MustVariant(e.typ), ua.MustVariant(notifiers)
	v1 = nv.Encode(typ.Encode(v1))
	v1 = ua.AppendUint16(v1, 3)
	for _, p := range []string{"Message", "Severity", "ActiveState/Id"} {
		v1 = e.fields[s.events.FieldOf(p)].Encode(ua.AppendString(v1, p))
	}
	check("version 1", v1)
	var got storedEvent
	for name, bad := range map[string][]byte{"version 3": append([]byte{3}, rec[1:]...), "truncated": rec[:len(rec)-3], "empty": nil} {
		if err := s.decodeEvent(bad, &got); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}
