package history

import (
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Limits of the raw values a processed or at-time read holds in memory
// at once.
const (
	// MaxIntervalValues bounds the raw values of one interval of a
	// processed read; an interval with more is
	// Bad_AggregateInvalidInputs (a shorter ProcessingInterval reads it).
	MaxIntervalValues = 100_000
	// searchLimit bounds how many raw values a read passes over looking
	// for a good value before or after a time (OPC 10000-13 §3.1.8 leaves
	// how far to the server).
	searchLimit = 10_000
	fetch       = 1024 // values read at once when the window grows
)

// window is the raw values of a variable a calc works on, read ahead in
// time order as the intervals move on.
type window struct {
	r      Reader
	h      uint32
	c      *calc
	loaded int64 // values up to this time are in c.vals (from where they begin)
	eof    bool
	err    error
}

// start loads the values before t that the first interval needs: back to
// the second good value before t (fewer if the data begins before), and
// sets c.bof.
func (w *window) start(t int64) {
	c := w.c
	c.vals = c.vals[:0]
	good, n := 0, 0
	w.err = w.r.Read(w.h, MinTime, t-1, true, func(v *Value) bool {
		if v.Status == status.BadNoData {
			return true
		}
		c.vals = append(c.vals, *v)
		n++
		if c.isGood(v) {
			good++
		}
		return good < 2 && n < searchLimit
	})
	c.bof = good < 2 && n < searchLimit
	for i, j := 0, len(c.vals)-1; i < j; i, j = i+1, j-1 {
		c.vals[i], c.vals[j] = c.vals[j], c.vals[i]
	}
	w.loaded = t - 1
	w.eof = false
}

// extend reads values after w.loaded, up to t and on until a good value
// after t is in, the data ends or searchLimit values after t were passed
// over; false when the window grew beyond MaxIntervalValues.
func (w *window) extend(t int64) bool {
	c := w.c
	for w.err == nil && !w.eof {
		if w.loaded >= t && (c.goodAfter(t) >= 0 || len(c.vals)-c.first(t+1) >= searchLimit) {
			break
		}
		if len(c.vals) > MaxIntervalValues+2*searchLimit {
			return false
		}
		n := 0
		w.err = w.r.Read(w.h, w.loaded+1, MaxTime, false, func(v *Value) bool {
			if v.Status != status.BadNoData {
				c.vals = append(c.vals, *v)
			}
			w.loaded = v.T
			n++
			return n < fetch
		})
		if n < fetch {
			w.eof = true
		}
	}
	c.eof = w.eof
	return true
}

// trim drops the values before the second good value before t.
func (w *window) trim(t int64) {
	c := w.c
	i := c.first(t)
	keep := c.goodBefore(i)
	if keep > 0 {
		keep = max(c.goodBefore(keep), 0)
	}
	if keep > fetch {
		n := copy(c.vals, c.vals[keep:])
		clear(c.vals[n:])
		c.vals = c.vals[:n]
	}
}

// Processed is a read of aggregates (OPC 10000-11 §6.5.4,
// ReadProcessedDetails) of one variable.
type Processed struct {
	Start, End int64 // Unix ns; End before Start: intervals go back in time
	Interval   int64 // ns; 0: one interval
	Aggregate  Aggregate
	Config     Config
}

// ProcessedCursor is where a processed read goes on: the zero value
// starts it.
type ProcessedCursor struct {
	next int64 // the index of the next interval
}

// Check returns the read's status: Bad_InvalidArgument for equal start
// and end times or a negative interval, Bad_AggregateNotSupported for an
// aggregate this package does not compute.
func (q *Processed) Check() error {
	if q.Start == q.End || q.Interval < 0 {
		return status.BadInvalidArgument
	}
	if !Supports(q.Aggregate) {
		return status.BadAggregateNotSupported
	}
	return nil
}

// count returns the number of intervals.
func (q *Processed) count() int64 {
	span := q.End - q.Start
	if span < 0 {
		span = -span
	}
	if q.Interval == 0 || q.Interval >= span {
		return 1
	}
	return (span + q.Interval - 1) / q.Interval
}

// bounds returns interval k as [lo, hi) in time, and its timestamp: its
// start in the read's direction.
func (q *Processed) bounds(k int64) (lo, hi, ts int64) {
	iv := q.Interval
	if iv == 0 {
		iv = max(q.End-q.Start, q.Start-q.End)
	}
	if q.End > q.Start {
		lo = q.Start + k*iv
		return lo, min(lo+iv, q.End), lo
	}
	hi = q.Start - k*iv
	return max(hi-iv, q.End), hi, hi
}

// Read appends to out the next results of the read of variable h, at most
// limit (> 0) intervals, and reports whether intervals are left.
func (q *Processed) Read(r Reader, h uint32, cur *ProcessedCursor, limit int, out []Value) ([]Value, bool, error) {
	n := q.count()
	k0 := cur.next
	k1 := min(n, k0+int64(limit))
	if k0 >= k1 {
		return out, false, nil
	}
	// The intervals of this batch, computed in time order.
	c := &calc{agg: q.Aggregate, cfg: q.Config}
	w := &window{r: r, h: h, c: c}
	first := k0 // the earliest interval of the batch
	if q.End < q.Start {
		first = k1 - 1
	}
	lo0, _, _ := q.bounds(first)
	w.start(lo0)
	at := len(out)
	out = append(out, make([]Value, k1-k0)...)
	for i := int64(0); i < k1-k0; i++ {
		k := first + i
		if q.End < q.Start {
			k = first - i
		}
		lo, hi, ts := q.bounds(k)
		var v Value
		if !w.extend(hi) {
			v = Value{T: ts, Status: status.BadAggregateInvalidInputs}
		} else {
			v = c.interval(lo, hi, ts)
		}
		if w.err != nil {
			return out[:at], false, w.err
		}
		// The results go out in the read's order.
		j := at + int(i)
		if q.End < q.Start {
			j = at + int(k1-k0-1-i)
		}
		out[j] = v
		w.trim(hi)
	}
	cur.next = k1
	return out, k1 < n, nil
}

// AtTime returns the values of variable h at times (OPC 10000-11 §6.5.5,
// ReadAtTimeDetails): the raw value at a time when there is one, else the
// value at the time by the variable's stepped or sloped interpolation
// between simple bounding values (simple) or interpolated bounding values
// (OPC 10000-13 §3.1.8-9), flagged Interpolated.
func AtTime(r Reader, h uint32, times []int64, simple bool, cfg Config, out []Value) ([]Value, error) {
	c := &calc{agg: 0, cfg: cfg}
	w := &window{r: r, h: h, c: c}
	for _, t := range times {
		w.start(t)
		w.extend(t)
		if w.err != nil {
			return out, w.err
		}
		var v Value
		if simple {
			v = c.simpleBound(t)
		} else {
			v = c.interpolate(t)
		}
		if v.Status.IsBad() {
			v.V = ua.Variant{}
		}
		out = append(out, v)
	}
	return out, nil
}
