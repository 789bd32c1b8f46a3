package history

import (
	"math"
	"sort"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Aggregate is an aggregate function of OPC 10000-13, by the numeric
// NodeId of its AggregateFunction object.
type Aggregate uint32

// The aggregates this package computes, in the order of Part 13.
var Aggregates = []Aggregate{
	id.AggregateFunction_Interpolative,
	id.AggregateFunction_Average,
	id.AggregateFunction_TimeAverage,
	id.AggregateFunction_TimeAverage2,
	id.AggregateFunction_Total,
	id.AggregateFunction_Total2,
	id.AggregateFunction_Minimum,
	id.AggregateFunction_Maximum,
	id.AggregateFunction_MinimumActualTime,
	id.AggregateFunction_MaximumActualTime,
	id.AggregateFunction_Range,
	id.AggregateFunction_Count,
	id.AggregateFunction_Start,
	id.AggregateFunction_End,
	id.AggregateFunction_Delta,
	id.AggregateFunction_DurationGood,
	id.AggregateFunction_DurationBad,
	id.AggregateFunction_PercentGood,
	id.AggregateFunction_PercentBad,
	id.AggregateFunction_WorstQuality,
}

// Supports reports whether a is one of Aggregates.
func Supports(a Aggregate) bool {
	for _, x := range Aggregates {
		if x == a {
			return true
		}
	}
	return false
}

// Config is what an aggregate's result depends on besides the data: the
// AggregateConfiguration (OPC 10000-13 §4.2.1.2) and the variable's
// Stepped property.
type Config struct {
	TreatUncertainAsBad    bool
	PercentDataBad         uint8
	PercentDataGood        uint8
	UseSlopedExtrapolation bool
	Stepped                bool
}

// calc computes one aggregate over the intervals of a processed read, in
// time order, from a window of the raw values. The window holds at least
// the values from the second good value before the interval to the first
// good value after it (or to the start and end of the data); see
// Processed, which feeds it.
type calc struct {
	agg Aggregate
	cfg Config
	// The raw values in time order, without Bad_NoData placeholders.
	vals []Value
	// bof and eof: vals[0] is the variable's first value, vals[len-1] its
	// last: the intervals that hold them are partial.
	bof, eof bool
	set      []Value // scratch: an interval's values with its bounds
	regions  []region
}

// isGood reports whether v counts as good data under the configuration:
// Good, or also Uncertain unless TreatUncertainAsBad.
func (c *calc) isGood(v *Value) bool {
	if c.cfg.TreatUncertainAsBad {
		return v.Status.IsGood()
	}
	return !v.Status.IsBad()
}

// first returns the index of the first value at or after t.
func (c *calc) first(t int64) int {
	return sort.Search(len(c.vals), func(i int) bool { return c.vals[i].T >= t })
}

// goodBefore returns the index of the last good value before t, -1 if
// none; from: search before this index.
func (c *calc) goodBefore(from int) int {
	for i := from - 1; i >= 0; i-- {
		if c.isGood(&c.vals[i]) {
			return i
		}
	}
	return -1
}

// goodAfter returns the index of the first good value after t, -1 if
// none.
func (c *calc) goodAfter(t int64) int {
	for i := c.first(t); i < len(c.vals); i++ {
		if c.vals[i].T > t && c.isGood(&c.vals[i]) {
			return i
		}
	}
	return -1
}

// interval computes the aggregate of [s, e) (Unix ns); the result's time
// is ts.
func (c *calc) interval(s, e, ts int64) Value {
	v := c.compute(s, e, ts)
	if c.agg != id.AggregateFunction_Interpolative && c.agg != id.AggregateFunction_Average && len(c.vals) > 0 {
		if c.bof && c.vals[0].T > s && c.vals[0].T < e {
			v.Status = withFlags(v.Status, Partial)
		}
		if last := c.vals[len(c.vals)-1].T; c.eof && last >= s && last < e {
			v.Status = withFlags(v.Status, Partial)
		}
	}
	if v.Status.IsBad() {
		v.V = ua.Variant{}
	}
	return v
}

func (c *calc) compute(s, e, ts int64) Value {
	switch c.agg {
	case id.AggregateFunction_Interpolative:
		return c.interpolate(s)
	case id.AggregateFunction_Average:
		return c.average(s, e, ts)
	case id.AggregateFunction_TimeAverage:
		return c.sloped().timeAverage(s, e, ts, false, false)
	case id.AggregateFunction_TimeAverage2:
		return c.timeAverage(s, e, ts, true, false)
	case id.AggregateFunction_Total:
		return c.timeAverage(s, e, ts, false, true)
	case id.AggregateFunction_Total2:
		return c.timeAverage(s, e, ts, true, true)
	case id.AggregateFunction_Minimum, id.AggregateFunction_Maximum, id.AggregateFunction_MinimumActualTime,
		id.AggregateFunction_MaximumActualTime, id.AggregateFunction_Range:
		return c.minMax(s, e, ts)
	case id.AggregateFunction_Count:
		return c.count(s, e, ts)
	case id.AggregateFunction_Start, id.AggregateFunction_End:
		return c.startEnd(s, e, ts)
	case id.AggregateFunction_Delta:
		return c.delta(s, e, ts)
	case id.AggregateFunction_DurationGood, id.AggregateFunction_DurationBad,
		id.AggregateFunction_PercentGood, id.AggregateFunction_PercentBad:
		return c.duration(s, e, ts)
	case id.AggregateFunction_WorstQuality:
		return c.worstQuality(s, e, ts)
	}
	return Value{T: ts, Status: status.BadAggregateNotSupported}
}

// sloped returns c with Stepped false: TimeAverage draws lines between
// the points whatever the variable's Stepped (§5.4.3.6).
func (c *calc) sloped() *calc {
	c.cfg.Stepped = false
	return c
}

// values returns the raw values in [s, e), nil when the interval lies
// wholly beyond the data.
func (c *calc) values(s, e int64) []Value {
	n := len(c.vals)
	if n == 0 || s > c.vals[n-1].T || e < c.vals[0].T {
		return nil
	}
	i := c.first(s)
	j := c.first(e)
	return c.vals[i:j:j]
}

// interpolate returns the value at t: a raw value at t that is not Bad,
// else the line between the good values around t (sloped) or the last
// good value (stepped), else the extrapolation past the last value.
func (c *calc) interpolate(t int64) Value {
	i := c.first(t)
	if i < len(c.vals) && c.vals[i].T == t && !c.vals[i].Status.IsBad() {
		return c.vals[i]
	}
	early := c.goodBefore(i)
	late := c.goodAfter(t)
	stepped := c.cfg.Stepped
	if !stepped {
		if early >= 0 && late >= 0 {
			v := sloped(t, &c.vals[early], &c.vals[late])
			if late != early+1 {
				v.Status = withCode(v.Status, status.UncertainDataSubNormal)
			}
			return v
		}
		if early >= 0 {
			if c.cfg.UseSlopedExtrapolation {
				if second := c.goodBefore(early); second >= 0 {
					v := sloped(t, &c.vals[second], &c.vals[early])
					v.Status = withCode(v.Status, status.UncertainDataSubNormal)
					return v
				}
			}
			stepped = true
		}
	}
	if stepped && early >= 0 {
		v := steppedAt(t, &c.vals[early])
		if early+1 == len(c.vals) || t > c.vals[early+1].T {
			v.Status = withCode(v.Status, status.UncertainDataSubNormal)
		}
		return v
	}
	return noData(t)
}

// steppedAt returns early's value at t.
func steppedAt(t int64, early *Value) Value {
	if early.Status.IsBad() {
		return noData(t)
	}
	v := Value{T: t, V: early.V, Status: status.Good}
	if !early.Status.IsGood() {
		v.Status = status.UncertainDataSubNormal
	}
	v.Status = withFlags(v.Status, Interpolated)
	return v
}

// sloped returns the value at t on the line from early to late.
func sloped(t int64, early, late *Value) Value {
	if early.Status.IsBad() {
		return noData(t)
	}
	if late.Status.IsBad() {
		v := steppedAt(t, early)
		if !v.Status.IsBad() {
			v.Status = withCode(v.Status, status.UncertainDataSubNormal)
		}
		return v
	}
	a, ok1 := toFloat(&early.V)
	b, ok2 := toFloat(&late.V)
	if !ok1 || !ok2 {
		return Value{T: t, Status: status.BadTypeMismatch}
	}
	x := a + (b-a)*float64(t-early.T)/float64(late.T-early.T)
	v := Value{T: t, V: fromFloat(x, early.V.Type()), Status: status.Good}
	if !early.Status.IsGood() || !late.Status.IsGood() {
		v.Status = status.UncertainDataSubNormal
	}
	v.Status = withFlags(v.Status, Interpolated)
	return v
}

// simpleBound returns the simple bounding value at t (OPC 10000-13
// §3.1.9): the raw value at t, or the value at t of the line (sloped) or
// step (stepped) from the last value before t, which must be good.
func (c *calc) simpleBound(t int64) Value {
	i := c.first(t)
	if i < len(c.vals) && c.vals[i].T == t {
		return c.vals[i]
	}
	sb := i - 1
	if sb < 0 || c.vals[sb].Status.IsBad() || !c.cfg.Stepped && !c.isGood(&c.vals[sb]) {
		return noData(t)
	}
	revert := false
	if !c.cfg.Stepped {
		if sb+1 < len(c.vals) && c.isGood(&c.vals[sb+1]) {
			return sloped(t, &c.vals[sb], &c.vals[sb+1])
		}
		revert = true
	}
	if sb+1 == len(c.vals) {
		return noData(t)
	}
	v := steppedAt(t, &c.vals[sb])
	if v.Status.IsGood() && revert {
		v.Status = withFlags(status.UncertainDataSubNormal, Interpolated)
	}
	return v
}

// withSimpleBounds returns the interval's values between its simple
// bounds, nil when it lies beyond the data.
func (c *calc) withSimpleBounds(s, e int64) []Value {
	n := len(c.vals)
	if n == 0 || s > c.vals[n-1].T || e < c.vals[0].T {
		return nil
	}
	set := append(c.set[:0], c.simpleBound(s))
	for i := c.first(s); i < n && c.vals[i].T < e; i++ {
		if c.vals[i].T > s {
			set = append(set, c.vals[i])
		}
	}
	set = append(set, c.simpleBound(e))
	c.set = set
	return set
}

// withInterpolatedBounds returns the interval's values between its
// interpolated bounds, nil when it ends before the data.
func (c *calc) withInterpolatedBounds(s, e int64) []Value {
	n := len(c.vals)
	if n == 0 || e < c.vals[0].T || c.eof && s > c.vals[n-1].T {
		return nil
	}
	set := append(c.set[:0], c.interpolate(s))
	for i := c.first(s); i < len(c.vals) && c.vals[i].T < e; i++ {
		set = append(set, c.vals[i])
	}
	set = append(set, c.interpolate(e))
	c.set = set
	return set
}

// region is the span from one value of an interval's set to the next.
type region struct {
	start, end float64 // the values at its ends
	t          int64
	ms         float64 // its duration
	status     ua.StatusCode
	good       bool // its first value counts as good
}

// regionsOf cuts set into regions, as OPC 10000-13 §5.4.3.x reckons
// durations: with ignoreBad, values that do not count as good are skipped
// (the region before them becomes Uncertain); stepped regions hold their
// start value.
func (c *calc) regionsOf(set []Value, ignoreBad, stepped bool) []region {
	rs := c.regions[:0]
	var cur region
	have := false
	for i := range set {
		v := &set[i]
		st := v.Status
		var x float64
		if !st.IsBad() {
			var ok bool
			if x, ok = toFloat(&v.V); !ok {
				st = status.BadTypeMismatch
			}
		} else if have {
			x = cur.start
		}
		good := c.isGood(v)
		if ignoreBad && have {
			if !good {
				if !cur.status.IsBad() {
					cur.status = status.UncertainDataSubNormal
				}
				if i < len(set)-1 {
					continue
				}
			} else if !stepped && !v.Status.IsGood() {
				cur.status = status.UncertainDataSubNormal
			}
		}
		if have {
			switch {
			case stepped:
				cur.end = cur.start
			case good:
				if !v.Status.IsGood() && !cur.status.IsBad() {
					cur.status = status.UncertainDataSubNormal
				}
				cur.end = x
			default:
				if !cur.status.IsBad() {
					cur.status = status.UncertainDataSubNormal
				}
				if ignoreBad && !st.IsBad() {
					cur.end = x
				}
			}
			if !ignoreBad && cur.good && st == status.BadNoData && i == len(set)-1 {
				cur.ms = 1 // a good value at the end of the data lasts a moment
			} else {
				if st.IsUncertain() && !good {
					st = status.BadNoData
				}
				cur.ms = float64(v.T-cur.t) / 1e6
			}
			rs = append(rs, cur)
		}
		cur = region{start: x, end: x, t: v.T, status: st, good: good}
		have = true
	}
	c.regions = rs
	return rs
}

// bySpan is the status of an interval from the durations of its regions
// (OPC 10000-13 §5.3.3): code's, Uncertain or Bad by PercentDataGood and
// PercentDataBad.
func (c *calc) bySpan(rs []region, code ua.StatusCode) ua.StatusCode {
	if len(rs) == 0 {
		return status.BadNoData
	}
	var total, bad, good float64
	for i := range rs {
		r := &rs[i]
		total += r.ms
		switch {
		case r.status.IsBad(), c.cfg.TreatUncertainAsBad && r.status.IsUncertain():
			bad += r.ms
		default:
			good += r.ms
		}
	}
	return c.byShare(total, good, bad, code)
}

// byCount is the status of an interval from the count of its good and
// bad values (OPC 10000-13 §5.3.2).
func (c *calc) byCount(vals []Value, code ua.StatusCode) ua.StatusCode {
	var total, good, bad float64
	for i := range vals {
		total++
		switch st := vals[i].Status; {
		case st.IsBad():
			bad++
		case st.IsGood():
			good++
		}
	}
	return c.byShare(total, good, bad, code)
}

func (c *calc) byShare(total, good, bad float64, code ua.StatusCode) ua.StatusCode {
	switch {
	case total == 0 || good/total*100 >= float64(c.cfg.PercentDataGood):
		return withCode(code, status.Good)
	case int(c.cfg.PercentDataGood) == 100-int(c.cfg.PercentDataBad):
		// The two limits meet: the good share alone decides (§4.2.1.2).
	case bad/total*100 >= float64(c.cfg.PercentDataBad):
		return status.Bad
	}
	return withCode(code, status.UncertainDataSubNormal)
}

func double(x float64) ua.Variant {
	var v ua.Variant
	v.SetFloat64(x)
	return v
}

// average: the mean of the Good values (§5.4.3.5).
func (c *calc) average(s, e, ts int64) Value {
	vals := c.values(s, e)
	var sum float64
	n := 0
	for i := range vals {
		if vals[i].Status.IsGood() {
			if x, ok := toFloat(&vals[i].V); ok {
				sum += x
				n++
			}
		}
	}
	if n == 0 {
		return noData(ts)
	}
	return Value{T: ts, V: double(sum / float64(n)), Status: c.byCount(vals, withFlags(status.Good, Calculated))}
}

// timeAverage: the time-weighted average, or with total the integral in
// value × seconds, between interpolated (TimeAverage, Total) or simple
// bounds (TimeAverage2, Total2) (§5.4.3.6-9).
func (c *calc) timeAverage(s, e, ts int64, simple, total bool) Value {
	var set []Value
	if simple {
		set = c.withSimpleBounds(s, e)
	} else {
		set = c.withInterpolatedBounds(s, e)
	}
	if len(set) == 0 {
		return noData(ts)
	}
	rs := c.regionsOf(set, !simple, c.cfg.Stepped)
	var area, span float64
	notGood, notBad := false, false
	for i := range rs {
		r := &rs[i]
		notBad = notBad || !r.status.IsBad()
		sec := r.ms / 1000
		// Between simple bounds a region whose data does not count as good
		// is left out (§5.4.3.7); between interpolated bounds the values
		// that do not were skipped already, and Bad regions are left out.
		if simple && r.good || !simple && !r.status.IsBad() {
			area += (r.start + r.end) * sec / 2
			span += sec
		}
		if !r.status.IsGood() {
			notGood = true
		}
	}
	if span == 0 {
		if simple && notBad {
			// Uncertain data only, left out: the status says how bad.
			return Value{T: ts, Status: withFlags(c.bySpan(rs, status.Good), Calculated)}
		}
		return noData(ts)
	}
	x := area / span
	if total {
		x = area
	}
	st := status.Good
	if simple {
		st = c.bySpan(rs, st)
	} else if notGood {
		st = status.UncertainDataSubNormal
	}
	return Value{T: ts, V: double(x), Status: withFlags(st, Calculated)}
}

// minMax: the least or greatest good value, its time, or the range
// (§5.4.3.10-14).
func (c *calc) minMax(s, e, ts int64) Value {
	vals := c.values(s, e)
	if len(vals) == 0 {
		return noData(ts)
	}
	minV, maxV := math.MaxFloat64, -math.MaxFloat64
	var minAt, maxAt int
	var minDup, maxDup, bad, found bool
	for i := range vals {
		v := &vals[i]
		if !c.isGood(v) {
			bad = true
			continue
		}
		x, ok := toFloat(&v.V)
		if !ok {
			bad = true
			continue
		}
		if v.Status.IsUncertain() {
			continue // counted as good, but not a candidate
		}
		if x < minV {
			minV, minAt, minDup, found = x, i, false, true
		} else if x == minV {
			minDup = true
		}
		if x > maxV {
			maxV, maxAt, maxDup, found = x, i, false, true
		} else if x == maxV {
			maxDup = true
		}
	}
	if !found {
		return noData(ts)
	}
	st := status.Good
	if bad {
		st = status.UncertainDataSubNormal
	}
	var x float64
	var typ ua.TypeID
	at := int64(0)
	dup := false
	actual := c.agg == id.AggregateFunction_MinimumActualTime || c.agg == id.AggregateFunction_MaximumActualTime
	switch c.agg {
	case id.AggregateFunction_Minimum, id.AggregateFunction_MinimumActualTime:
		x, typ, at, dup = minV, vals[minAt].V.Type(), vals[minAt].T, minDup
	case id.AggregateFunction_Maximum, id.AggregateFunction_MaximumActualTime:
		x, typ, at, dup = maxV, vals[maxAt].V.Type(), vals[maxAt].T, maxDup
	default:
		x, typ = math.Abs(maxV-minV), ua.TypeDouble
	}
	if !actual && at != ts {
		st = withFlags(st, Calculated)
	}
	if dup {
		st = withFlags(st, MultiValue)
	}
	t := ts
	if actual {
		t = at
	}
	return Value{T: t, V: fromFloat(x, typ), Status: st}
}

// count: the number of Good values (§5.4.3.20).
func (c *calc) count(s, e, ts int64) Value {
	vals := c.values(s, e)
	if vals == nil {
		return noData(ts)
	}
	n := 0
	for i := range vals {
		if vals[i].Status.IsGood() {
			n++
		}
	}
	var v ua.Variant
	v.SetInt32(int32(n))
	st := c.byCount(vals, status.Good)
	if !st.IsBad() {
		st = withFlags(st, Calculated)
	}
	return Value{T: ts, V: v, Status: st}
}

// startEnd: the first or last raw value of the interval, as it is
// (§5.4.3.24-25).
func (c *calc) startEnd(s, e, ts int64) Value {
	vals := c.values(s, e)
	if len(vals) == 0 {
		return noData(ts)
	}
	if c.agg == id.AggregateFunction_Start {
		return vals[0]
	}
	return vals[len(vals)-1]
}

// delta: the last good value less the first (§5.4.3.26).
func (c *calc) delta(s, e, ts int64) Value {
	vals := c.values(s, e)
	if len(vals) == 0 {
		return noData(ts)
	}
	skipped := false
	first, last := -1, -1
	for i := range vals {
		if vals[i].Status.IsGood() {
			if _, ok := toFloat(&vals[i].V); ok {
				first = i
			}
			break
		}
		skipped = true
	}
	for i := len(vals) - 1; i >= 0; i-- {
		if vals[i].Status.IsGood() {
			if _, ok := toFloat(&vals[i].V); ok {
				last = i
			}
			break
		}
		skipped = true
	}
	if first < 0 || last < 0 {
		return noData(ts)
	}
	a, _ := toFloat(&vals[first].V)
	b, _ := toFloat(&vals[last].V)
	st := status.Good
	if skipped {
		st = status.UncertainDataSubNormal
	}
	return Value{T: ts, V: fromFloat(b-a, vals[first].V.Type()), Status: withFlags(st, Calculated)}
}

// duration: the time (ms) or the share (%) of the interval in which the
// data was good or bad, between simple bounds (§5.4.3.29-32).
func (c *calc) duration(s, e, ts int64) Value {
	set := c.withSimpleBounds(s, e)
	if len(set) == 0 {
		return noData(ts)
	}
	rs := c.regionsOf(set, false, true)
	bad := c.agg == id.AggregateFunction_DurationBad || c.agg == id.AggregateFunction_PercentBad
	var d, total float64
	for i := range rs {
		r := &rs[i]
		total += r.ms
		if bad && r.status.IsBad() || !bad && r.status.IsGood() {
			d += r.ms
		}
	}
	if c.agg == id.AggregateFunction_PercentGood || c.agg == id.AggregateFunction_PercentBad {
		d = d / total * 100
	}
	return Value{T: ts, V: double(d), Status: withFlags(status.Good, Calculated)}
}

// worstQuality: the worst status of the interval's values (§5.4.3.33).
func (c *calc) worstQuality(s, e, ts int64) Value {
	vals := c.values(s, e)
	if len(vals) == 0 {
		return noData(ts)
	}
	worst := vals[0].Status.Code()
	var nBad, nUnc, nGood int
	for i := range vals {
		q := vals[i].Status
		switch {
		case q.IsBad():
			nBad++
			if !worst.IsBad() {
				worst = q.Code()
			}
		case q.IsUncertain():
			nUnc++
			if worst.IsGood() {
				worst = q.Code()
			}
		default:
			nGood++
		}
	}
	var v ua.Variant
	v.SetStatusCode(worst)
	st := withFlags(status.Good, Calculated)
	if worst.IsBad() && nBad > 1 || worst.IsUncertain() && nUnc > 1 {
		st = withFlags(st, MultiValue)
	}
	return Value{T: ts, V: v, Status: st}
}
