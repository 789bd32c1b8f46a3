package history

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// memReader is a Reader over values in memory, by handle.
type memReader map[uint32][]Value

func (m memReader) Read(h uint32, from, to int64, reverse bool, fn func(*Value) bool) error {
	vals := m[h]
	i := sort.Search(len(vals), func(i int) bool { return vals[i].T >= from })
	j := sort.Search(len(vals), func(i int) bool { return vals[i].T > to })
	if !reverse {
		for k := i; k < j; k++ {
			if !fn(&vals[k]) {
				return nil
			}
		}
		return nil
	}
	for k := j - 1; k >= i; k-- {
		if !fn(&vals[k]) {
			return nil
		}
	}
	return nil
}

// TestRawTable1 runs the examples of OPC 10000-11 §4.4 Table 1: a
// historian with values at 5:00, 5:02, 5:03, 5:05 and 5:06, read raw with
// and without bounds, forward, backward, with one time and a count; FIRST
// and LAST are Bad_BoundNotFound at the start and end time.
func TestRawTable1(t *testing.T) {
	at := func(m, s int) int64 { return time.Date(2024, 1, 1, 5, m, s, 0, time.UTC).UnixNano() }
	var vals []Value
	for _, m := range []int{0, 2, 3, 5, 6} {
		v := Value{T: at(m, 0), Status: status.Good}
		v.V.SetInt32(int32(m))
		vals = append(vals, v)
	}
	r := memReader{1: vals}
	name := func(v Value) string {
		if v.Status == status.BadBoundNotFound {
			return "BNF"
		}
		return time.Unix(0, v.T).UTC().Format("3:04")
	}
	const un = -99 // an unspecified time
	for _, tc := range []struct {
		start, end int // minutes after 5:00 (or 4:48, 4:59 as -12, -1); un: unspecified
		n          uint32
		bounds     bool
		want       string
		more       bool
	}{
		{0, 5, 0, true, "5:00 5:02 5:03 5:05", false},
		{0, 5, 0, false, "5:00 5:02 5:03", false},
		{1, 4, 0, true, "5:00 5:02 5:03 5:05", false},
		{1, 4, 0, false, "5:02 5:03", false},
		{5, 0, 0, true, "5:05 5:03 5:02 5:00", false},
		{5, 0, 0, false, "5:05 5:03 5:02", false},
		{4, 1, 0, true, "5:05 5:03 5:02 5:00", false},
		{4, 1, 0, false, "5:03 5:02", false},
		{-1, 5, 0, true, "BNF 5:00 5:02 5:03 5:05", false},
		{-1, 5, 0, false, "5:00 5:02 5:03", false},
		{1, 7, 0, true, "5:00 5:02 5:03 5:05 5:06 BNF", false},
		{1, 7, 0, false, "5:02 5:03 5:05 5:06", false},
		{0, 5, 3, true, "5:00 5:02 5:03", true},
		{0, 5, 3, false, "5:00 5:02 5:03", false},
		{1, 4, 3, true, "5:00 5:02 5:03", true},
		{1, 4, 3, false, "5:02 5:03", false},
		{5, 0, 3, true, "5:05 5:03 5:02", true},
		{5, 0, 3, false, "5:05 5:03 5:02", false},
		{4, 1, 3, true, "5:05 5:03 5:02", true},
		{4, 1, 3, false, "5:03 5:02", false},
		{-1, 5, 3, true, "BNF 5:00 5:02", true},
		{-1, 5, 3, false, "5:00 5:02 5:03", false},
		{1, 7, 3, true, "5:00 5:02 5:03", true},
		{1, 7, 3, false, "5:02 5:03 5:05", true},
		{0, un, 3, true, "5:00 5:02 5:03", true},
		{0, un, 3, false, "5:00 5:02 5:03", true},
		{0, un, 6, true, "5:00 5:02 5:03 5:05 5:06 BNF", false},
		{0, un, 6, false, "5:00 5:02 5:03 5:05 5:06", false},
		{7, un, 6, true, "5:06 BNF", false},
		{7, un, 6, false, "", false},
		{un, 6, 3, true, "5:06 5:05 5:03", true},
		{un, 6, 3, false, "5:06 5:05 5:03", true},
		{un, 6, 6, true, "5:06 5:05 5:03 5:02 5:00 BNF", false},
		{un, 6, 6, false, "5:06 5:05 5:03 5:02 5:00", false},
		{un, -12, 6, true, "5:00 BNF", false},
		{un, -12, 6, false, "", false},
		{-12, -12, 0, true, "BNF 5:00", false},
		{-12, -12, 0, false, "", false},
		{-12, -12, 1, true, "BNF", true},
		{-12, -12, 1, false, "", false},
		{-12, -12, 2, true, "BNF 5:00", false},
		{0, 0, 0, true, "5:00 5:02", false},
		{0, 0, 0, false, "5:00", false},
		{0, 0, 1, true, "5:00", true},
		{0, 0, 1, false, "5:00", false},
		{1, 1, 0, true, "5:00 5:02", false},
		{1, 1, 0, false, "", false},
		{1, 1, 1, true, "5:00", true},
		{1, 1, 1, false, "", false},
	} {
		q := Raw{NumValues: tc.n, Bounds: tc.bounds}
		if tc.start != un {
			q.Start, q.StartSet = at(tc.start, 0), true
		}
		if tc.end != un {
			q.End, q.EndSet = at(tc.end, 0), true
		}
		if err := q.Check(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		limit := int(tc.n)
		if limit == 0 {
			limit = 1000
		}
		var cur RawCursor
		got, more, err := readAll(&q, r, &cur, limit)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range got {
			names = append(names, name(v))
		}
		if s := strings.Join(names, " "); s != tc.want || more != tc.more {
			t.Errorf("%d..%d n=%d bounds=%v: got %q more=%v, want %q more=%v", tc.start, tc.end, tc.n, tc.bounds, s, more, tc.want, tc.more)
		}
		// Going on from the cursor gives the rest, as one read would.
		if more {
			rest, _, err := readAll(&q, r, &cur, 1000)
			if err != nil {
				t.Fatal(err)
			}
			q2 := q
			q2.NumValues = 0
			var c2 RawCursor
			all, _, _ := readAll(&q2, r, &c2, 1000)
			if len(got)+len(rest) != len(all) {
				t.Errorf("%d..%d n=%d bounds=%v: %d + %d values after the cursor, %d in one read", tc.start, tc.end, tc.n, tc.bounds, len(got), len(rest), len(all))
			}
		}
	}
	if err := (&Raw{StartSet: true}).Check(); err != status.BadHistoryOperationInvalid {
		t.Errorf("one parameter: %v", err)
	}
}

// readAll is q.Read into a slice.
func readAll(q *Raw, r Reader, cur *RawCursor, limit int) ([]Value, bool, error) {
	var out []Value
	_, more, err := q.Read(r, 1, cur, limit, func(v *Value) { out = append(out, *v) })
	return out, more, err
}

// TestProcessedBatches: a processed read cut into calls of a few
// intervals gives the Annex A results, and read backwards (end before
// start) the same values in the reverse order with each interval's later
// time.
func TestProcessedBatches(t *testing.T) {
	raw, processed := readAnnex(t)
	start, _ := annexTime("12:00:00")
	end, _ := annexTime("12:01:40")
	for _, tb := range processed {
		agg, ok := aggregateNames[tb.aggregate]
		if !ok {
			continue
		}
		r := memReader{1: rawValues(t, raw[tb.historian])}
		q := Processed{Start: start, End: end, Interval: int64(tb.interval), Aggregate: agg, Config: tb.cfg}
		var cur ProcessedCursor
		var got []Value
		for {
			var more bool
			var err error
			got, more, err = q.Read(r, 1, &cur, 3, got)
			if err != nil {
				t.Fatal(err)
			}
			if !more {
				break
			}
		}
		name := tb.aggregate + "/" + tb.historian
		if len(got) != len(tb.rows) {
			t.Fatalf("%s: %d results, want %d", name, len(got), len(tb.rows))
		}
		for i, row := range tb.rows {
			want, _ := annexStatus(row.status)
			gv, gc := got[i].annexCell()
			if got[i].T != row.t || gc != want || !sameAnnexValue(gv, row.value) {
				t.Errorf("%s %s: got %s %q %v", name, clock(row.t), clock(got[i].T), gv, gc)
			}
		}
		if tb.interval != 5*time.Second || agg == aggregateNames["Interpolative"] ||
			agg == aggregateNames["Start"] || agg == aggregateNames["End"] || agg == aggregateNames["MinimumActualTime"] || agg == aggregateNames["MaximumActualTime"] {
			continue // intervals that divide the range evenly, and results stamped with the interval
		}
		back := Processed{Start: end, End: start, Interval: int64(tb.interval), Aggregate: agg, Config: tb.cfg}
		var bc ProcessedCursor
		rev, _, err := back.Read(r, 1, &bc, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			b := rev[len(rev)-1-i]
			if b.T != got[i].T+int64(tb.interval) || b.Status != got[i].Status || !b.V.Equal(got[i].V) {
				t.Errorf("%s backwards: %s %v %v, forwards %s %v %v", name, clock(b.T), b.V, b.Status, clock(got[i].T), got[i].V, got[i].Status)
			}
		}
	}
}

// TestAtTime reads Historian 1 and 2 at times: a raw value where there is
// one, else the interpolated value as the Interpolative aggregate gives it
// at the same time.
func TestAtTime(t *testing.T) {
	raw, processed := readAnnex(t)
	for _, tb := range processed {
		if tb.aggregate != "Interpolative" {
			continue
		}
		r := memReader{1: rawValues(t, raw[tb.historian])}
		var times []int64
		for _, row := range tb.rows {
			times = append(times, row.t)
		}
		got, err := AtTime(r, 1, times, false, tb.cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range tb.rows {
			want, _ := annexStatus(row.status)
			gv, gc := got[i].annexCell()
			if gc != want || !sameAnnexValue(gv, row.value) {
				t.Errorf("%s at %s: got %q %v, want %q %v", tb.historian, clock(row.t), gv, gc, row.value, want)
			}
		}
	}
	// Simple bounds: between 10 at 12:00:10 and 20 at 12:00:20, sloped.
	r := memReader{1: rawValues(t, raw["Historian1"])}
	t15, _ := annexTime("12:00:15")
	got, _ := AtTime(r, 1, []int64{t15}, true, Config{}, nil)
	if x, _ := got[0].V.Number(); x != 15 || got[0].Status != Interpolated {
		t.Errorf("simple bound at 12:00:15: %v %v", got[0].V, got[0].Status)
	}
}
