package subs

import (
	"errors"
	"slices"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// The server methods on a subscription of the calling session
// (GetMonitoredItems and ResendData of the Server object, OPC 10000-5
// §9.1, §9.2) and what the session services tell the engine.

// onCallerSub runs f on the run loop with the subscription subID of
// session s (nil: no session), and returns Good, or
// Bad_SubscriptionIdInvalid, Bad_UserAccessDenied (another session's, or
// no session), Bad_Shutdown.
func (m *Manager) onCallerSub(s Session, subID uint32, f func(*subscription)) ua.StatusCode {
	st := status.Good
	err := m.call(func() {
		sub := m.subs[subID]
		switch {
		case sub == nil:
			st = status.BadSubscriptionIDInvalid
		case s == nil || sub.ss.sess != s:
			st = status.BadUserAccessDenied
		default:
			f(sub)
		}
	})
	if err != nil {
		var code ua.StatusCode
		if errors.As(err, &code) {
			return code
		}
		return status.BadInternalError
	}
	return st
}

// sortedItems returns the items of sub in the order of their ids.
func sortedItems(sub *subscription) []*monItem {
	items := make([]*monItem, 0, len(sub.items))
	for _, it := range sub.items {
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *monItem) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return items
}

// MonitoredItems answers GetMonitoredItems for session s: the
// MonitoredItemIds of subscription subID's items and their client
// handles, in the order of the ids.
func (m *Manager) MonitoredItems(s Session, subID uint32) (serverHandles, clientHandles []uint32, st ua.StatusCode) {
	st = m.onCallerSub(s, subID, func(sub *subscription) {
		items := sortedItems(sub)
		serverHandles = make([]uint32, len(items))
		clientHandles = make([]uint32, len(items))
		for i, it := range items {
			serverHandles[i], clientHandles[i] = it.id, it.handle
		}
	})
	return serverHandles, clientHandles, st
}

// ResendData answers ResendData for session s: each Reporting item of
// subscription subID reads its current value, which becomes the item's
// last reported value, and queues it; the subscription publishes it in
// its next cycle.
func (m *Manager) ResendData(s Session, subID uint32) ua.StatusCode {
	return m.onCallerSub(s, subID, func(sub *subscription) {
		m.rc.Reset()
		for _, it := range sortedItems(sub) {
			if it.mode != ua.MonitoringModeReporting {
				continue
			}
			var dv ua.DataValue
			m.space.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &dv)
			m.report(it, &dv)
			m.sampledNow(it)
		}
		m.clearTouched()
	})
}

// SessionMoved tells the engine that ActivateSession bound s to another
// channel: the Publish requests it queued over the old one would swallow
// notifications and are dropped (answered if that channel is open).
func (m *Manager) SessionMoved(s Session) {
	if m.active.Load() {
		m.call(func() { m.sessionMoved(s, time.Now()) })
	}
}

// SessionClosed tells the engine that s was closed by CloseSession: its
// queued Publish requests get Bad_SessionClosed; with del its
// subscriptions are deleted, without it they live on (see sessionClosed).
func (m *Manager) SessionClosed(s Session, del bool) {
	if m.active.Load() {
		m.call(func() {
			if ss := m.sessions[s]; ss != nil {
				m.sessionClosed(ss, del, time.Now())
			}
		})
	}
}

// RunRound runs on the run loop the round the loop runs when it wakes at
// now: the pending source changes, then the publishing cycles that are
// due. Tests with a clock of their own (the server's FuzzServices) drive
// the engine with it.
func (m *Manager) RunRound(now time.Time) error {
	return m.call(func() {
		m.sourceChanges(now)
		m.tick(now)
	})
}
