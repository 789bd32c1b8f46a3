package subs

import (
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// The Subscription (§5.13) and MonitoredItem (§5.12) service sets, one
// method each, called by the server's service table with the session of
// the request, the decoded request and the response to fill (its
// ResponseHeader filled already). Each runs its work on the run loop
// (Manager.call) while the caller waits, so the closures may use the
// caller's request and response values. An error is a status code for a
// ServiceFault.

// onLoop runs f on the run loop and returns its error, or Bad_Shutdown.
func (m *Manager) onLoop(f func() error) error {
	var err error
	if cerr := m.call(func() { err = f() }); cerr != nil {
		return cerr
	}
	return err
}

// subOf returns the subscription id of session s, nil if it has none.
func (m *Manager) subOf(s Session, id uint32) *subscription {
	sub := m.subs[id]
	if sub == nil || sub.ss.sess != s {
		return nil
	}
	return sub
}

// eachSub answers a request that names subscriptions by id, one result
// per id: Bad_SubscriptionIdInvalid for an id that is not one of s's
// subscriptions, else what f returns for it. It runs on the manager.
func (m *Manager) eachSub(s Session, ids []uint32, results []ua.StatusCode, f func(*subscription) ua.StatusCode) {
	for i, id := range ids {
		if sub := m.subOf(s, id); sub != nil {
			results[i] = f(sub)
		} else {
			results[i] = status.BadSubscriptionIDInvalid
		}
	}
}

// CreateSubscription answers CreateSubscription for session s.
func (m *Manager) CreateSubscription(s Session, req *ua.CreateSubscriptionRequest, resp *ua.CreateSubscriptionResponse) error {
	return m.onLoop(func() error {
		ss := m.sessionState(s)
		if len(ss.subs) >= m.lim.MaxSubscriptionsPerSession ||
			len(m.subs) >= m.lim.MaxSubscriptions && !m.reclaim(ss) {
			return status.BadTooManySubscriptions
		}
		m.active.Store(true)
		m.nextSubID++
		for m.nextSubID == 0 || m.subs[m.nextSubID] != nil {
			m.nextSubID++
		}
		sub := &subscription{
			id:       m.nextSubID,
			ss:       ss,
			interval: m.revisePublishing(req.RequestedPublishingInterval),
			maxNotif: m.reviseMaxNotif(req.MaxNotificationsPerPublish),
			priority: req.Priority,
			enabled:  req.PublishingEnabled,
			items:    make(map[uint32]*monItem),
			first:    true,
		}
		sub.keepAlive, sub.lifetime = m.reviseCounts(req.RequestedMaxKeepAliveCount, req.RequestedLifetimeCount)
		sub.next = time.Now().Add(sub.interval)
		m.subs[sub.id] = sub
		ss.subs = append(ss.subs, sub)
		m.current.Add(1)
		m.cumulated.Add(1)
		resp.SubscriptionID = sub.id
		resp.RevisedPublishingInterval = durMS(sub.interval)
		resp.RevisedLifetimeCount = sub.lifetime
		resp.RevisedMaxKeepAliveCount = sub.keepAlive
		return nil
	})
}

// ModifySubscription answers ModifySubscription for session s.
func (m *Manager) ModifySubscription(s Session, req *ua.ModifySubscriptionRequest, resp *ua.ModifySubscriptionResponse) error {
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		sub.interval = m.revisePublishing(req.RequestedPublishingInterval)
		sub.keepAlive, sub.lifetime = m.reviseCounts(req.RequestedMaxKeepAliveCount, req.RequestedLifetimeCount)
		sub.maxNotif = m.reviseMaxNotif(req.MaxNotificationsPerPublish)
		sub.priority = req.Priority
		now := time.Now()
		sub.next = now.Add(sub.interval)
		for _, it := range sub.items {
			switch {
			case it.pubRate:
				m.followPublishing(it, now)
			case it.key == (srcKey{}):
				m.schedule(it, now) // aligned with the new cycle
			}
		}
		resp.RevisedPublishingInterval = durMS(sub.interval)
		resp.RevisedLifetimeCount = sub.lifetime
		resp.RevisedMaxKeepAliveCount = sub.keepAlive
		return nil
	})
}

