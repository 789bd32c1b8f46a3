package subs

import (
	"container/heap"
	"math"
	"slices"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Monitored items (OPC 10000-4 §5.12).
//
// An item on the Value of a variable served by a ValueSource (a tag) is
// indexed by its source and handle and sampled when Server.SourceChanged
// names the handle and the item is due: an item sampling at the tag's own
// rate (its MinimumSamplingInterval, or the base cycle) samples every
// change; a slower one when its sampling interval, revised to a multiple
// of that rate, has passed since its last sample (a change before that is
// kept and sampled at the first change call after the item is due).
//
// Every other item (a variable without a source, a namespace 0 variable
// (the Server object's are computed at each read, and no SourceChanged
// names them), or any attribute other than Value) is
// sampled at creation and then whenever its own sampling interval, a
// multiple of the base cycle, has passed: such items wait in a heap
// ordered by their next sample (Manager.due), and the manager's one timer
// is set to the earliest of them and of the publishing cycles, so the
// work per wake-up is the items that are due. The first sample after
// creation or a change of interval is aligned with the subscription's
// publishing cycle, so an item sampling at the publishing interval is
// sampled just before each publish.
//
// Sampling interval -1 (any negative value) means the subscription's
// publishing interval (§5.12.1.2): the item remembers it asked for it and
// is revised again when ModifySubscription changes the interval.

// statusOverflow is the InfoType DataValue and Overflow bits of a
// StatusCode (OPC 10000-4 §7.39.1): set on a value that follows discarded
// ones in an item's queue.
const statusOverflow ua.StatusCode = 0x0480

// monItem is one monitored item; owned by the run loop.
type monItem struct {
	// The fields a sample and a publish use come first, in as few cache
	// lines as can be: the fan-out of one image touches every item on
	// the changed variables, and the items are all over the heap.
	mode     ua.MonitoringMode
	trigger  ua.DataChangeTrigger
	deadband ua.DeadbandType
	ts       ua.TimestampsToReturn
	handle   uint32 // client handle
	// everyImage: the item samples at its tag's own scan rate, so every
	// change the engine publishes is a sample, even when images come
	// closer than the period (the engine catching up after a late cycle).
	everyImage    bool
	ownRead       bool // rv has an IndexRange or a DataEncoding: no shared Read
	discardOldest bool
	inReady       bool
	inTriggered   bool // in sub.triggered: reported by a trigger, not yet sent
	deferred      bool
	backlogged    bool // waits in its session's backlog (budget.go)
	deleted       bool
	qsize         int
	db            float64 // absolute deadband (a percent one converted with the EURange)
	last          *sample // the last reported value; nil before the first sample
	sub           *subscription
	queue         []queued
	links         []*monItem // SetTriggering: items reported when this one reports
	lastSample    time.Time
	after         uint64 // source changes up to this srcBatch.seq are older than its last sample
	interval      time.Duration
	rv            ua.ReadValueID

	id      uint32
	unit    time.Duration // interval is a multiple of it: the base cycle, or the tag's MinimumSamplingInterval
	pubRate bool          // the client asked for -1: interval follows the publishing interval
	key     srcKey        // zero for items without a source (sampled from Manager.due)

	overflows uint32
	ev        *eventItem // an event item (events.go); nil for a data item

	nextSample time.Time // items without a source: when the next sample is due
	heapPos    int       // items without a source: 1 + index in Manager.due, 0 when not scheduled
}

// dueHeap orders the items without a source by their next sample
// (container/heap).
type dueHeap []*monItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].nextSample.Before(h[j].nextSample) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapPos, h[j].heapPos = i+1, j+1
}

func (h *dueHeap) Push(x any) {
	it := x.(*monItem)
	*h = append(*h, it)
	it.heapPos = len(*h)
}

func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.heapPos = 0
	return it
}

