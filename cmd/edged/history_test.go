package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/opcua/ua/id"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// The history interop tests: open62541's, node-opcua's and gopcua's
// clients read the history of sim.Counter (recorded on every change by the
// simulator's configuration) from a running edged.

// rawSample is a raw value of sim.Counter as a client read it.
type rawSample struct {
	v uint32
	t time.Time
}

// checkRaw checks a raw read of sim.Counter: at least min values, rising
// in value and time. A client whose times are truncated (coarse > 0) may
// show two values at one time: a late cycle is followed at once by the next.
func checkRaw(t *testing.T, who string, raw []rawSample, min int, coarse time.Duration) {
	t.Helper()
	if len(raw) < min {
		t.Fatalf("%s: %d values of sim.Counter, want at least %d", who, len(raw), min)
	}
	for i := 1; i < len(raw); i++ {
		rising := raw[i].t.After(raw[i-1].t)
		if coarse > 0 {
			rising = !raw[i].t.Before(raw[i-1].t)
		}
		if raw[i].v <= raw[i-1].v || !rising {
			t.Fatalf("%s: value %d (%d at %v) does not follow %d at %v", who, i, raw[i].v, raw[i].t, raw[i-1].v, raw[i-1].t)
		}
	}
}

// interval is a processed value as a client read it.
type interval struct {
	t      time.Time
	status gua.StatusCode
	value  float64
	has    bool
}

// checkProcessed checks the 1 s intervals of an aggregate of sim.Counter
// against what the raw values give: Count, Average or Maximum of the
// values of each interval, Bad_NoData for the intervals before the first
// (the counter has a value every 5 ms from then on).
func checkProcessed(t *testing.T, who, agg string, raw []rawSample, iv []interval) {
	t.Helper()
	good := 0
	for _, x := range iv {
		var n int
		var sum, max float64
		for _, r := range raw {
			if !r.t.Before(x.t) && r.t.Before(x.t.Add(time.Second)) {
				n++
				sum += float64(r.v)
				max = math.Max(max, float64(r.v))
			}
		}
		if n == 0 {
			// Before the history begins.
			if x.status != gua.StatusBadNoData {
				t.Errorf("%s %s at %v: %v, want Bad_NoData (no raw value)", who, agg, x.t, x.status)
			}
			continue
		}
		want := map[string]float64{"Count": float64(n), "Average": sum / float64(max1(n)), "Maximum": max}[agg]
		code := x.status &^ 0xFFFF
		if code != gua.StatusOK || x.status&0x401 != 0x401 || !x.has || math.Abs(x.value-want) > 1e-9 {
			t.Errorf("%s %s at %v: %v %v, want %v (Good, Calculated) from %d raw values", who, agg, x.t.Format("15:04:05"), x.value, x.status, want, n)
			continue
		}
		if n > 0 {
			good++
		}
	}
	if good < 2 {
		t.Errorf("%s %s: %d intervals with data", who, agg, good)
	}
}

func max1(n int) int { return max(n, 1) }