// SetPublishingMode answers SetPublishingMode for session s.
func (m *Manager) SetPublishingMode(s Session, req *ua.SetPublishingModeRequest, resp *ua.SetPublishingModeResponse) error {
	if len(req.SubscriptionIDs) == 0 {
		return status.BadNothingToDo
	}
	return m.onLoop(func() error {
		resp.Results = ua.Resize(resp.Results, len(req.SubscriptionIDs))
		resp.DiagnosticInfos = nil
		m.eachSub(s, req.SubscriptionIDs, resp.Results, func(sub *subscription) ua.StatusCode {
			sub.enabled = req.PublishingEnabled
			return status.Good
		})
		return nil
	})
}

// Publish queues the Publish request reqID of channel ch on the session
// (§5.13.5) and returns ErrAsync: the run loop answers it later with
// ch.PostResponse, unless the session has no subscription
// (Bad_NoSubscription) or already MaxPublishRequestsPerSession queued
// (Bad_TooManyPublishRequests).
func (m *Manager) Publish(s Session, ch Channel, reqID uint32, req *ua.PublishRequest) error {
	pr := pubReq{ch: ch, reqID: reqID, handle: req.RequestHeader.RequestHandle}
	if req.RequestHeader.TimeoutHint > 0 {
		pr.deadline = time.Now().Add(time.Duration(req.RequestHeader.TimeoutHint) * time.Millisecond)
	}
	err := m.onLoop(func() error {
		if s.Closed() {
			return status.BadSessionClosed // timed out since the lookup
		}
		ss := m.sessionState(s)
		pr.results = m.acknowledge(ss, req.SubscriptionAcknowledgements)
		if len(ss.subs) == 0 && len(ss.pending) == 0 {
			return status.BadNoSubscription
		}
		if len(ss.queue) >= m.lim.MaxPublishRequestsPerSession {
			return status.BadTooManyPublishRequests
		}
		ss.queue = append(ss.queue, pr)
		for _, sub := range ss.subs {
			sub.lifetimeCtr = 0
		}
		m.serveLate(ss, time.Now())
		return nil
	})
	if err != nil {
		return err
	}
	return ErrAsync
}

// Republish answers Republish for session s.
func (m *Manager) Republish(s Session, req *ua.RepublishRequest, resp *ua.RepublishResponse) error {
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		i := slices.IndexFunc(sub.retrans, func(n ua.NotificationMessage) bool { return n.SequenceNumber == req.RetransmitSequenceNumber })
		if i < 0 {
			return status.BadMessageNotAvailable
		}
		sub.lifetimeCtr = 0
		resp.NotificationMessage = cloneMessage(sub.retrans[i]) // the manager reuses the original
		return nil
	})
}

// DeleteSubscriptions answers DeleteSubscriptions for session s.
func (m *Manager) DeleteSubscriptions(s Session, req *ua.DeleteSubscriptionsRequest, resp *ua.DeleteSubscriptionsResponse) error {
	if len(req.SubscriptionIDs) == 0 {
		return status.BadNothingToDo
	}
	return m.onLoop(func() error {
		resp.Results = ua.Resize(resp.Results, len(req.SubscriptionIDs))
		resp.DiagnosticInfos = nil
		m.eachSub(s, req.SubscriptionIDs, resp.Results, func(sub *subscription) ua.StatusCode {
			m.deleteSub(sub)
			return status.Good
		})
		if ss := m.sessions[s]; ss != nil {
			m.serveLate(ss, time.Now())
		}
		return nil
	})
}

