package northbound

import (
	"runtime"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/sparkplug"
	"github.com/edged/edged/tsdb"
)

// span is what waits to be forwarded of one metric: its stored samples
// after from and before to (source times, Unix ns); to is 0 until the
// metric's birth after the outage says where live data resumed.
type span struct {
	m        *metric
	from, to int64
	wm       watermark // from, as published and as confirmed
	left     uint64    // samples left, as counted when the span closed
}

// Forwarding runs every replayEvery, one scan of the store per span for
// what the rate allows since, in DDATA of maxReplayBatch samples at most.
const (
	replayEvery    = 50 * time.Millisecond
	maxReplayBatch = 256
	countYield     = 1024 // samples counted between two yields
)

// outage notes, when a session that published ends, from where each
// stored metric is to be forwarded: after the last sample the broker
// confirmed (a mark answered); and takes forwarding in progress back to
// what was confirmed of it.
func (l *loop) outage() {
	if !l.born {
		return
	}
	l.born = false
	confirmed := l.conn.Confirmed()
	for _, sp := range l.spans {
		sp.from = sp.wm.confirmedAt(confirmed)
		sp.wm.reset(sp.from)
	}
	for _, d := range l.lay.devices {
		for _, m := range d.metrics {
			if !m.stored || m.wm.t == 0 {
				continue
			}
			from := m.wm.confirmedAt(confirmed)
			m.wm.reset(from)
			m.birthT = 0
			m.have = false
			if n := len(l.spans); n > 0 && l.spans[n-1].m == m && l.spans[n-1].to == 0 {
				continue // already waiting
			}
			sp := &span{m: m, from: from}
			sp.wm.reset(from)
			l.spans = append(l.spans, sp)
		}
	}
	if len(l.spans) > 0 && l.n.cnt.backlogFrom.Load() == 0 {
		l.n.cnt.backlogFrom.Store(l.spans[0].from)
	}
}

// startReplay is called after the births: forwarding starts from the next
// image the historian recorded after them.
func (l *loop) startReplay() {
	l.lastReplay = 0
	l.budget = 0
}

// tick is the start of the tick of the store's resolution holding ns.
func tick(ns int64) int64 { return ns - ((ns%tsdb.Resolution)+tsdb.Resolution)%tsdb.Resolution }

// replayStep forwards stored samples at the configured rate, as DDATA
// with is_historical, in time order per metric, between live messages.
func (l *loop) replayStep(now int64) {
	hs := l.n.opt.History
	if len(l.spans) == 0 || hs == nil || hs.Through() < l.birthImg {
		return // the historian has not recorded up to the births yet
	}
	if l.lastReplay == 0 {
		l.lastReplay = now
		l.closeSpans()
		return
	}
	if now-l.lastReplay < int64(replayEvery) {
		return
	}
	rate := float64(l.st.replayRate)
	l.budget = min(l.budget+rate*float64(now-l.lastReplay)/1e9, rate*replayEvery.Seconds()*2+1)
	l.lastReplay = now
	l.closeSpans()
	keep := l.spans[:0]
	for i, sp := range l.spans {
		if l.budget < 1 || sp.to == 0 || !sp.m.dev.online {
			keep = append(keep, sp)
			continue
		}
		if done := l.forward(sp, now); !done {
			keep = append(keep, sp)
		} else if i+1 < len(l.spans) {
			l.n.cnt.backlogFrom.Store(l.spans[i+1].from)
		}
	}
	clear(l.spans[len(keep):])
	l.spans = keep
	if len(l.spans) == 0 {
		l.n.cnt.backlog.Store(0)
		l.n.cnt.backlogFrom.Store(0)
	}
}

// closeSpans sets the end of the spans whose metric was born again, and
// counts their samples for the backlog.
func (l *loop) closeSpans() {
	for _, sp := range l.spans {
		if sp.to != 0 || sp.m.birthT == 0 || !sp.m.dev.online {
			continue
		}
		sp.to = sp.m.birthT
		n := uint64(0)
		l.n.opt.History.DB().Scan(sp.m.series, tick(sp.from)+tsdb.Resolution, tick(sp.to)-1, false, uint32(status.BadDataLost), func(*tsdb.Sample) bool {
			if n++; n%countYield == 0 {
				runtime.Gosched() // a long backlog takes milliseconds to count: let the scan run
			}
			return true
		})
		sp.left = n
		l.n.cnt.backlog.Add(n)
	}
}

// forward publishes up to the budget of sp's samples, from one scan of
// the store, as DDATA of maxReplayBatch samples at most, letting the
// scan's goroutine run between them; it reports whether sp is done.
func (l *loop) forward(sp *span, now int64) bool {
	m := sp.m
	n := int(l.budget)
	b := l.buf[:0]
	count, total, last, more := 0, 0, sp.from, false
	send := func() {
		// The header after the metrics (protobuf takes fields in any
		// order): a scan that finds nothing takes no seq.
		b = sparkplug.AppendHeader(b, uint64(now/1e6), l.nextSeq(), true)
		mark := l.publish(m.dev.topicData, b, count)
		l.n.cnt.replayed.Add(uint64(count))
		if left := l.n.cnt.backlog.Load(); left >= uint64(count) {
			l.n.cnt.backlog.Add(^uint64(count - 1))
		} else {
			l.n.cnt.backlog.Store(0)
		}
		sp.from = last
		sp.wm.advance(last, mark, l.conn.Confirmed())
		b, count = l.buf[:0], 0
		runtime.Gosched()
	}
	l.n.opt.History.DB().Scan(m.series, tick(sp.from)+tsdb.Resolution, tick(sp.to)-1, false, uint32(status.BadDataLost), func(s *tsdb.Sample) bool {
		if total == n {
			more = true
			return false
		}
		mt := sparkplug.Metric{Alias: m.alias, HasAlias: true, Timestamp: uint64(s.Time / 1e6), Historical: true, OmitType: true,
			Value: storedValue(m, s)}
		if st := plc.Status(s.Status); !st.IsGood() {
			l.props[0] = sparkplug.Property{Key: "Quality", Value: sparkplug.Value{Type: sparkplug.Int32, Bits: quality(st)}}
			mt.Properties = l.props[:1]
		}
		b = sparkplug.AppendMetric(b, &mt)
		count++
		total++
		last = s.Time
		if count == maxReplayBatch {
			l.buf = b
			send()
		}
		return true
	})
	if count > 0 {
		l.buf = b
		send()
	}
	l.budget -= float64(total)
	return !more
}

// storedValue is stored sample s of m as a metric value.
func storedValue(m *metric, s *tsdb.Sample) sparkplug.Value {
	v := sparkplug.Value{Type: m.dt}
	switch {
	case s.NoValue || plc.Status(s.Status).IsBad():
		v.Null = true
	case m.typ == plc.String:
		v.Text = string(s.Bytes)
	default:
		v.Bits = s.Value // the store keeps a value's bits as plc.Value does
	}
	return v
}
