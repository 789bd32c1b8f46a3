package server

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
// image; publishTo encodes the DataChangeNotification straight from the
// items' queues (encodedDCN), and a NotificationMessage with its encoding
// buffer comes back for reuse once it leaves the retransmission queue.

// srcBatch is the changes of one SourceChanged call: those of source src
// in changed (or work) up to end, to sample in snap, the image that
// carried them (nil: the source's current one).
type srcBatch struct {
	src  addrspace.SourceID
	snap addrspace.Snapshot
	end  int
}

// maxPendingImages bounds the images SourceChanged keeps for the run loop
// (80 ms of a 5 ms engine); beyond it the changes of the newest calls are
// sampled in the images current when the run loop gets to them.
const maxPendingImages = 16

// addBatch closes the batch of the changes SourceChanged just added, to
// sample in snap; called under hookMu.
func (m *subMgr) addBatch(src addrspace.SourceID, snap addrspace.Snapshot) {
	if n := len(m.batches); n >= maxPendingImages {
		last := &m.batches[n-1]
		last.end, last.snap = len(m.changed), nil
		return
	}
	m.batches = append(m.batches, srcBatch{src, snap, len(m.changed)})
}

// source returns the ValueSource src, from the Space the first time and
// then without its lock: the engine's goroutine calls SourceChanged and
// must not wait for a Read or Write request.
func (m *subMgr) source(src addrspace.SourceID) addrspace.ValueSource {
	i := int(src) - 1
	if p := m.sources.Load(); p != nil && i >= 0 && i < len(*p) && (*p)[i] != nil {
		return (*p)[i]
	}
	vs := m.srv.as.Source(src)
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
// each would read the same DataValue.
func (m *subMgr) sampleKey(k srcKey, now time.Time, slack time.Duration) {
	var node *ua.NodeID // the node m.shared was read from
	for _, it := range m.bySource[k] {
		if it.mode == ua.MonitoringModeDisabled {
			continue
		}
		if !it.due(now, slack) {
			if !it.deferred {
				it.deferred = true
				m.deferred = append(m.deferred, it)
			}
			continue
		}
		if it.rv.IndexRange != "" || it.rv.DataEncoding != (ua.QualifiedName{}) {
			m.sample(it, now)
			continue
		}
		if node == nil || *node != it.rv.NodeID {
			node = &it.rv.NodeID
			m.shared = ua.DataValue{}
			m.srv.as.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &m.shared)
		}
		m.sampled(it, &m.shared, now)
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

// add appends the notifications ns.
func (e *encodedDCN) add(ns []ua.MonitoredItemNotification) {
	for i := range ns {
		e.b = ns[i].Encode(e.b)
	}
	e.n += len(ns)
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