// schedule puts it, an item without a source, in the due heap (or moves
// it there) with its next sample aligned with its subscription's
// publishing cycle: the first time after now, by at least half a base
// cycle, that is a whole number of sampling intervals away from the
// subscription's next cycle. A disabled or source item is unscheduled.
func (m *Manager) schedule(it *monItem, now time.Time) {
	if it.key != (srcKey{}) || it.deleted || it.mode == ua.MonitoringModeDisabled || it.interval <= 0 {
		m.unschedule(it)
		return
	}
	r := it.sub.next.Sub(now) % it.interval
	if r < 0 {
		r += it.interval
	}
	if r < m.lim.MinPublishingInterval/2 {
		r += it.interval
	}
	it.nextSample = now.Add(r)
	if it.heapPos > 0 {
		heap.Fix(&m.due, it.heapPos-1)
	} else {
		heap.Push(&m.due, it)
	}
}

// unschedule takes it out of the due heap.
func (m *Manager) unschedule(it *monItem) {
	if it.heapPos > 0 {
		heap.Remove(&m.due, it.heapPos-1)
	}
}

// sampleDue samples the items without a source that are due at now (half
// a base cycle of slack) and schedules their next samples, keeping their
// phase; a sample missed while the manager was busy is not repeated.
// Work is proportional to the items due.
func (m *Manager) sampleDue(now time.Time) {
	if len(m.due) == 0 {
		return
	}
	limit := now.Add(m.lim.MinPublishingInterval / 2)
	if m.due[0].nextSample.After(limit) {
		return
	}
	m.rc.Reset()
	for len(m.due) > 0 && !m.due[0].nextSample.After(limit) {
		it := m.due[0]
		if m.admit(it) {
			m.sample(it, now)
		}
		it.nextSample = it.nextSample.Add(it.interval)
		if !it.nextSample.After(limit) {
			it.nextSample = it.nextSample.Add((limit.Sub(it.nextSample)/it.interval + 1) * it.interval)
		}
		heap.Fix(&m.due, 0)
	}
}

// due reports whether it may take a sample at now (half a base cycle of
// slack for the engine's jitter).
func (it *monItem) due(now time.Time, slack time.Duration) bool {
	if it.last == nil || it.everyImage {
		return true
	}
	return !now.Before(it.lastSample.Add(it.interval - slack))
}

// sample reads the item's value and queues a notification when it changed
// in the sense of the item's filter.
func (m *Manager) sample(it *monItem, now time.Time) {
	if it.ev != nil {
		return // events are posted, not sampled
	}
	s := m.newSample()
	m.space.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &s.dv)
	m.sampled(it, s, now)
	m.release(s)
}

// sampled takes s, read for it at now, as the item's sample.
func (m *Manager) sampled(it *monItem, s *sample, now time.Time) {
	it.lastSample = now
	if it.last != nil && !it.changed(&s.dv) {
		return
	}
	m.setLast(it, s)
	m.enqueue(it, s)
}

// setLast makes s the last reported value of it.
func (m *Manager) setLast(it *monItem, s *sample) {
	s.hold()
	m.release(it.last)
	it.last = s
}

// report makes dv, read for it, its last reported value and queues it
// whether it changed or not.
func (m *Manager) report(it *monItem, dv *ua.DataValue) {
	s := m.newSample()
	s.dv = *dv
	m.setLast(it, s)
	m.enqueue(it, s)
	m.release(s)
}

// forget empties the queue of it and forgets its last value.
func (m *Manager) forget(it *monItem) {
	if it.ev != nil {
		m.forgetEvents(it)
	}
	m.releaseQueued(it.queue)
	it.queue = it.queue[:0]
	m.release(it.last)
	it.last = nil
}