// TestHistoryOpen62541: open62541's UA_Client_HistoryRead_raw (following
// the continuation points of 200 values) and processed reads through its
// generic service call.
func TestHistoryOpen62541(t *testing.T) {
	client := open62541Client(t)
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.`))
	time.Sleep(2500 * time.Millisecond) // history to read
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, client, m[1], "history")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("open62541 client: %v\n%s", err, stderr.String())
	}
	var raw []rawSample
	processed := map[string][]interval{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var l struct {
			Ev, Message, Node string
			Calls, Bad, Count int
			Values            []uint32
			Times             []int64
			Status            uint32
			Intervals         []struct {
				T      int64
				Status uint32
				Value  float64
				Has    bool
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		switch l.Ev {
		case "error":
			t.Fatalf("open62541: %s", l.Message)
		case "raw":
			t.Logf("open62541 raw: %d values in %d calls", l.Count, l.Calls)
			if l.Bad != 0 || l.Calls < 3 {
				t.Errorf("raw: %d values without a UInt32, %d calls (200 values each)", l.Bad, l.Calls)
			}
			for i, v := range l.Values {
				raw = append(raw, rawSample{v: v, t: fromDateTime(l.Times[i])})
			}
		case "processed":
			if gua.StatusCode(l.Status) != gua.StatusOK {
				t.Errorf("processed %s: %v", l.Node, gua.StatusCode(l.Status))
			}
			for _, x := range l.Intervals {
				processed[l.Node] = append(processed[l.Node], interval{t: fromDateTime(x.T), status: gua.StatusCode(x.Status), value: x.Value, has: x.Has})
			}
		}
	}
	checkRaw(t, "open62541", raw, 400, 0)
	for _, agg := range []string{"Average", "Count", "Maximum"} {
		if len(processed[agg]) < 60 {
			t.Fatalf("processed %s: %d intervals, want 60", agg, len(processed[agg]))
		}
		checkProcessed(t, "open62541", agg, raw, processed[agg])
	}
}

// fromDateTime is the time of an OPC UA DateTime.
func fromDateTime(ticks int64) time.Time {
	return time.Unix(ticks/10_000_000-11644473600, ticks%10_000_000*100).UTC()
}

// TestHistoryNodeOPCUA: node-opcua's readHistoryValue (500 values a call,
// following the continuation points) and readAggregateValue, and a node
// that keeps no history.
func TestHistoryNodeOPCUA(t *testing.T) {
	node := nodeOPCUAClient(t)
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.`))
	r := runNodeClient(t, ctx, node, m[1], "history")
	r.scenario(t, "history")
	var rr struct {
		nodeStatus
		Calls, Count int
		Values       []uint32
		Times        []string
		Statuses     []string
	}
	r.get(t, "history", "raw", 0, &rr)
	if !rr.is(gua.StatusOK) || rr.Calls < 2 {
		t.Errorf("readHistoryValue: %s in %d calls (500 values each)", rr.Status, rr.Calls)
	}
	var raw []rawSample
	for i, v := range rr.Values {
		tm, err := time.Parse(time.RFC3339Nano, rr.Times[i])
		if err != nil || rr.Statuses[i] != "Good" {
			t.Fatalf("value %d: %q %v %s", i, rr.Times[i], err, rr.Statuses[i])
		}
		raw = append(raw, rawSample{v: v, t: tm})
	}
	t.Logf("node-opcua raw: %d values in %d calls", len(raw), rr.Calls)
	// node-opcua's Date has milliseconds: the times are compared at them.
	checkRaw(t, "node-opcua", raw, 400, time.Millisecond)
	for i := 0; i < 3; i++ {
		var ag struct {
			nodeStatus
			Name   string
			Values []struct {
				nodeStatus
				Value           json.RawMessage
				SourceTimestamp string
			}
		}
		r.get(t, "history", "aggregate", i, &ag)
		if !ag.is(gua.StatusOK) {
			t.Errorf("readAggregateValue %s: %s", ag.Name, ag.Status)
		}
		var iv []interval
		for _, v := range ag.Values {
			tm, _ := time.Parse(time.RFC3339Nano, v.SourceTimestamp)
			var x float64
			has := json.Unmarshal(v.Value, &x) == nil
			iv = append(iv, interval{t: tm, status: gua.StatusCode(v.Code), value: x, has: has})
		}
		checkProcessed(t, "node-opcua", ag.Name, raw, iv)
	}
	var none nodeStatus
	r.get(t, "history", "unhistorized", 0, &none)
	if !none.is(gua.StatusBadHistoryOperationUnsupported) {
		t.Errorf("history of sim.Command (not historized): %s", none.Status)
	}
}

