package server

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Event history (OPC 10000-11 §6.5.4, ReadEventDetails). With an
// EventStore (SetEventHistory) the server keeps each event PostEvent
// hands it (the alarms' events, the audit events) with the notifiers it
// went to, and HistoryRead with ReadEventDetails on a node that notifies
// events returns those that went to it between the start and end times,
// passed and selected by the request's EventFilter; audit events only to
// the sessions that receive them live (mayAudit).

// EventStore keeps encoded events in time order; it knows nothing of
// their content.
type EventStore interface {
	// AppendEvent keeps rec, an event at Unix ns t. Events come in time
	// order; the store places one at or before the last after it.
	AppendEvent(t int64, rec []byte) error
	// ScanEvents calls fn with each kept event from..to (Unix ns, both
	// included), newest first when reverse, until fn returns false. rec
	// is valid during the call only.
	ScanEvents(from, to int64, reverse bool, fn func(t int64, rec []byte) bool) error
}

// eventNotifierHistory is EventNotifier's HistoryRead bit.
const eventNotifierHistory = 4

// SetEventHistory keeps the events posted from now on in store and
// serves them to HistoryRead; the nodes that notify events (the Server
// object and those given) say so in their EventNotifier. Call it before
// serving.
func (s *Server) SetEventHistory(store EventStore, notifiers ...ua.NodeID) error {
	for _, n := range append(notifiers, ua.NewNumericNodeID(0, id.Server)) {
		node := s.as.Node(n)
		if node == nil {
			return errors.New("server: event history of " + n.String() + ": no such node")
		}
		if err := s.as.SetEventNotifier(n, node.EventNotifier|eventNotifierHistory); err != nil {
			return err
		}
	}
	paths, err := newEventPaths(s.events)
	if err != nil {
		return err
	}
	s.evPaths = paths
	s.evHist.Store(&store)
	for _, v := range []nodeValue{
		{id.HistoryServerCapabilities_AccessHistoryEventsCapability, true},
		{id.HistoryServerCapabilities_MaxReturnEventValues, uint32(s.cfg.MaxReturnDataValues)},
	} {
		if err := s.as.SetValue(ua.NewNumericNodeID(0, v.node), ua.MustVariant(v.v)); err != nil {
			return err
		}
	}
	return nil
}

// eventRecordVersion is the first byte of an encoded event: 2 names each
// field by the FNV-1a hash of its browse path (4 bytes; stable whatever
// the server's numbering of fields), 1 by the path itself (read only).
const (
	eventRecordVersion = 2
	eventRecordPaths   = 1
)

// pathHash is the 32-bit FNV-1a hash of path.
func pathHash(path string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(path))
	return h.Sum32()
}

// eventPaths numbers the fields by the hash of their paths, for the
// event history's records.
type eventPaths struct {
	hash   []uint32                // by events.Field
	byHash map[uint32]events.Field // the inverse
}

// newEventPaths hashes the paths of ty; two paths with one hash are an
// error (the records could not tell them apart).
func newEventPaths(ty *events.Types) (*eventPaths, error) {
	p := &eventPaths{hash: make([]uint32, ty.Fields()), byHash: make(map[uint32]events.Field, ty.Fields())}
	for f := range ty.Fields() {
		path := ty.Path(events.Field(f))
		h := pathHash(path)
		if g, dup := p.byHash[h]; dup {
			return nil, fmt.Errorf("server: event fields %q and %q have one hash", ty.Path(g), path)
		}
		p.hash[f], p.byHash[h] = h, events.Field(f)
	}
	return p, nil
}

// Flags of an encoded event.
const (
	eventRecAudit     = 1 // an audit event (mayAudit)
	eventRecCondition = 2 // the condition's NodeId follows
)

// keepEvent appends ev, which went to notifiers, to the event store.
func (s *Server) keepEvent(ev events.Event, notifiers []ua.NodeID) {
	p := s.evHist.Load()
	if p == nil {
		return
	}
	var t int64
	if v := ev.Field(s.events.FieldOf("Time")); v != nil {
		if tm, ok := v.DateTime(); ok {
			t = tm.UnixNano()
		}
	}
	if t == 0 {
		t = s.clock().UnixNano()
	}
	// The store copies the record: one buffer serves every event.
	s.evBufMu.Lock()
	defer s.evBufMu.Unlock()
	s.evBuf = s.encodeEvent(s.evBuf[:0], ev, notifiers)
	if err := (*p).AppendEvent(t, s.evBuf); err != nil {
		s.cfg.Logger.Warn("event history: an event is not kept", "type", ev.EventType().String(), "err", err)
	}
	if cap(s.evBuf) > maxEventBuf {
		s.evBuf = nil // an outsized event's buffer is not kept
	}
}