// enqueue queues s (with the item's client handle and timestamps) on it.
// Once the server holds MaxQueuedNotifications queued notifications, a
// queue that holds one already is treated as full (its oldest or newest
// value is replaced, with the Overflow bit): clients that do not publish
// cannot make the queues take all the gateway's memory.
func (m *Manager) enqueue(it *monItem, s *sample) {
	s.hold()
	n := queued{s: s, handle: it.handle, ts: it.ts}
	switch {
	case len(it.queue) < it.qsize && (len(it.queue) == 0 || m.queuedCount < m.lim.MaxQueuedNotifications):
		it.queue = append(it.queue, n)
		m.queuedCount++
	case it.qsize == 1:
		m.release(it.queue[0].s)
		it.queue[0] = n
		it.overflows++
	case it.discardOldest:
		m.release(it.queue[0].s)
		copy(it.queue, it.queue[1:])
		it.queue[len(it.queue)-1] = n
		it.queue[0].ov |= statusOverflow
		it.overflows++
	default:
		n.ov |= statusOverflow
		m.release(it.queue[len(it.queue)-1].s)
		it.queue[len(it.queue)-1] = n
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

// changed compares dv with the last reported value per the item's filter.
func (it *monItem) changed(dv *ua.DataValue) bool {
	last := &it.last.dv
	if dv.Status != last.Status {
		return true
	}
	if it.trigger == ua.DataChangeTriggerStatus {
		return false
	}
	if it.trigger == ua.DataChangeTriggerStatusValueTimestamp && !dv.SourceTimestamp.Equal(last.SourceTimestamp) {
		return true
	}
	if it.deadband != ua.DeadbandTypeNone {
		if dv.Value.IsArray() && last.Value.IsArray() {
			if changed, ok := arrayBeyond(dv.Value, last.Value, it.db); ok {
				return changed
			}
		}
		x, ok1 := number(dv.Value)
		y, ok2 := number(last.Value)
		// A NaN on either side is no number to measure a deadband with:
		// NaN to a number and back are changes, NaN to NaN is not (Equal).
		if ok1 && ok2 && !math.IsNaN(x) && !math.IsNaN(y) {
			return math.Abs(x-y) > it.db
		}
	}
	return !dv.Value.Equal(last.Value)
}

// arrayBeyond applies deadband db to arrays of numbers (OPC 10000-4
// §7.22.2): the array changed when its type, length or dimensions did, or
// when any element moved by more than db (an element that becomes or
// stops being NaN is a change). ok is false for arrays not of numbers.
func arrayBeyond(v, last ua.Variant, db float64) (changed, ok bool) {
	if v.Type() != last.Type() || !slices.Equal(v.ArrayDimensions(), last.ArrayDimensions()) {
		return true, true
	}
	switch a := v.Value().(type) {
	case []int8:
		return beyond(a, last.Value().([]int8), db), true
	case []uint8:
		return beyond(a, last.Value().([]uint8), db), true
	case []int16:
		return beyond(a, last.Value().([]int16), db), true
	case []uint16:
		return beyond(a, last.Value().([]uint16), db), true
	case []int32:
		return beyond(a, last.Value().([]int32), db), true
	case []uint32:
		return beyond(a, last.Value().([]uint32), db), true
	case []int64:
		return beyond(a, last.Value().([]int64), db), true
	case []uint64:
		return beyond(a, last.Value().([]uint64), db), true
	case []float32:
		return beyond(a, last.Value().([]float32), db), true
	case []float64:
		return beyond(a, last.Value().([]float64), db), true
	}
	return false, false
}

func beyond[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float32 | float64](a, b []T, db float64) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		if nx, ny := math.IsNaN(x), math.IsNaN(y); nx || ny {
			if nx != ny {
				return true
			}
			continue
		}
		if math.Abs(x-y) > db {
			return true
		}
	}
	return false
}

