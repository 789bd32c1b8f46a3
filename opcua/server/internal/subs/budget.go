package subs

import (
	"time"

	"github.com/edged/edged/opcua/ua"
)

// The run loop's sampling is budgeted: in each round (one base cycle) it
// takes at most Limits.SamplesPerCycle samples, and a session at most its
// share of them, the budget divided among the sessions that have
// subscriptions. An item due beyond its session's share waits in the
// session's backlog, oldest first, for what the round has left, shared
// evenly among the sessions with a backlog, or for the next round; it is
// then sampled in the images current by then, so that a session that asks
// for more sampling than the budget gets its values at a slower rate (the
// changes in between are not seen) instead of slowing every other
// session, the service calls and the scan. The notifications a round
// makes are bounded by its samples, and with them the publishing work.

// startRound begins a round of the sampling budget once half a base cycle
// has passed since the last one began: images come once a cycle, with the
// engine's jitter, and each has a round of its own (at most two a cycle).
func (m *Manager) startRound(now time.Time) {
	if now.Sub(m.roundStart) < m.lim.MinPublishingInterval/2 && !now.Before(m.roundStart) {
		return
	}
	m.roundStart, m.roundSpent = now, 0
	n := 0
	for _, ss := range m.sessions {
		ss.spent = 0
		if len(ss.subs) > 0 {
			n++
		}
	}
	m.quota = max(m.lim.SamplesPerCycle/max(n, 1), 1)
}

// admit reports whether it may be sampled now, within its session's share
// of the round; if not, it goes to the session's backlog. While the
// session has a backlog, its items queue behind the ones waiting there, so
// that none waits longer than the others.
func (m *Manager) admit(it *monItem) bool {
	if it.backlogged {
		return false
	}
	ss := it.sub.ss
	if len(ss.backlog) == 0 && ss.spent < m.quota && m.roundSpent < m.lim.SamplesPerCycle {
		ss.spent++
		m.roundSpent++
		return true
	}
	it.backlogged = true
	ss.backlog = append(ss.backlog, it)
	return false
}

// hasBacklog reports whether an item waits in a backlog.
func (m *Manager) hasBacklog() bool {
	for _, ss := range m.sessions {
		if len(ss.backlog) > 0 {
			return true
		}
	}
	return false
}

// drainSlice bounds the samples one call of drainBacklogs takes, and a
// session's share of a round taken while the changes come in: between two
// slices the run loop answers the service calls waiting for it.
const drainSlice = 1000

// drainBacklogs samples backlogged items, in the current images, with what
// is left of the round's budget, shared evenly among the sessions that
// have a backlog, drainSlice samples at most; it reports whether there is
// more to do in this round.
func (m *Manager) drainBacklogs(now time.Time) bool {
	if !m.hasBacklog() {
		// The common case, every image: no hook lock (SourceChanged's,
		// on the engine's goroutine), no read context reset.
		return false
	}
	m.hookMu.Lock()
	seq := m.batchSeq // the items are sampled in images newer than the pending changes
	m.hookMu.Unlock()
	m.rc.Reset()
	slice := drainSlice
	for {
		left := min(m.lim.SamplesPerCycle-m.roundSpent, slice)
		n := 0
		for _, ss := range m.sessions {
			if len(ss.backlog) > 0 {
				n++
			}
		}
		if n == 0 {
			return false
		}
		if left <= 0 {
			return slice == 0 && m.roundSpent < m.lim.SamplesPerCycle
		}
		share := max(left/n, 1)
		for _, ss := range m.sessions {
			if len(ss.backlog) == 0 {
				continue
			}
			k := min(share, len(ss.backlog), m.lim.SamplesPerCycle-m.roundSpent, slice)
			if k <= 0 {
				break
			}
			m.sampleBacklog(ss.backlog[:k], seq, now)
			ss.spent += k
			m.roundSpent += k
			slice -= k
			rest := copy(ss.backlog, ss.backlog[k:])
			clear(ss.backlog[rest:])
			ss.backlog = ss.backlog[:rest]
		}
	}
}

// sampleBacklog samples the items of list in the current images, sharing
// one Read among consecutive items on one node.
func (m *Manager) sampleBacklog(list []*monItem, seq uint64, now time.Time) {
	var s *sample
	var node *ua.NodeID
	for i, it := range list {
		it.backlogged = false
		if it.deleted || it.mode == ua.MonitoringModeDisabled {
			continue
		}
		it.after = max(it.after, seq)
		if it.ownRead {
			m.sample(it, now)
		} else {
			if node == nil || *node != it.rv.NodeID {
				m.release(s)
				s, node = m.newSample(), &it.rv.NodeID
				m.space.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &s.dv)
			}
			m.sampled(it, s, now)
		}
		if i%64 == 63 {
			m.yield()
		}
	}
	m.release(s)
}