// TransferSubscriptions moves subscriptions of another session of the same
// user to this one (§5.13.7); the old session gets a
// StatusChangeNotification Good_SubscriptionTransferred, unless it is
// closed (its subscriptions outlived it, see Manager.sessionClosed).
func (m *Manager) TransferSubscriptions(s Session, req *ua.TransferSubscriptionsRequest, resp *ua.TransferSubscriptionsResponse) error {
	if len(req.SubscriptionIDs) == 0 {
		return status.BadNothingToDo
	}
	me := s.User()
	return m.onLoop(func() error {
		resp.Results = make([]ua.TransferResult, len(req.SubscriptionIDs))
		resp.DiagnosticInfos = nil
		ss := m.sessionState(s)
		now := time.Now()
		for i, id := range req.SubscriptionIDs {
			sub := m.subs[id]
			if sub == nil {
				resp.Results[i].StatusCode = status.BadSubscriptionIDInvalid
				continue
			}
			old := sub.ss
			if old.sess.User() != me {
				resp.Results[i].StatusCode = status.BadUserAccessDenied
				continue
			}
			if old != ss {
				// The receiving session's limits hold for what it takes over.
				if len(ss.subs) >= m.lim.MaxSubscriptionsPerSession {
					resp.Results[i].StatusCode = status.BadTooManySubscriptions
					continue
				}
				if ss.itemCount()+len(sub.items) > m.lim.MaxMonitoredItemsPerSession {
					resp.Results[i].StatusCode = status.BadTooManyMonitoredItems
					continue
				}
			}
			resp.Results[i].AvailableSequenceNumbers = sub.available()
			if old != ss {
				old.subs = slices.DeleteFunc(old.subs, func(x *subscription) bool { return x == sub })
				if old.orphan {
					m.dropOrphan(old)
				} else {
					// The status change is a NotificationMessage of the
					// subscription: it takes a sequence number of its own
					// (§5.13.1.1), the new session's messages go on after it.
					sub.seq = sub.nextSeq()
					old.pending = append(old.pending, statusMsg{sub.id, sub.seq, status.GoodSubscriptionTransferred})
					m.serveLate(old, now)
				}
				sub.ss = ss
				ss.subs = append(ss.subs, sub)
				sub.lifetimeCtr = 0
			}
			if req.SendInitialValues {
				for _, it := range sub.items {
					if it.last != nil && it.mode == ua.MonitoringModeReporting {
						m.enqueue(it, it.last)
					}
				}
			}
		}
		m.clearTouched()
		return nil
	})
}

// CreateMonitoredItems answers CreateMonitoredItems for session s.
func (m *Manager) CreateMonitoredItems(s Session, req *ua.CreateMonitoredItemsRequest, resp *ua.CreateMonitoredItemsResponse) error {
	if err := m.checkItemsRequest(req.TimestampsToReturn, len(req.ItemsToCreate)); err != nil {
		return err
	}
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		resp.Results = make([]ua.MonitoredItemCreateResult, len(req.ItemsToCreate))
		resp.DiagnosticInfos = nil
		now := time.Now()
		m.rc.Reset()
		for i := range req.ItemsToCreate {
			resp.Results[i] = m.createItem(sub, &req.ItemsToCreate[i], req.TimestampsToReturn, now)
		}
		// The first values go out with the next publishing cycle.
		m.clearTouched()
		return nil
	})
}