// number returns a scalar numeric Variant as a float64.
func number(v ua.Variant) (float64, bool) {
	if v.IsArray() {
		return 0, false
	}
	switch x := v.Value().(type) {
	case int8:
		return float64(x), true
	case uint8:
		return float64(x), true
	case int16:
		return float64(x), true
	case uint16:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// removeItem unindexes it and drops it from its subscription, and its
// queued notifications.
func (m *Manager) removeItem(it *monItem) {
	it.deleted = true
	m.forget(it)
	if it.ev != nil {
		// A new slice: deliver may be ranging over the old one.
		m.eventItems = slices.DeleteFunc(slices.Clone(m.eventItems), func(x *monItem) bool { return x == it })
	}
	sub := it.sub
	delete(sub.items, it.id)
	m.itemCount--
	m.removed.Add(1)
	if it.key != (srcKey{}) {
		// Taken out of the source's list by prune, once for all the
		// items deleted together: one by one, deleting the 10,000 items
		// of a subscription on one tag was quadratic, seconds of the
		// run loop.
		m.stale[it.key] = struct{}{}
	} else {
		m.unschedule(it)
	}
	if sub.linked && !sub.deleted {
		for _, o := range sub.items {
			if i := slices.Index(o.links, it); i >= 0 {
				o.links = slices.Delete(o.links, i, i+1)
			}
		}
	}
}

// prune takes the deleted items out of the lists of their sources.
func (m *Manager) prune() {
	for k := range m.stale {
		list := slices.DeleteFunc(m.bySource[k], func(it *monItem) bool { return it.deleted })
		if len(list) == 0 {
			delete(m.bySource, k)
		} else {
			m.bySource[k] = list
		}
	}
	clear(m.stale)
}

// itemParams are the revised parameters of an item.
type itemParams struct {
	interval      time.Duration
	unit          time.Duration
	pubRate       bool
	everyImage    bool
	qsize         int
	discardOldest bool
	trigger       ua.DataChangeTrigger
	deadband      ua.DeadbandType
	db            float64
}

// reviseItem checks and revises the monitoring parameters p for the item
// on node n (attribute attr) of sub. The key is the item's source key, zero
// when it has no source.
func (m *Manager) reviseItem(sub *subscription, n *addrspace.Node, attr ua.AttributeID, p *ua.MonitoringParameters) (itemParams, srcKey, ua.StatusCode) {
	var ip itemParams
	lim := &m.lim
	var key srcKey
	// Namespace 0 variables with a source (the Server object's, computed
	// at each read) are never named by SourceChanged: they are sampled on
	// their interval like a static variable.
	if attr == ua.AttributeIDValue && n.Class == ua.NodeClassVariable && n.Source != 0 && n.ID.Namespace != 0 {
		key = srcKey{n.Source, n.Handle}
	}
	// Filter.
	ip.trigger = ua.DataChangeTriggerStatusValue
	switch f := p.Filter.Body.(type) {
	case nil:
		if p.Filter.Encoding != ua.ExtensionObjectEmpty && p.Filter.TypeID != (ua.NodeID{}) {
			return ip, key, status.BadMonitoredItemFilterUnsupported
		}
	case *ua.DataChangeFilter:
		if attr != ua.AttributeIDValue || n.Class != ua.NodeClassVariable {
			return ip, key, status.BadFilterNotAllowed
		}
		if f.Trigger < ua.DataChangeTriggerStatus || f.Trigger > ua.DataChangeTriggerStatusValueTimestamp {
			return ip, key, status.BadDeadbandFilterInvalid
		}
		ip.trigger = f.Trigger
		if f.Trigger == ua.DataChangeTriggerStatusValueTimestamp {
			m.tsTrigger.Store(true) // before the item samples: see SourceValuesChanged
		}
		ip.deadband = ua.DeadbandType(f.DeadbandType)
		switch ip.deadband {
		case ua.DeadbandTypeNone:
		case ua.DeadbandTypeAbsolute:
			if f.DeadbandValue < 0 || math.IsNaN(f.DeadbandValue) {
				return ip, key, status.BadDeadbandFilterInvalid
			}
			ip.db = f.DeadbandValue
		case ua.DeadbandTypePercent:
			if f.DeadbandValue < 0 || f.DeadbandValue > 100 || math.IsNaN(f.DeadbandValue) {
				return ip, key, status.BadDeadbandFilterInvalid
			}
			r := m.euRange(n)
			if r == nil {
				return ip, key, status.BadMonitoredItemFilterUnsupported
			}
			ip.db = f.DeadbandValue / 100 * math.Abs(r.High-r.Low)
		default:
			return ip, key, status.BadDeadbandFilterInvalid
		}
	default:
		return ip, key, status.BadMonitoredItemFilterUnsupported
	}
	// Sampling interval: a multiple of the tag's own rate for an item on a
	// source, of the base cycle for every other.
	ip.unit = lim.MinPublishingInterval
	if key != (srcKey{}) {
		if msi := time.Duration(n.MinimumSamplingInterval * float64(time.Millisecond)); msi > ip.unit {
			ip.unit = msi
		}
	}
	switch si := p.SamplingInterval; {
	case math.IsNaN(si):
		ip.interval = ip.unit
	case si < 0:
		ip.pubRate = true
		ip.interval = roundUp(sub.interval, ip.unit)
	default:
		d := time.Duration(min(si, float64(lim.MaxPublishingInterval/time.Millisecond)) * float64(time.Millisecond))
		ip.interval = roundUp(d, ip.unit)
	}
	ip.everyImage = key != (srcKey{}) && ip.interval == ip.unit
	// Queue.
	ip.qsize = int(min(max(p.QueueSize, 1), lim.MaxQueueSize))
	ip.discardOldest = p.DiscardOldest
	return ip, key, status.Good
}

// euRange returns the EURange property of n, nil if it has none.
func (m *Manager) euRange(n *addrspace.Node) *ua.Range {
	hasProperty := ua.NewNumericNodeID(0, id.HasProperty)
	for _, r := range m.space.References(n.ID) {
		if r.IsInverse || r.TypeID != hasProperty || r.Target.ServerIndex != 0 || r.Target.NamespaceURI != "" {
			continue
		}
		p := m.space.Node(r.Target.NodeID)
		if p == nil || p.BrowseName.Name != "EURange" || p.BrowseName.NamespaceIndex != 0 {
			continue
		}
		if eo, ok := p.StaticValue().Value().(ua.ExtensionObject); ok {
			if rg, ok := eo.Body.(*ua.Range); ok {
				return rg
			}
		}
		if eo, ok := p.StaticValue().Value().(*ua.ExtensionObject); ok && eo != nil {
			if rg, ok := eo.Body.(*ua.Range); ok {
				return rg
			}
		}
	}
	return nil
}

// followPublishing revises the sampling interval of it, which asked for
// -1, to its subscription's (new) publishing interval.
func (m *Manager) followPublishing(it *monItem, now time.Time) {
	it.interval = roundUp(it.sub.interval, it.unit)
	if it.key != (srcKey{}) {
		it.everyImage = it.interval == it.unit
	} else {
		m.schedule(it, now)
	}
}

// apply sets the revised parameters on it; the caller indexes or
// schedules it.
func (m *Manager) apply(it *monItem, ip itemParams, key srcKey) {
	it.interval, it.everyImage = ip.interval, ip.everyImage
	it.unit, it.pubRate = ip.unit, ip.pubRate
	it.discardOldest = ip.discardOldest
	it.trigger, it.deadband, it.db = ip.trigger, ip.deadband, ip.db
	if ip.qsize < len(it.queue) {
		// Keep the newest, as a queue that overflowed.
		drop := len(it.queue) - ip.qsize
		if it.discardOldest {
			m.releaseQueued(it.queue[:drop])
			it.queue = slices.Delete(it.queue, 0, drop)
		} else {
			m.releaseQueued(it.queue[ip.qsize:])
			it.queue = it.queue[:ip.qsize]
		}
		it.queue[0].ov |= statusOverflow
	}
	it.qsize = ip.qsize
	it.key = key
	it.ownRead = it.rv.IndexRange != "" || it.rv.DataEncoding != (ua.QualifiedName{})
}