// maxEventBuf is the largest buffer keepEvent keeps for the next event.
const maxEventBuf = 64 << 10

// encodeEvent appends to b the record of ev and its notifiers: version,
// flags, type, notifiers, the condition's NodeId, then each field's path
// and value. The type and the notifiers are encoded as Variants are.
func (s *Server) encodeEvent(b []byte, ev events.Event, notifiers []ua.NodeID) []byte {
	b = append(b, eventRecordVersion, 0)
	flags := len(b) - 1
	if _, ok := ev.(*auditEvent); ok {
		b[flags] |= eventRecAudit
	}
	cond := ev.ConditionID()
	if cond != nil {
		b[flags] |= eventRecCondition
	}
	typ := ev.EventType()
	b = append(b, byte(ua.TypeNodeID))
	b = typ.Encode(b)
	b = append(b, 0x80|byte(ua.TypeNodeID)) // an array
	if notifiers == nil {
		b = ua.AppendInt32(b, -1)
	} else {
		b = ua.AppendInt32(b, int32(len(notifiers)))
		for i := range notifiers {
			b = notifiers[i].Encode(b)
		}
	}
	if cond != nil {
		b = cond.Encode(b)
	}
	n := 0
	at := len(b)
	b = ua.AppendUint16(b, 0)
	typeField := s.events.FieldOf("EventType") // in the header already
	field := func(f events.Field) {
		if int(f) >= len(s.evPaths.hash) || f == typeField {
			return
		}
		if v := ev.Field(f); v != nil {
			b = ua.AppendUint32(b, s.evPaths.hash[f])
			b = v.Encode(b)
			n++
		}
	}
	if l, ok := ev.(events.FieldLister); ok {
		for _, f := range l.Fields() {
			field(f)
		}
	} else {
		for f := range s.events.Fields() {
			field(events.Field(f))
		}
	}
	b[at], b[at+1] = byte(n), byte(n>>8)
	return b
}

// storedEvent is an event read back from the store.
type storedEvent struct {
	typ       ua.NodeID
	audit     bool
	notifiers []ua.NodeID
	cond      *ua.Variant
	fields    map[events.Field]*ua.Variant
}

func (e *storedEvent) EventType() ua.NodeID             { return e.typ }
func (e *storedEvent) Field(f events.Field) *ua.Variant { return e.fields[f] }
func (e *storedEvent) ConditionID() *ua.Variant         { return e.cond }

// errEventRecord is a record that does not decode (a corrupt store).
var errEventRecord = errors.New("server: an event record of the history does not decode")

// decodeEvent decodes rec (encodeEvent), copying what it keeps. Fields
// whose path the server does not know (a record of an older version) are
// left out.
func (s *Server) decodeEvent(rec []byte, e *storedEvent) error {
	if len(rec) < 2 || rec[0] != eventRecordVersion && rec[0] != eventRecordPaths {
		return errEventRecord
	}
	d := ua.NewDecoder(rec[2:])
	*e = storedEvent{audit: rec[1]&eventRecAudit != 0, fields: map[events.Field]*ua.Variant{}}
	var v ua.Variant
	v.Decode(d)
	e.typ, _ = v.Value().(ua.NodeID)
	var nv ua.Variant
	nv.Decode(d)
	e.notifiers, _ = nv.Value().([]ua.NodeID)
	if rec[1]&eventRecCondition != 0 {
		var c ua.Variant
		c.Decode(d)
		e.cond = &c
	}
	typ := ua.MustVariant(e.typ)
	e.fields[s.events.FieldOf("EventType")] = &typ
	n := int(d.ReadUint16())
	for range n {
		var f events.Field
		var known bool
		if rec[0] == eventRecordPaths {
			f, known = s.events.Known(d.ReadString())
		} else {
			f, known = s.evPaths.byHash[d.ReadUint32()]
		}
		var x ua.Variant
		x.Decode(d)
		if d.Err() != nil {
			break
		}
		if known {
			e.fields[f] = &x
		}
	}
	if d.Err() != nil {
		return errEventRecord
	}
	return nil
}

// evOp is a ReadEventDetails operation in progress, kept as a
// continuation point: the events from next on (forward) or up to next
// (reverse).
type evOp struct {
	filter  *events.Filter
	next    int64
	end     int64
	reverse bool
	limit   int // NumValuesPerNode, 0: none
}