// createItem creates one monitored item of sub.
func (m *Manager) createItem(sub *subscription, r *ua.MonitoredItemCreateRequest, ts ua.TimestampsToReturn, now time.Time) ua.MonitoredItemCreateResult {
	var res ua.MonitoredItemCreateResult
	if len(sub.items) >= m.lim.MaxMonitoredItemsPerSubscription || sub.ss.itemCount() >= m.lim.MaxMonitoredItemsPerSession ||
		m.itemCount >= m.lim.MaxMonitoredItems && !m.reclaim(sub.ss) {
		res.StatusCode = status.BadTooManyMonitoredItems
		return res
	}
	if r.MonitoringMode < ua.MonitoringModeDisabled || r.MonitoringMode > ua.MonitoringModeReporting {
		res.StatusCode = status.BadMonitoringModeInvalid
		return res
	}
	// A Read checks the node, the attribute, the index range and the
	// encoding; the value's own status (BadNotReadable, ...) goes to the
	// client in the first notification instead.
	var dv ua.DataValue
	m.space.Read(&m.rc, &r.ItemToMonitor, ua.TimestampsToReturnBoth, &dv)
	switch dv.Status.Code() {
	case status.BadNodeIDUnknown, status.BadNodeIDInvalid, status.BadAttributeIDInvalid,
		status.BadIndexRangeInvalid, status.BadDataEncodingInvalid, status.BadDataEncodingUnsupported:
		res.StatusCode = dv.Status
		return res
	}
	n := m.space.Node(r.ItemToMonitor.NodeID)
	if n == nil {
		res.StatusCode = status.BadNodeIDUnknown
		return res
	}
	var ip itemParams
	var key srcKey
	var st ua.StatusCode
	var filter *events.Filter
	if ua.AttributeID(r.ItemToMonitor.AttributeID) == ua.AttributeIDEventNotifier {
		ip, filter, res.FilterResult, st = m.reviseEventItem(sub, n, &r.RequestedParameters)
	} else {
		ip, key, st = m.reviseItem(sub, n, ua.AttributeID(r.ItemToMonitor.AttributeID), &r.RequestedParameters)
	}
	if st != status.Good {
		res.StatusCode = st
		return res
	}
	m.nextItemID++
	it := &monItem{
		id:     m.nextItemID,
		sub:    sub,
		rv:     r.ItemToMonitor,
		ts:     ts,
		mode:   r.MonitoringMode,
		handle: r.RequestedParameters.ClientHandle,
	}
	it.rv.IndexRange = strings.Clone(it.rv.IndexRange) // out of the request buffer it may share
	it.rv.NodeID = n.ID
	if filter != nil {
		it.ev = &eventItem{filter: filter}
		m.eventItems = append(m.eventItems, it)
	}
	m.apply(it, ip, key)
	sub.items[it.id] = it
	m.itemCount++
	m.created.Add(1)
	if key != (srcKey{}) {
		m.bySource[key] = append(m.bySource[key], it)
	}
	if it.mode != ua.MonitoringModeDisabled {
		m.sample(it, now)
		m.sampledNow(it)
	}
	m.schedule(it, now)
	res.MonitoredItemID = it.id
	res.RevisedSamplingInterval = durMS(it.interval)
	res.RevisedQueueSize = uint32(it.qsize)
	return res
}

// checkItemsRequest checks what CreateMonitoredItems and
// ModifyMonitoredItems have in common: their TimestampsToReturn and the
// number of items, n.
func (m *Manager) checkItemsRequest(ttr ua.TimestampsToReturn, n int) error {
	switch {
	case !ttr.IsValid():
		return status.BadTimestampsToReturnInvalid
	case n == 0:
		return status.BadNothingToDo
	}
	return ua.CheckOperations(n, m.lim.MaxMonitoredItemsPerCall)
}

// ModifyMonitoredItems answers ModifyMonitoredItems for session s.
func (m *Manager) ModifyMonitoredItems(s Session, req *ua.ModifyMonitoredItemsRequest, resp *ua.ModifyMonitoredItemsResponse) error {
	if err := m.checkItemsRequest(req.TimestampsToReturn, len(req.ItemsToModify)); err != nil {
		return err
	}
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		resp.Results = make([]ua.MonitoredItemModifyResult, len(req.ItemsToModify))
		resp.DiagnosticInfos = nil
		now := time.Now()
		for i := range req.ItemsToModify {
			r := &req.ItemsToModify[i]
			res := &resp.Results[i]
			it := sub.items[r.MonitoredItemID]
			if it == nil {
				res.StatusCode = status.BadMonitoredItemIDInvalid
				continue
			}
			n := m.space.Node(it.rv.NodeID)
			if n == nil {
				res.StatusCode = status.BadNodeIDUnknown
				continue
			}
			var ip itemParams
			var key srcKey
			var st ua.StatusCode
			var filter *events.Filter
			if it.ev != nil {
				ip, filter, res.FilterResult, st = m.reviseEventItem(sub, n, &r.RequestedParameters)
			} else {
				ip, key, st = m.reviseItem(sub, n, ua.AttributeID(it.rv.AttributeID), &r.RequestedParameters)
			}
			if st != status.Good {
				res.StatusCode = st
				continue
			}
			if filter != nil {
				it.ev.filter = filter
				if len(it.ev.queue) > ip.qsize {
					m.queuedCount -= len(it.ev.queue) - ip.qsize
					it.ev.queue = slices.Delete(it.ev.queue, 0, len(it.ev.queue)-ip.qsize)
				}
			}
			m.apply(it, ip, key)
			m.schedule(it, now)
			it.ts = req.TimestampsToReturn
			it.handle = r.RequestedParameters.ClientHandle
			res.RevisedSamplingInterval = durMS(it.interval)
			res.RevisedQueueSize = uint32(it.qsize)
		}
		return nil
	})
}

