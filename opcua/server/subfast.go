package server

import (
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
)

// The steady-state data path of subscriptions, sample → publish, is kept
// free of allocations: the items on one variable share one Read per
// image; a NotificationMessage's DataChangeNotification, its
// ExtensionObject slice and its MonitoredItems storage come back for reuse
// once the message leaves the retransmission queue.

// srcBatch is the changes of one SourceChanged call: those of source src
// in changed (or work) up to end, to sample in snap, the image that
// carried them (nil: the source's current one).
type srcBatch struct {
	src  addrspace.SourceID
	snap addrspace.Snapshot
	end  int
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

// newMessage returns a NotificationMessage holding one empty
// DataChangeNotification, reused from an acknowledged one if there is one.
func (sub *subscription) newMessage() ua.NotificationMessage {
	if n := len(sub.spare); n > 0 {
		msg := sub.spare[n-1]
		sub.spare[n-1] = ua.NotificationMessage{}
		sub.spare = sub.spare[:n-1]
		return msg
	}
	return ua.NotificationMessage{
		NotificationData: []ua.ExtensionObject{{Body: &ua.DataChangeNotification{}}},
	}
}

// recycle takes back msg, a message that left the retransmission queue,
// for newMessage. Nothing else may refer to it any more: Republish answers
// with a copy (cloneMessage).
func (sub *subscription) recycle(msg ua.NotificationMessage) {
	if len(msg.NotificationData) != 1 || len(sub.spare) >= 2 {
		return
	}
	dcn, ok := msg.NotificationData[0].Body.(*ua.DataChangeNotification)
	if !ok {
		return
	}
	clear(dcn.MonitoredItems) // no values kept alive
	dcn.MonitoredItems = dcn.MonitoredItems[:0]
	dcn.DiagnosticInfos = nil
	msg.SequenceNumber, msg.PublishTime = 0, time.Time{}
	sub.spare = append(sub.spare, msg)
}

// cloneMessage returns a copy of msg that shares no storage the manager
// reuses.
func cloneMessage(msg ua.NotificationMessage) ua.NotificationMessage {
	out := msg
	out.NotificationData = make([]ua.ExtensionObject, len(msg.NotificationData))
	for i, eo := range msg.NotificationData {
		if dcn, ok := eo.Body.(*ua.DataChangeNotification); ok {
			c := *dcn
			c.MonitoredItems = append([]ua.MonitoredItemNotification(nil), dcn.MonitoredItems...)
			eo.Body = &c
		}
		out.NotificationData[i] = eo
	}
	return out
}
