package history

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// annexTable is one table of testdata/AggregateExamples.csv: a
// historian's raw data, or the expected result of an aggregate.
type annexTable struct {
	aggregate string // "" for raw data
	historian string
	cfg       Config
	interval  time.Duration
	rows      []annexRow
}

type annexRow struct {
	t      int64
	value  string
	status string
}

// annexDay is the date the tables' times are on.
var annexDay = time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)

func annexTime(s string) (int64, error) {
	for _, layout := range []string{"15:04:05.000", "15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return annexDay.Add(time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
				time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())).UnixNano(), nil
		}
	}
	return 0, fmt.Errorf("time %q", s)
}

func readAnnex(t *testing.T) (raw map[string]*annexTable, processed []*annexTable) {
	t.Helper()
	f, err := os.Open("testdata/AggregateExamples.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw = map[string]*annexTable{}
	var cur *annexTable
	aggregate := ""
	inRaw := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		cells := splitCSV(line)
		key := ""
		if len(cells) > 0 {
			key = strings.TrimSpace(cells[0])
		}
		switch {
		case line == "Start of Raw Data Tables":
			inRaw = true
		case line == "End of Raw Data Tables":
			inRaw = false
		case key == "Aggregate":
			aggregate = cells[1]
		case strings.HasPrefix(line, "Historian") && len(cells) == 1:
			cur = &annexTable{historian: line}
			if inRaw {
				raw[line] = cur
			} else {
				cur.aggregate = aggregate
				processed = append(processed, cur)
			}
		case cur == nil || len(cells) < 2:
		case key == "Processing Interval":
			ms, _ := strconv.Atoi(cells[1])
			cur.interval = time.Duration(ms) * time.Millisecond
		case key == "Stepped":
			cur.cfg.Stepped = cells[1] == "true"
		case key == "Treat Uncertain as Bad":
			cur.cfg.TreatUncertainAsBad = cells[1] == "true"
		case key == "Percent Bad":
			n, _ := strconv.Atoi(cells[1])
			cur.cfg.PercentDataBad = uint8(n)
		case key == "Percent Good":
			n, _ := strconv.Atoi(cells[1])
			cur.cfg.PercentDataGood = uint8(n)
		case key == "Use Sloped Extrapolation":
			cur.cfg.UseSlopedExtrapolation = cells[1] == "true"
		case key == "Timestamp" || key == "":
		default:
			tm, err := annexTime(key)
			if err != nil {
				t.Fatalf("%s %s: %v", cur.aggregate, cur.historian, err)
			}
			cur.rows = append(cur.rows, annexRow{t: tm, value: cells[1], status: cells[2]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return raw, processed
}

// splitCSV splits a line of the file: cells separated by commas, quoted
// cells holding commas.
func splitCSV(line string) []string {
	var out []string
	var b strings.Builder
	q := false
	for _, r := range line {
		switch {
		case r == '"':
			q = !q
		case r == ',' && !q:
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteRune(r)
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

var annexCodes = map[string]ua.StatusCode{
	"Good": status.Good, "Bad": status.Bad, "Uncertain": status.Uncertain,
	"Bad_NoData": status.BadNoData, "BadNoData": status.BadNoData,
	"UncertainDataSubNormal": status.UncertainDataSubNormal,
}

var annexFlags = map[string]ua.StatusCode{
	"Calculated": Calculated, "Interpolated": Interpolated, "Partial": Partial,
	"MultipleValues": MultiValue, "ExtraData": ExtraData,
}

func annexStatus(s string) (ua.StatusCode, error) {
	parts := strings.Split(s, ",")
	code, ok := annexCodes[strings.TrimSpace(parts[0])]
	if !ok {
		return 0, fmt.Errorf("status %q", s)
	}
	for _, p := range parts[1:] {
		f, ok := annexFlags[strings.TrimSpace(p)]
		if !ok {
			return 0, fmt.Errorf("status %q: flag %q", s, p)
		}
		code |= f
	}
	return code, nil
}

// rawValues returns a raw table as Values: numbers as Double, true and
// false as Boolean; a Bad value has none.
func rawValues(t *testing.T, tb *annexTable) []Value {
	var vals []Value
	for _, r := range tb.rows {
		st, err := annexStatus(r.status)
		if err != nil {
			t.Fatalf("%s: %v", tb.historian, err)
		}
		v := Value{T: r.t, Status: st}
		switch r.value {
		case "", "undefined":
		case "true", "false":
			v.V.SetBool(r.value == "true")
		default:
			x, err := strconv.ParseFloat(r.value, 64)
			if err != nil {
				t.Fatalf("%s: value %q", tb.historian, r.value)
			}
			v.V.SetFloat64(x)
		}
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i].T < vals[j].T })
	return vals
}

var aggregateNames = map[string]Aggregate{
	"Interpolative": id.AggregateFunction_Interpolative, "Average": id.AggregateFunction_Average,
	"TimeAverage": id.AggregateFunction_TimeAverage, "TimeAverage2": id.AggregateFunction_TimeAverage2,
	"Total": id.AggregateFunction_Total, "Total2": id.AggregateFunction_Total2,
	"Minimum": id.AggregateFunction_Minimum, "Maximum": id.AggregateFunction_Maximum,
	"MinimumActualTime": id.AggregateFunction_MinimumActualTime, "MaximumActualTime": id.AggregateFunction_MaximumActualTime,
	"Range": id.AggregateFunction_Range, "Count": id.AggregateFunction_Count,
	"Start": id.AggregateFunction_Start, "End": id.AggregateFunction_End, "Delta": id.AggregateFunction_Delta,
	"DurationGood": id.AggregateFunction_DurationGood, "DurationBad": id.AggregateFunction_DurationBad,
	"PercentGood": id.AggregateFunction_PercentGood, "PercentBad": id.AggregateFunction_PercentBad,
	"WorstQuality": id.AggregateFunction_WorstQuality,
}

// annexResult is one computed row, as the table writes it.
func (v *Value) annexCell() (value string, code ua.StatusCode) {
	code = v.Status
	switch v.V.Type() {
	case ua.TypeNull:
	case ua.TypeBoolean:
		b, _ := v.V.Bool()
		value = strconv.FormatBool(b)
	case ua.TypeStatusCode:
		sc, _ := v.V.StatusCode()
		for name, c := range annexCodes {
			if c == sc && !strings.Contains(name, "_") {
				value = name
			}
		}
		if value == "" {
			value = sc.String()
		}
	default:
		x, _ := v.V.Number()
		value = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return value, code
}

func clock(t int64) string { return time.Unix(0, t).UTC().Format("15:04:05.000") }

func sameAnnexValue(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && math.Abs(g-w) <= 0.0005+1e-9
}

// TestAnnexA computes every supported aggregate over the example data of
// OPC 10000-13 Annex A and compares each interval with the published
// table: value (to the table's three or four decimals), status code and
// historian bits, timestamp.
func TestAnnexA(t *testing.T) {
	raw, processed := readAnnex(t)
	end, _ := annexTime("12:01:40")
	start, _ := annexTime("12:00:00")
	matched, tables := 0, 0
	for _, tb := range processed {
		agg, ok := aggregateNames[tb.aggregate]
		if !ok {
			continue // not one edged offers
		}
		rt := raw[tb.historian]
		if rt == nil {
			t.Fatalf("%s: no raw data", tb.historian)
		}
		tables++
		name := tb.aggregate + "/" + tb.historian
		t.Run(name, func(t *testing.T) {
			c := &calc{agg: agg, cfg: tb.cfg, bof: true, eof: true}
			for _, v := range rawValues(t, rt) {
				if v.Status != status.BadNoData {
					c.vals = append(c.vals, v)
				}
			}
			var got []Value
			for s := start; s < end; s += int64(tb.interval) {
				got = append(got, c.interval(s, min(s+int64(tb.interval), end), s))
			}
			if len(got) != len(tb.rows) {
				t.Fatalf("%d intervals, the table has %d rows", len(got), len(tb.rows))
			}
			bad := 0
			for i, r := range tb.rows {
				wantCode, err := annexStatus(r.status)
				if err != nil {
					t.Fatal(err)
				}
				gv, gc := got[i].annexCell()
				if got[i].T != r.t || gc != wantCode || !sameAnnexValue(gv, r.value) {
					bad++
					t.Errorf("%s: got %s %q %v, want %q %v", clock(r.t), clock(got[i].T), gv, gc.String(), r.value, wantCode.String())
				}
			}
			if bad == 0 {
				matched++
			}
		})
	}
	t.Logf("%d of %d tables match", matched, tables)
}