// TestHistoryBackfill is what an integrator buys the history for: a
// client subscribed to sim.Counter is away for 30 s, comes back, and reads
// what it missed with HistoryRead (gopcua, 1,000 values a call). Every
// value it saw live is the history's value at its source time, and the
// history between its two visits is whole: no duplicate, no value out of
// order, no gap (between any two values the counter moved on by no more
// than the time between them allows).
func TestHistoryBackfill(t *testing.T) {
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.`))
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	first := watchCounter(t, cctx, m[1], 2*time.Second)
	time.Sleep(30 * time.Second) // away: a switch reboots
	second := watchCounter(t, cctx, m[1], 2*time.Second)
	t.Logf("live: %d values before the outage, %d after", len(first), len(second))

	c := dialGopcua(t, cctx, m[1])
	// From a second before the first live value: the history's value at
	// that time may have been recorded before it.
	var hist []rawSample
	var bad []gua.StatusCode
	var cp []byte
	calls := 0
	for {
		calls++
		resp, err := c.HistoryReadRawModified(cctx, []*gua.HistoryReadValueID{{
			NodeID: gua.MustParseNodeID("ns=2;s=sim.Counter"), DataEncoding: &gua.QualifiedName{}, ContinuationPoint: cp}},
			&gua.ReadRawModifiedDetails{StartTime: first[0].t.Add(-time.Second), EndTime: second[len(second)-1].t.Add(time.Nanosecond * 100), NumValuesPerNode: 1000})
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Results[0]
		if r.StatusCode != gua.StatusOK {
			t.Fatalf("HistoryRead call %d: %v", calls, r.StatusCode)
		}
		for _, dv := range r.HistoryData.Value.(*gua.HistoryData).DataValues {
			v, _ := dv.Value.Value().(uint32)
			hist = append(hist, rawSample{v: v, t: dv.SourceTimestamp})
			bad = append(bad, dv.Status)
		}
		if cp = r.ContinuationPoint; len(cp) == 0 {
			break
		}
	}
	// The values from the one at the first live value's time on.
	from := sort.Search(len(hist), func(i int) bool { return hist[i].t.After(first[0].t) }) - 1
	if from < 0 {
		t.Fatalf("no value in the history at or before the first live value's time %v", first[0].t)
	}
	hist, bad = hist[from:], bad[from:]
	for i, st := range bad {
		if st != gua.StatusOK {
			t.Fatalf("a %v value in the history at %v", st, hist[i].t)
		}
	}
	t.Logf("history: %d values in %d calls, %d … %d", len(hist), calls, hist[0].v, hist[len(hist)-1].v)
	checkRaw(t, "history", hist, 30*150, 0)
	// Every value seen live is the history's value at its source time:
	// recorded at that time, or, when the scan read the value again
	// unchanged (a new source time; the history records changes only),
	// at the time it was first read.
	again := 0
	for _, live := range append(first, second...) {
		i := sort.Search(len(hist), func(i int) bool { return hist[i].t.After(live.t) }) - 1
		if i < 0 || hist[i].v != live.v {
			t.Fatalf("live value %d at %v is not the history's value at that time", live.v, live.t)
		}
		if !hist[i].t.Equal(live.t) {
			again++
		}
	}
	t.Logf("live values: %d at the history's time, %d read again unchanged after it", len(first)+len(second)-again, again)
	// Whole: the history holds no gap (no value above is Bad), and the
	// sim's counter, which ticks every 5 ms and is polled every 5 ms,
	// moves on between two values by what the time between them allows (a
	// machine that stalls the scan skips polls), not more. Under emulation
	// the simulator's own ticks stall too and then jump several at once,
	// between two polls a moment apart: there the jumps are counted, not
	// failed; the values the scan read are all in the history all the same
	// (the live values above, and no gap).
	emulated := os.Getenv("EDGED_TEST_EMULATED") != ""
	worst, jumps := time.Duration(0), 0
	for i := 1; i < len(hist); i++ {
		gap := hist[i].t.Sub(hist[i-1].t)
		worst = max(worst, gap)
		ticks := float64(gap) / float64(5*time.Millisecond)
		if float64(hist[i].v-hist[i-1].v) > ticks+2 {
			jumps++
			if !emulated {
				t.Errorf("a hole in the history: %d at %v, then %d at %v", hist[i-1].v, hist[i-1].t, hist[i].v, hist[i].t)
			}
		}
	}
	t.Logf("history: the longest time between two values %v; %d jumps of the counter beyond the time between two values", worst, jumps)
}

// watchCounter subscribes to sim.Counter for d (sampling 5 ms, publishing
// 50 ms, queue 100) and returns what it saw, then disconnects.
func watchCounter(t *testing.T, ctx context.Context, url string, d time.Duration) []rawSample {
	t.Helper()
	c := dialGopcua(t, ctx, url)
	defer c.Close(ctx)
	notes := make(chan *opcua.PublishNotificationData, 1024)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 50 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	item := opcua.NewMonitoredItemCreateRequestWithDefaults(gua.MustParseNodeID("ns=2;s=sim.Counter"), gua.AttributeIDValue, 1)
	item.RequestedParameters.SamplingInterval = 5
	item.RequestedParameters.QueueSize = 100
	if res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, item); err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("CreateMonitoredItems: %v %v", err, res)
	}
	var seen []rawSample
	stop := time.After(d)
	for {
		select {
		case n := <-notes:
			dcn, ok := n.Value.(*gua.DataChangeNotification)
			if !ok {
				continue
			}
			for _, mi := range dcn.MonitoredItems {
				// Good values only: before the first poll (a slow, emulated
				// machine) the counter is Bad_WaitingForInitialData, which
				// the history does not record.
				if v, ok := mi.Value.Value.Value().(uint32); ok && mi.Value.Status == gua.StatusOK {
					seen = append(seen, rawSample{v: v, t: mi.Value.SourceTimestamp})
				}
			}
		case <-stop:
			if len(seen) == 0 {
				t.Fatal("no value of sim.Counter")
			}
			return seen
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// TestAlarmHistory: the simulator's alarm on sim.Sine (active every 10 s)
// is in the event history of its device's folder: gopcua's
// HistoryReadEvent with OfType AlarmConditionType finds its activation
// and its return to normal, with the condition's NodeId.
func TestAlarmHistory(t *testing.T) {
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c := dialGopcua(t, cctx, m[1])
	start := time.Now().Add(-time.Minute)
	field, cond := peer.GopcuaField, peer.GopcuaConditionID()
	filter := &gua.EventFilter{
		SelectClauses: []*gua.SimpleAttributeOperand{field(id.BaseEventType, "SourceName"), field(id.AlarmConditionType, "ActiveState", "Id"), cond},
		WhereClause: &gua.ContentFilter{Elements: []*gua.ContentFilterElement{{FilterOperator: gua.FilterOperatorOfType,
			FilterOperands: []*gua.ExtensionObject{gua.NewExtensionObject(&gua.LiteralOperand{Value: gua.MustVariant(gua.NewNumericNodeID(0, id.AlarmConditionType))})}}}},
	}
	for {
		resp, err := c.HistoryReadEvent(cctx, []*gua.HistoryReadValueID{{NodeID: gua.MustParseNodeID("ns=2;s=sim"), DataEncoding: &gua.QualifiedName{}}},
			&gua.ReadEventDetails{StartTime: start, EndTime: time.Now().Add(time.Minute), Filter: filter})
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Results[0]
		if r.StatusCode != gua.StatusOK && r.StatusCode != gua.StatusGoodNoData {
			t.Fatalf("HistoryReadEvent of sim: %v", r.StatusCode)
		}
		active, normal := 0, 0
		if he, ok := r.HistoryData.Value.(*gua.HistoryEvent); ok {
			for _, e := range he.Events {
				f := e.EventFields
				cid, _ := f[2].Value().(*gua.NodeID)
				if f[0].Value() != "sim.Sine" || cid == nil || cid.String() != "ns=2;s=sim.Sine/Limit" {
					continue
				}
				if f[1].Value() == true {
					active++
				} else if active > 0 {
					normal++
				}
			}
		}
		if active > 0 && normal > 0 {
			t.Logf("sim.Sine's alarm in the history: %d activations, %d returns to normal", active, normal)
			return
		}
		select {
		case <-cctx.Done():
			t.Fatalf("no activation and return to normal of sim.Sine's alarm in the event history (%d, %d)", active, normal)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
