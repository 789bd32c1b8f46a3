package subs

import (
	"time"

	"github.com/edged/edged/opcua/ua"
)

// The run loop's sampling is budgeted: it takes Limits.SamplesPerCycle
// samples per base cycle, and a session its share of them, the budget
// divided among the sessions that have subscriptions. Both are token
// buckets, refilled at that rate as time passes and holding at most
// budgetBurst cycles' worth: images come once a cycle with the engine's jitter, and a
// late image followed by one on time is two images' sampling within less
// than a cycle, which the budget must not take for a session asking too
// much. An item due beyond its session's share waits in the session's
// backlog, oldest first, for what the budget has left, shared evenly among
// the sessions with a backlog, or for the next refill; it is then sampled
// in the images current by then, so that a session that asks for more
// sampling than the budget gets its values at a slower rate (the changes
// in between are not seen) instead of slowing every other session, the
// service calls and the scan. The notifications a cycle makes are bounded
// by its samples, and with them the publishing work.

// budgetBurst is how many cycles' worth of samples a bucket holds.
const budgetBurst = 4

// refill adds to the budget the samples of the time since the last refill:
// the whole budget and each session's share of it. A bucket starts with one
// cycle's worth; a clock going back adds nothing.
func (m *Manager) refill(now time.Time) {
	n := 0
	for _, ss := range m.sessions {
		if len(ss.subs) > 0 {
			n++
		}
	}
	budget := float64(m.lim.SamplesPerCycle)
	share := max(budget/float64(max(n, 1)), 1)
	cycles := 1.0
	if !m.refilled.IsZero() {
		cycles = float64(now.Sub(m.refilled)) / float64(m.lim.MinPublishingInterval)
		if cycles <= 0 {
			return
		}
	}
	m.refilled = now
	m.credit = min(m.credit+cycles*budget, budgetBurst*budget)
	for _, ss := range m.sessions {
		if !ss.refilled {
			ss.refilled, ss.credit = true, share
			continue
		}
		ss.credit = min(ss.credit+cycles*share, budgetBurst*share)
	}
}

// admit reports whether it may be sampled now, within its session's share
// of the budget; if not, it goes to the session's backlog. While the
// session has a backlog, its items queue behind the ones waiting there, so
// that none waits longer than the others.
func (m *Manager) admit(it *monItem) bool {
	if it.backlogged {
		return false
	}
	ss := it.sub.ss
	if len(ss.backlog) == 0 && ss.credit >= 1 && m.credit >= 1 {
		ss.credit--
		m.credit--
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
// session's share of the budget taken while the changes come in: between
// two slices the run loop answers the service calls waiting for it.
const drainSlice = 1000

// drainBacklogs samples backlogged items, in the current images, with what
// is left of the budget, shared evenly among the sessions that have a
// backlog, slice samples at most; it reports whether there is more to do
// now (rather than after the next refill). Between service calls the run
// loop drains drainSlice at a time; a round of source changes, once the
// sessions within their shares sampled its images, drains all the budget
// allows at once, as its images would take: a backlog drained at once
// samples the image that was just sampled for the others, and the session
// is back to sampling images itself at the next one.
func (m *Manager) drainBacklogs(now time.Time, slice int) bool {
	if !m.hasBacklog() {
		// The common case, every image: no hook lock (SourceChanged's,
		// on the engine's goroutine), no read context reset.
		return false
	}
	m.hookMu.Lock()
	seq := m.batchSeq // the items are sampled in images newer than the pending changes
	m.hookMu.Unlock()
	m.rc.Reset()
	defer m.endDrain()
	for {
		left := min(int(m.credit), slice)
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
			return slice == 0 && m.credit >= 1
		}
		share := max(left/n, 1)
		for _, ss := range m.sessions {
			if len(ss.backlog) == 0 {
				continue
			}
			k := min(share, len(ss.backlog), int(m.credit), slice)
			if k <= 0 {
				break
			}
			m.sampleBacklog(ss.backlog[:k], seq, now)
			ss.credit = max(ss.credit-float64(k), 0)
			m.credit -= float64(k)
			slice -= k
			rest := copy(ss.backlog, ss.backlog[k:])
			clear(ss.backlog[rest:])
			ss.backlog = ss.backlog[:rest]
		}
	}
}

// sampleBacklog samples the items of list in the current images. Items on
// one node share one Read and its sample, as in sampleKey, across the
// sessions' backlogs too (m.drained, kept until the drain ends): the
// backlogs of many sessions hold the same variables in the same order,
// and a backlog read per item would cost each session what an image costs
// them all, so a backlog once made would never drain.
func (m *Manager) sampleBacklog(list []*monItem, seq uint64, now time.Time) {
	for i, it := range list {
		it.backlogged = false
		if it.deleted || it.mode == ua.MonitoringModeDisabled {
			continue
		}
		it.after = max(it.after, seq)
		if it.ownRead {
			m.sample(it, now)
		} else {
			d, ok := m.drained[it.key]
			if !ok || *d.node != it.rv.NodeID {
				if ok {
					m.release(d.s)
				}
				d = drainedRead{m.newSample(), &it.rv.NodeID}
				m.space.Read(&m.rc, &it.rv, ua.TimestampsToReturnBoth, &d.s.dv)
				m.drained[it.key] = d
			}
			m.sampled(it, d.s, now)
		}
		if i%64 == 63 {
			m.yield()
		}
	}
}

// drainedRead is a Read that sampleBacklog shares among the items on node.
type drainedRead struct {
	s    *sample
	node *ua.NodeID // of an item in the backlog being drained
}

// endDrain lets go of the samples sampleBacklog shared.
func (m *Manager) endDrain() {
	for _, d := range m.drained {
		m.release(d.s)
	}
	clear(m.drained)
}
