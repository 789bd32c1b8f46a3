package subs

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// The steady-state data path of subscriptions, sample → publish, is kept
// free of allocations: the items on one variable share one Read per
// image, and its sample (the value, compared once per last value and
// filter, and its encodings), which comes back to a pool when no item
// refers to it any more; publishTo encodes the DataChangeNotification
// straight from the items' queues (encodedDCN), copying each sample's
// bytes after the client handle, and a NotificationMessage with its
// encoding buffer comes back for reuse once it leaves the retransmission
// queue.

// srcBatch is the changes of one SourceChanged call: those of source src
// in changed (or work) up to end, to sample in snap, the image that
// carried them (nil: the source's current one).
type srcBatch struct {
	src  addrspace.SourceID
	snap addrspace.Snapshot
	end  int
	seq  uint64 // numbers the SourceChanged calls: see monItem.after
}

// maxPendingImages bounds the images SourceChanged keeps for the run loop
// (16 base cycles); beyond it the changes of the newest calls are
// sampled in the images current when the run loop gets to them.
const maxPendingImages = 16

// addBatch closes the batch of the changes SourceChanged just added, to
// sample in snap; called under hookMu.
func (m *Manager) addBatch(src addrspace.SourceID, snap addrspace.Snapshot) {
	m.batchSeq++
	if n := len(m.batches); n >= maxPendingImages {
		last := &m.batches[n-1]
		addrspace.ReleaseSnapshot(last.snap)
		addrspace.ReleaseSnapshot(snap)
		last.end, last.snap, last.seq = len(m.changed), nil, m.batchSeq
		return
	}
	m.batches = append(m.batches, srcBatch{src, snap, len(m.changed), m.batchSeq})
}

// releaseBatches releases the images of bs (taken by SourceChanged) and
// clears it.
func releaseBatches(bs []srcBatch) {
	for i := range bs {
		addrspace.ReleaseSnapshot(bs[i].snap)
	}
	clear(bs)
}

// sampledNow records that it was just sampled in the current images, out
// of a round of source changes (created, enabled, ResendData): the
// changes already waiting for the run loop carry older images, which it
// must not sample after this one (its values would go back in time).
func (m *Manager) sampledNow(it *monItem) {
	m.hookMu.Lock()
	it.after = m.batchSeq
	m.hookMu.Unlock()
}

// source returns the ValueSource src, from the Space the first time and
// then without its lock: the engine's goroutine calls SourceChanged and
// must not wait for a Read or Write request.
func (m *Manager) source(src addrspace.SourceID) addrspace.ValueSource {
	i := int(src) - 1
	if p := m.sources.Load(); p != nil && i >= 0 && i < len(*p) && (*p)[i] != nil {
		return (*p)[i]
	}
	vs := m.space.Source(src)
	if vs == nil {
		return nil
	}
	m.srcMu.Lock()
	defer m.srcMu.Unlock()
	var list []addrspace.ValueSource
	if p := m.sources.Load(); p != nil {
		list = *p
	}
	list = append(make([]addrspace.ValueSource, 0, max(len(list), i+1)), list...)
	list = list[:max(len(list), i+1)]
	list[i] = vs
	m.sources.Store(&list)
	return vs
}

// sampleKey samples the items on source key k that are due at now, and
// defers those that are not. The items of one node whose ReadValueId has
// no IndexRange and no DataEncoding share one Read: the manager reads with
// every right (no User) from the same snapshot and server timestamp, so
// each would read the same DataValue. They share its sample too (its
// copy and its encodings), and the comparison with the last reported
// value: items with the same last sample and the same filter compare once.
func (m *Manager) sampleKey(k srcKey, seq uint64, now time.Time, slack time.Duration) {
	var s *sample       // the node's value, read once for the items on it
	var node *ua.NodeID // the node s was read from
	var cmp lastCmp
	list := m.bySource[k]
	m.touch(list)
	for _, it := range list {
		if it.deleted || it.mode == ua.MonitoringModeDisabled || it.after >= seq || it.backlogged {
			continue
		}
		if !it.due(now, slack) {
			if !it.deferred {
				it.deferred = true
				m.deferred = append(m.deferred, it)
			}
			continue
		}
		if !m.admit(it) {
			continue
		}
		if it.ownRead {
			m.sample(it, now)
			continue
		}
		if node == nil || *node != it.rv.NodeID {
			m.release(s)
			s, node = m.newSample(), &it.rv.NodeID
			m.space.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &s.dv)
			cmp = lastCmp{}
		}
		it.lastSample = now
		if it.last != nil {
			if !cmp.same(it) {
				cmp = lastCmp{it.last, it.trigger, it.deadband, it.db, it.changed(&s.dv)}
			}
			if !cmp.changed {
				continue
			}
		}
		m.setLast(it, s)
		m.enqueue(it, s)
	}
	m.release(s)
}

