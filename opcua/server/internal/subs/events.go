package subs

import (
	"slices"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Event monitored items (OPC 10000-4 §5.12.1.6, §7.22.3): an item on the
// EventNotifier attribute of a node that notifies events, with an
// EventFilter. It is not sampled: PostEvent hands the run loop each event
// with the notifiers it goes to, and each Reporting or Sampling item on
// one of them whose filter passes it queues the selected fields. A full
// queue drops the oldest or the newest event, as the item says, and puts
// an EventQueueOverflowEventType event in its place, once until the queue
// is emptied.

// eventItem is an event item's part of a monItem.
type eventItem struct {
	filter     *events.Filter
	queue      [][]ua.Variant // the selected fields of each event, oldest first
	overflowed bool           // the queue holds an overflow event
}

// eventNotifierSubscribe is EventNotifier's SubscribeToEvents bit.
const eventNotifierSubscribe = 1

// reviseEventItem checks an event item's parameters on node n: its filter
// compiled, and the result to give the client.
func (m *Manager) reviseEventItem(sub *subscription, n *addrspace.Node, p *ua.MonitoringParameters) (itemParams, *events.Filter, ua.ExtensionObject, ua.StatusCode) {
	var ip itemParams
	if n.EventNotifier&eventNotifierSubscribe == 0 {
		return ip, nil, ua.ExtensionObject{}, status.BadAttributeIDInvalid
	}
	ef, ok := p.Filter.Body.(*ua.EventFilter)
	if !ok || m.events == nil {
		return ip, nil, ua.ExtensionObject{}, status.BadEventFilterInvalid
	}
	f, res, code := events.Compile(m.events, ef)
	if code != status.Good {
		return ip, nil, ua.ExtensionObject{Body: &res}, code
	}
	ip.qsize = int(min(max(p.QueueSize, 1), uint32(m.lim.MaxQueueSize)))
	ip.discardOldest = p.DiscardOldest
	return ip, f, ua.ExtensionObject{}, status.Good
}

// PostEvent hands ev to the event items on the nodes notifiers (the
// Server object and the source's notifiers). ev must not change
// afterwards: the run loop reads it later. It returns at once; events
// posted after the server shut down are dropped.
func (m *Manager) PostEvent(ev events.Event, notifiers ...ua.NodeID) {
	if !m.active.Load() {
		return
	}
	m.start()
	select {
	case m.calls <- func() { m.deliver(ev, notifiers) }:
	case <-m.done:
	}
}

// Posted is an event and the notifiers it goes to (PostEvents).
type Posted struct {
	Event     events.Event
	Notifiers []ua.NodeID
}

// PostEvents is PostEvent for each of evs, handed to the run loop at
// once: one hand-over for a batch. evs must not change afterwards.
func (m *Manager) PostEvents(evs []Posted) {
	if !m.active.Load() || len(evs) == 0 {
		return
	}
	m.start()
	select {
	case m.calls <- func() {
		for i := range evs {
			m.queueEvent(evs[i].Event, evs[i].Notifiers)
		}
		m.publishTouched(time.Now())
	}:
	case <-m.done:
	}
}

// deliver queues ev on the event items on notifiers and publishes.
func (m *Manager) deliver(ev events.Event, notifiers []ua.NodeID) {
	m.queueEvent(ev, notifiers)
	m.publishTouched(time.Now())
}

// queueEvent queues ev on the event items on notifiers whose filter
// passes it, for sessions that may receive it.
func (m *Manager) queueEvent(ev events.Event, notifiers []ua.NodeID) {
	for _, it := range m.eventItems {
		if it.deleted || it.mode == ua.MonitoringModeDisabled || !slices.Contains(notifiers, it.rv.NodeID) ||
			m.receives != nil && !m.receives(it.sub.ss.sess, ev) || !it.ev.filter.Match(ev) {
			continue
		}
		m.enqueueEvent(it, it.ev.filter.Select(ev, nil))
	}
}

// enqueueEvent queues an event's fields on it.
func (m *Manager) enqueueEvent(it *monItem, fields []ua.Variant) {
	e := it.ev
	switch {
	case len(e.queue) < it.qsize && (len(e.queue) == 0 || m.queuedCount < m.lim.MaxQueuedNotifications):
		e.queue = append(e.queue, fields)
		m.queuedCount++
	case it.qsize == 1:
		e.queue[0] = fields
		it.overflows++
	case it.discardOldest:
		// The oldest event goes (the oldest after the overflow event once
		// there is one) and the new one is the last; the first overflow
		// takes the place of the oldest left.
		i := 0
		if e.overflowed {
			i = 1
		}
		e.queue = append(slices.Delete(e.queue, i, i+1), fields)
		if !e.overflowed {
			e.queue[0], e.overflowed = m.overflowFields(it), true
		}
		it.overflows++
	default:
		// The new event goes; the first overflow takes the place of the
		// newest.
		if !e.overflowed {
			e.queue[len(e.queue)-1], e.overflowed = m.overflowFields(it), true
		}
		it.overflows++
	}
	if it.mode != ua.MonitoringModeReporting {
		return
	}
	sub := it.sub
	if !it.inReady {
		it.inReady = true
		sub.ready = append(sub.ready, it)
	}
	if !sub.touched {
		sub.touched = true
		m.touched = append(m.touched, sub)
	}
}

// overflowEvent is the EventQueueOverflowEventType event of a queue.
type overflowEvent struct {
	fields map[events.Field]*ua.Variant
}

func (o *overflowEvent) EventType() ua.NodeID {
	return ua.NewNumericNodeID(0, id.EventQueueOverflowEventType)
}
func (o *overflowEvent) Field(f events.Field) *ua.Variant { return o.fields[f] }
func (o *overflowEvent) ConditionID() *ua.Variant         { return nil }

// overflowFields returns the select clauses of it on an overflow event
// (not filtered by the where clause: the client learns of the loss
// whatever it filters).
func (m *Manager) overflowFields(it *monItem) []ua.Variant {
	o := &overflowEvent{fields: map[events.Field]*ua.Variant{}}
	now := m.clock()
	set := func(path string, v ua.Variant) { o.fields[m.events.FieldOf(path)] = &v }
	set("EventType", ua.MustVariant(o.EventType()))
	set("SourceNode", ua.MustVariant(ua.NewNumericNodeID(0, id.Server)))
	set("SourceName", ua.MustVariant("Internal/EventQueueOverflow"))
	set("Time", ua.MustVariant(now))
	set("ReceiveTime", ua.MustVariant(now))
	set("Severity", ua.MustVariant(uint16(1)))
	set("Message", ua.MustVariant(ua.LocalizedText{Text: "events were dropped from a full queue"}))
	set("EventId", ua.MustVariant([]byte(now.Format(time.RFC3339Nano))))
	return it.ev.filter.Select(o, nil)
}

// drainEvents moves it's queued events into evl, at most room of them,
// and returns how many are left.
func (m *Manager) drainEvents(evl *ua.EventNotificationList, it *monItem, room int) int {
	e := it.ev
	n := len(e.queue)
	if room >= 0 && n > room {
		n = room
	}
	evl.Events = slices.Grow(evl.Events, n)
	for _, f := range e.queue[:n] {
		evl.Events = append(evl.Events, ua.EventFieldList{ClientHandle: it.handle, EventFields: f})
	}
	m.queuedCount -= n
	clear(e.queue[:n])
	e.queue = slices.Delete(e.queue, 0, n)
	if len(e.queue) == 0 {
		e.overflowed = false
	}
	return len(e.queue)
}

// forgetEvents empties an event item's queue.
func (m *Manager) forgetEvents(it *monItem) {
	m.queuedCount -= len(it.ev.queue)
	clear(it.ev.queue)
	it.ev.queue = it.ev.queue[:0]
	it.ev.overflowed = false
}

// pending reports whether it has notifications queued.
func (it *monItem) pending() bool {
	return len(it.queue) > 0 || it.ev != nil && len(it.ev.queue) > 0
}

// Refresh queues, on the event items of session s's subscription subID
// (only item itemID when not 0), the events evs in order: a
// ConditionRefresh (OPC 10000-9 §5.5.7). The first and the last, the
// RefreshStartEvent and RefreshEndEvent, pass whatever the where clause;
// the others as their filter says. Bad_SubscriptionIdInvalid for a
// subscription that is not s's, Bad_MonitoredItemIdInvalid for an item
// that is not one of its event items.
func (m *Manager) Refresh(s Session, subID, itemID uint32, evs []events.Event) ua.StatusCode {
	code := status.Good
	err := m.call(func() {
		sub := m.subOf(s, subID)
		if sub == nil {
			code = status.BadSubscriptionIDInvalid
			return
		}
		var items []*monItem
		for _, it := range sub.items {
			if it.ev != nil && !it.deleted && (itemID == 0 || it.id == itemID) {
				items = append(items, it)
			}
		}
		if itemID != 0 && len(items) == 0 {
			code = status.BadMonitoredItemIDInvalid
			return
		}
		slices.SortFunc(items, func(a, b *monItem) int { return int(a.id) - int(b.id) })
		for k, ev := range evs {
			edge := k == 0 || k == len(evs)-1
			for _, it := range items {
				if it.mode == ua.MonitoringModeDisabled || !edge && !it.ev.filter.Match(ev) {
					continue
				}
				m.enqueueEvent(it, it.ev.filter.Select(ev, nil))
			}
		}
		m.publishTouched(time.Now())
	})
	if err != nil {
		return status.BadShutdown
	}
	return code
}