// SetMonitoringMode answers SetMonitoringMode for session s.
func (m *Manager) SetMonitoringMode(s Session, req *ua.SetMonitoringModeRequest, resp *ua.SetMonitoringModeResponse) error {
	switch {
	case len(req.MonitoredItemIDs) == 0:
		return status.BadNothingToDo
	case req.MonitoringMode < ua.MonitoringModeDisabled || req.MonitoringMode > ua.MonitoringModeReporting:
		return status.BadMonitoringModeInvalid
	}
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		resp.Results = ua.Resize(resp.Results, len(req.MonitoredItemIDs))
		resp.DiagnosticInfos = nil
		now := time.Now()
		m.rc.Reset()
		for i, id := range req.MonitoredItemIDs {
			it := sub.items[id]
			if it == nil {
				resp.Results[i] = status.BadMonitoredItemIDInvalid
				continue
			}
			resp.Results[i] = status.Good
			old := it.mode
			it.mode = req.MonitoringMode
			switch {
			case it.mode == ua.MonitoringModeDisabled:
				m.forget(it)
				m.unschedule(it)
			case old == ua.MonitoringModeDisabled:
				m.sample(it, now)
				m.sampledNow(it)
				m.schedule(it, now)
			case it.mode == ua.MonitoringModeReporting && it.pending() && !it.inReady:
				it.inReady = true
				sub.ready = append(sub.ready, it)
			}
		}
		m.clearTouched()
		return nil
	})
}

// SetTriggering answers SetTriggering for session s.
func (m *Manager) SetTriggering(s Session, req *ua.SetTriggeringRequest, resp *ua.SetTriggeringResponse) error {
	if len(req.LinksToAdd) == 0 && len(req.LinksToRemove) == 0 {
		return status.BadNothingToDo
	}
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		trig := sub.items[req.TriggeringItemID]
		if trig == nil {
			return status.BadMonitoredItemIDInvalid
		}
		resp.AddResults = make([]ua.StatusCode, len(req.LinksToAdd))
		resp.RemoveResults = make([]ua.StatusCode, len(req.LinksToRemove))
		resp.AddDiagnosticInfos, resp.RemoveDiagnosticInfos = nil, nil
		for i, id := range req.LinksToRemove {
			it := sub.items[id]
			j := slices.Index(trig.links, it)
			if it == nil || j < 0 {
				resp.RemoveResults[i] = status.BadMonitoredItemIDInvalid
				continue
			}
			trig.links = slices.Delete(trig.links, j, j+1)
		}
		for i, id := range req.LinksToAdd {
			it := sub.items[id]
			if it == nil {
				resp.AddResults[i] = status.BadMonitoredItemIDInvalid
				continue
			}
			if !slices.Contains(trig.links, it) {
				trig.links = append(trig.links, it)
				sub.linked = true
			}
		}
		return nil
	})
}

// DeleteMonitoredItems answers DeleteMonitoredItems for session s.
func (m *Manager) DeleteMonitoredItems(s Session, req *ua.DeleteMonitoredItemsRequest, resp *ua.DeleteMonitoredItemsResponse) error {
	if len(req.MonitoredItemIDs) == 0 {
		return status.BadNothingToDo
	}
	return m.onLoop(func() error {
		sub := m.subOf(s, req.SubscriptionID)
		if sub == nil {
			return status.BadSubscriptionIDInvalid
		}
		resp.Results = ua.Resize(resp.Results, len(req.MonitoredItemIDs))
		resp.DiagnosticInfos = nil
		for i, id := range req.MonitoredItemIDs {
			it := sub.items[id]
			if it == nil {
				resp.Results[i] = status.BadMonitoredItemIDInvalid
				continue
			}
			m.removeItem(it)
			resp.Results[i] = status.Good
		}
		return nil
	})
}