// touch and touchReady read a word of each item's first cache lines, and
// of the queue entry that enqueue writes or publishTo reads, before the
// items are sampled or published: loads that do not depend on each other,
// so that the processor fetches the lines of all the items at once instead
// of waiting for each in turn. The fan-out of an image visits the items of
// many subscriptions, all over the heap and out of the caches by the next
// image; fetching them up front cut the CPU per notification of the
// fan-out bench by a fifth.
func (m *Manager) touch(list []*monItem) {
	var x uintptr
	for _, it := range list {
		x += uintptr(it.mode) + uintptr(len(it.queue)) + uintptr(it.rv.NodeID.Numeric)
		if q := it.queue; len(q) < cap(q) {
			x += uintptr(q[:len(q)+1][len(q)].handle)
		}
	}
	m.touchSum += x
}

// touchReady is touch for the items publishTo visits: their first two
// lines and their queues' first entries.
func (m *Manager) touchReady(list []*monItem) {
	var x uintptr
	for _, it := range list {
		x += uintptr(it.mode) + uintptr(len(it.queue))
		if len(it.queue) > 0 {
			x += uintptr(it.queue[0].handle)
		}
	}
	m.touchSum += x
}

// lastCmp is the outcome of a comparison of a node's new sample with last,
// under a filter: the same for every item on the node with that last
// sample and filter. The last sample cannot be reused for another value
// while an item refers to it, so its pointer identifies its value.
type lastCmp struct {
	last     *sample
	trigger  ua.DataChangeTrigger
	deadband ua.DeadbandType
	db       float64
	changed  bool
}

// same reports whether c is the comparison it would make.
func (c *lastCmp) same(it *monItem) bool {
	return c.last == it.last && c.trigger == it.trigger && c.deadband == it.deadband && c.db == it.db
}

// sample is a value read for monitored items, shared by every item that
// holds it as its last reported value or in its queue: the DataValue of
// one node in one image, read once for all the items on the node
// (sampleKey), and its encodings, one per TimestampsToReturn, made the
// first time a notification of it is published and then copied for every
// other item. Counted references: the sample goes back to the manager's
// pool (newSample) when the last one is released, so that the steady
// state allocates nothing. A published message holds copies of the
// encoded bytes, never a sample. Owned by the run loop.
type sample struct {
	dv   ua.DataValue
	refs int32
	made uint8        // bit ts: the encoding for TimestampsToReturn ts is in enc
	span [4][2]uint32 // per TimestampsToReturn: its encoding's start and end in enc
	enc  []byte
}

// maxFreeSamples bounds the pool of samples kept for reuse, and
// maxPooledEncoding the encoding buffer a pooled sample keeps.
const (
	maxFreeSamples    = 1 << 16
	maxPooledEncoding = 1 << 10
)

// newSample returns an empty sample with one reference, the caller's.
func (m *Manager) newSample() *sample {
	n := len(m.free)
	if n == 0 {
		return &sample{refs: 1}
	}
	s := m.free[n-1]
	m.free[n-1] = nil
	m.free = m.free[:n-1]
	s.refs = 1
	return s
}

// hold adds a reference to s.
func (s *sample) hold() { s.refs++ }

// release drops a reference to s (nil: none); the last one returns s to
// the pool, emptied so that it keeps no value alive.
func (m *Manager) release(s *sample) {
	if s == nil {
		return
	}
	s.refs--
	if s.refs != 0 {
		return
	}
	s.dv = ua.DataValue{}
	s.made, s.enc = 0, s.enc[:0]
	if cap(s.enc) > maxPooledEncoding {
		s.enc = nil // a large array's: not kept for a scalar
	}
	// The pool holds no more than the items can use at once: a burst (the
	// initial values of thousands of items) leaves no idle samples behind.
	if len(m.free) < min(maxFreeSamples, max(1024, m.itemCount)) {
		m.free = append(m.free, s)
	}
}

// encoded returns the DataValue's encoding with the timestamps ts asks
// for, made the first time.
func (s *sample) encoded(ts ua.TimestampsToReturn) []byte {
	i := tsIndex(ts)
	if s.made&(1<<i) == 0 {
		start := len(s.enc)
		s.enc = appendValue(s.enc, &s.dv, ts, 0)
		s.span[i] = [2]uint32{uint32(start), uint32(len(s.enc))}
		s.made |= 1 << i
	}
	return s.enc[s.span[i][0]:s.span[i][1]]
}

// tsIndex maps ts to 0..3; the items' are checked, and anything else
// returns both timestamps.
func tsIndex(ts ua.TimestampsToReturn) uint {
	if ts < ua.TimestampsToReturnSource || ts > ua.TimestampsToReturnNeither {
		return uint(ua.TimestampsToReturnBoth)
	}
	return uint(ts)
}