// historyEvents runs ReadEventDetails operation i of req on node nv into
// r for session s.
func (c *conn) historyEvents(s *session, d *ua.ReadEventDetails, nv *ua.HistoryReadValueID, r *ua.HistoryReadResult) {
	r.StatusCode, r.ContinuationPoint = status.Good, nil
	p := c.srv.evHist.Load()
	node := c.srv.as.Node(nv.NodeID)
	switch {
	case node == nil:
		r.StatusCode = status.BadNodeIDUnknown
		return
	case p == nil || node.EventNotifier&eventNotifierHistory == 0:
		r.StatusCode = status.BadHistoryOperationUnsupported
		return
	}
	var op *evOp
	if len(nv.ContinuationPoint) > 0 {
		s.mu.Lock()
		held, ok := s.hcps.take(nv.ContinuationPoint)
		s.mu.Unlock()
		if !ok || held.node != nv.NodeID || held.kind != histEvents {
			r.StatusCode = status.BadContinuationPointInvalid
			return
		}
		op = held.ev
	} else {
		var code ua.StatusCode
		if op, code = c.startEventOp(d); code != status.Good {
			r.StatusCode = code
			return
		}
	}
	limit := c.srv.cfg.MaxReturnDataValues
	if op.limit > 0 && op.limit < limit {
		limit = op.limit
	}
	he := &ua.HistoryEvent{}
	mayAuditEvents := mayAudit(Roles(s.roles.Load()))
	var e storedEvent
	var bad error
	more := false
	from, to := op.next, op.end
	if op.reverse {
		from, to = op.end, op.next
	}
	err := (*p).ScanEvents(from, to, op.reverse, func(t int64, rec []byte) bool {
		if len(he.Events) == limit {
			more = true
			op.next = t
			return false
		}
		if err := c.srv.decodeEvent(rec, &e); err != nil {
			bad = err
			return true // a corrupt record is left out, and logged
		}
		if e.audit && !mayAuditEvents || !slices.Contains(e.notifiers, nv.NodeID) || !op.filter.Match(&e) {
			return true
		}
		he.Events = append(he.Events, ua.HistoryEventFieldList{EventFields: op.filter.Select(&e, nil)})
		return true
	})
	if bad != nil {
		c.srv.cfg.Logger.Warn("event history", "node", nv.NodeID.String(), "err", bad)
	}
	if err != nil {
		c.srv.cfg.Logger.Error("event history", "node", nv.NodeID.String(), "err", err)
		r.StatusCode = status.BadHistoryOperationInvalid
		return
	}
	r.HistoryData = ua.ExtensionObject{Body: he}
	if more {
		s.mu.Lock()
		cp, ok := s.hcps.add(&histOp{node: nv.NodeID, kind: histEvents, ev: op})
		s.mu.Unlock()
		if !ok {
			r.HistoryData = ua.ExtensionObject{}
			r.StatusCode = status.BadNoContinuationPoints
			return
		}
		r.ContinuationPoint = cp
	}
	if len(he.Events) == 0 && !more {
		r.StatusCode = status.GoodNoData
	}
}

// startEventOp checks ReadEventDetails d and compiles its filter. Both
// times: forward when StartTime is not after EndTime, else backward; a
// StartTime alone reads forward from it, an EndTime alone backward from
// it, both with NumValuesPerNode (Bad_InvalidTimestampArgument otherwise).
func (c *conn) startEventOp(d *ua.ReadEventDetails) (*evOp, ua.StatusCode) {
	start, startSet := nanos(d.StartTime)
	end, endSet := nanos(d.EndTime)
	op := &evOp{limit: int(min(d.NumValuesPerNode, uint32(1<<31-1)))}
	switch {
	case startSet && endSet:
		op.next, op.end = start, end
		if start > end {
			op.reverse = true
		}
	case startSet && d.NumValuesPerNode > 0:
		op.next, op.end = start, maxNanos
	case endSet && d.NumValuesPerNode > 0:
		op.next, op.end, op.reverse = end, minNanos, true
	default:
		return nil, status.BadInvalidTimestampArgument
	}
	f, _, code := events.Compile(c.srv.events, &d.Filter)
	if code != status.Good {
		return nil, code
	}
	op.filter = f
	return op, status.Good
}

// The widest times of an open-ended event read.
const (
	minNanos = -1 << 63
	maxNanos = 1<<63 - 1
)