// appendValue appends the encoding of dv with the timestamps ts asks for
// and the InfoType bits ov added to its status.
func appendValue(b []byte, dv *ua.DataValue, ts ua.TimestampsToReturn, ov ua.StatusCode) []byte {
	v := *dv
	switch ts {
	case ua.TimestampsToReturnSource:
		v.ServerTimestamp = time.Time{}
	case ua.TimestampsToReturnServer:
		v.SourceTimestamp = time.Time{}
	case ua.TimestampsToReturnNeither:
		v.SourceTimestamp, v.ServerTimestamp = time.Time{}, time.Time{}
	}
	v.Status |= ov
	return v.Encode(b)
}

// queued is a notification in an item's queue: the sample, with the
// client handle and timestamps to return of the item when it was queued,
// and the overflow bits to add to the value's status.
type queued struct {
	s      *sample
	handle uint32
	ts     ua.TimestampsToReturn
	ov     ua.StatusCode
}

// releaseQueued releases the samples of q and clears it.
func (m *Manager) releaseQueued(q []queued) {
	m.queuedCount -= len(q)
	for i := range q {
		m.release(q[i].s)
		q[i] = queued{}
	}
}

// encodedDCN is a DataChangeNotification in its binary encoding, built by
// publishTo straight from the items' queues: the notifications are not
// copied into a MonitoredItems slice, and the message kept for Republish
// is these bytes, not a structure per value.
type encodedDCN struct {
	b []byte
	n int // notifications in b
}

// start begins an empty notification.
func (e *encodedDCN) start() {
	e.b = append(e.b[:0], 0, 0, 0, 0) // MonitoredItems length, set by finish
	e.n = 0
}

// add appends the notifications q: each the client handle and the
// sample's encoding, made once per sample and copied (encoded again only
// with overflow bits).
func (e *encodedDCN) add(q []queued) {
	for i := range q {
		n := &q[i]
		e.b = binary.LittleEndian.AppendUint32(e.b, n.handle)
		if n.ov == 0 {
			e.b = append(e.b, n.s.encoded(n.ts)...)
		} else {
			e.b = appendValue(e.b, &n.s.dv, n.ts, n.ov)
		}
	}
	e.n += len(q)
}

// finish sets the length and appends the null DiagnosticInfos.
func (e *encodedDCN) finish() {
	binary.LittleEndian.PutUint32(e.b, uint32(e.n))
	e.b = ua.AppendArrayLen(e.b, 0, true)
}

// BinaryEncodingID returns the id of DataChangeNotification's encoding.
func (e *encodedDCN) BinaryEncodingID() ua.NodeID {
	return ua.NewNumericNodeID(0, id.DataChangeNotification_Encoding_DefaultBinary)
}

// Encode appends the encoded notification.
func (e *encodedDCN) Encode(b []byte) []byte { return append(b, e.b...) }

// Decode reads a DataChangeNotification (e is never registered for
// decoding; this completes ua.Body).
func (e *encodedDCN) Decode(d *ua.Decoder) {
	var dcn ua.DataChangeNotification
	dcn.Decode(d)
	if d.Err() == nil {
		e.b, e.n = dcn.Encode(e.b[:0]), len(dcn.MonitoredItems)
	}
}

// newMessage returns a NotificationMessage holding one encodedDCN, reused
// from a message that left the retransmission queue if there is one.
func (sub *subscription) newMessage() ua.NotificationMessage {
	if n := len(sub.spare); n > 0 {
		msg := sub.spare[n-1]
		sub.spare[n-1] = ua.NotificationMessage{}
		sub.spare = sub.spare[:n-1]
		return msg
	}
	return ua.NotificationMessage{
		NotificationData: []ua.ExtensionObject{{Body: &encodedDCN{}}},
	}
}

// recycle takes back msg, a message that left the retransmission queue,
// for newMessage. Nothing else may refer to it any more: Republish answers
// with a copy (cloneMessage).
func (sub *subscription) recycle(msg ua.NotificationMessage) {
	if len(msg.NotificationData) != 1 || len(sub.spare) >= 2 {
		return
	}
	if _, ok := msg.NotificationData[0].Body.(*encodedDCN); !ok {
		return
	}
	msg.SequenceNumber, msg.PublishTime = 0, time.Time{}
	sub.spare = append(sub.spare, msg)
}

// cloneMessage returns a copy of msg that shares no storage the manager
// reuses.
func cloneMessage(msg ua.NotificationMessage) ua.NotificationMessage {
	out := msg
	out.NotificationData = make([]ua.ExtensionObject, len(msg.NotificationData))
	for i, eo := range msg.NotificationData {
		if e, ok := eo.Body.(*encodedDCN); ok {
			eo.Body = &encodedDCN{b: slices.Clone(e.b), n: e.n}
		}
		out.NotificationData[i] = eo
	}
	return out
}
