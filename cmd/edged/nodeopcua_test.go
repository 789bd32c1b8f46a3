package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	gua "github.com/gopcua/opcua/ua"
)

// The node-opcua client (an independent OPC UA stack in JavaScript, pinned
// in testdata/nodeopcua/package.json, installed by scripts/deps.sh with
// npm ci) runs the scenarios of testdata/nodeopcua/client.js against edged
// with the simulator. The script reports what it sees as JSON lines; the
// assertions are here.

// nodeOPCUADir is the npm project of the client script.
var nodeOPCUADir = filepath.Join("testdata", "nodeopcua")

// nodeScenarios are run in one node process, in this order (loading
// node-opcua takes most of a second, so not one process each).
var nodeScenarios = []string{"connect", "subscribe", "transfer", "write", "getmonitoreditems", "deadband", "republish"}

// nodeOPCUAClient returns the path of node, or skips the test when node or
// the installed client is missing — except in CI (CI set), where the test
// must run and fails instead (peer.Missing).
func nodeOPCUAClient(t *testing.T) string {
	t.Helper()
	node := peer.Command(t, "node", "nodejs")
	if _, err := os.Stat(filepath.Join(nodeOPCUADir, "node_modules", "node-opcua-client", "package.json")); err != nil {
		peer.Missing(t, "node-opcua interop: the client is not installed (scripts/deps.sh runs npm ci in %s): %v", nodeOPCUADir, err)
	}
	return node
}

// nodeRun is the output of one run of client.js.
type nodeRun struct {
	lines  []nodeLine
	stderr string
}

type nodeLine struct {
	Scenario string `json:"scenario"`
	Ev       string `json:"ev"`
	Message  string `json:"message"` // of "error"
	raw      []byte
}

// nodeStatus is a status code as client.js prints it: node-opcua's name
// and the code.
type nodeStatus struct {
	Status string `json:"status"`
	Code   uint32 `json:"code"`
}

func (s nodeStatus) is(c gua.StatusCode) bool { return s.Code == uint32(c) }

// runNodeClient runs client.js with the scenarios against endpoint and
// returns its lines. A non-zero exit is not fatal here: each scenario's
// subtest reports its own "error" line.
func runNodeClient(t *testing.T, ctx context.Context, node, endpoint string, scenarios ...string) *nodeRun {
	t.Helper()
	return runNodeClientEnv(t, ctx, nil, node, endpoint, scenarios...)
}

// runNodeClientEnv is runNodeClient with env added to the environment.
func runNodeClientEnv(t *testing.T, ctx context.Context, env []string, node, endpoint string, scenarios ...string) *nodeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.js", endpoint, strings.Join(scenarios, ","))
	cmd.Dir = nodeOPCUADir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := &nodeRun{stderr: stderr.String()}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l nodeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Ev == "" {
			t.Logf("node-opcua client: %s", sc.Bytes())
			continue
		}
		l.raw = slices.Clone(sc.Bytes())
		r.lines = append(r.lines, l)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("node client.js: %v\nstderr:\n%s", err, tail(r.stderr, 4000))
	}
	if ctx.Err() != nil {
		t.Fatalf("node client.js did not finish within its hang guard\nstderr:\n%s", tail(r.stderr, 4000))
	}
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// scenario fails the test unless client.js ran the scenario to its end.
func (r *nodeRun) scenario(t *testing.T, name string) {
	t.Helper()
	for _, l := range r.lines {
		if l.Scenario != name {
			continue
		}
		switch l.Ev {
		case "done":
			return
		case "error":
			t.Fatalf("node-opcua client, scenario %s: %s\nstderr:\n%s", name, l.Message, tail(r.stderr, 4000))
		}
	}
	t.Fatalf("node-opcua client, scenario %s: no end line\nstderr:\n%s", name, tail(r.stderr, 4000))
}

// get decodes the n-th line (from 0) of the scenario's event ev into v.
func (r *nodeRun) get(t *testing.T, scenario, ev string, n int, v any) {
	t.Helper()
	for _, l := range r.lines {
		if l.Scenario != scenario || l.Ev != ev {
			continue
		}
		if n > 0 {
			n--
			continue
		}
		if err := json.Unmarshal(l.raw, v); err != nil {
			t.Fatalf("%s %s: %v in %s", scenario, ev, err, l.raw)
		}
		return
	}
	t.Fatalf("node-opcua client, scenario %s: no %q line", scenario, ev)
}

// TestNodeOPCUA runs the node-opcua client against edged: issue 6's tests
// with an independent client (point 7), besides gopcua's.
func TestNodeOPCUA(t *testing.T) {
	node := nodeOPCUAClient(t)
	begin := time.Now()
	ctx, cancel, out, errc := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.`))
	r := runNodeClient(t, ctx, node, m[1], nodeScenarios...)
	end := time.Now()

	t.Run("connect", func(t *testing.T) {
		r.scenario(t, "connect")
		var br struct {
			nodeStatus
			References []struct {
				BrowseName string `json:"browseName"`
				NodeID     string `json:"nodeId"`
				NodeClass  int    `json:"nodeClass"`
			} `json:"references"`
		}
		r.get(t, "connect", "browse", 0, &br)
		if !br.is(gua.StatusOK) {
			t.Fatalf("Browse Objects: %s", br.Status)
		}
		want := map[string]string{"Server": "ns=0;i=2253", "2:sim": "ns=2;s=sim", "2:io": "ns=2;s=io", "3:Diagnostics": "ns=3;s=Diagnostics"}
		for _, ref := range br.References {
			if id, ok := want[ref.BrowseName]; ok {
				if ref.NodeID != id || ref.NodeClass != 1 {
					t.Errorf("Objects/%s: %s, node class %d; want %s, Object (1)", ref.BrowseName, ref.NodeID, ref.NodeClass, id)
				}
				delete(want, ref.BrowseName)
			}
		}
		if len(want) > 0 {
			t.Errorf("Browse of Objects lacks %v; got %+v", want, br.References)
		}

		type value struct {
			nodeStatus
			DataType string          `json:"dataType"`
			Value    json.RawMessage `json:"value"`
		}
		var reads [2]struct {
			Counter     value `json:"counter"`
			CurrentTime value `json:"currentTime"`
		}
		var counters [2]uint32
		var times [2]time.Time
		for i := range reads {
			r.get(t, "connect", "read", i, &reads[i])
			c, ct := reads[i].Counter, reads[i].CurrentTime
			if !c.is(gua.StatusOK) || c.DataType != "UInt32" || json.Unmarshal(c.Value, &counters[i]) != nil {
				t.Fatalf("read %d of sim.Counter: %s %s %s", i, c.Status, c.DataType, c.Value)
			}
			var s string
			var err error
			if ct.is(gua.StatusOK) && ct.DataType == "DateTime" && json.Unmarshal(ct.Value, &s) == nil {
				times[i], err = time.Parse(time.RFC3339Nano, s)
			}
			if !ct.is(gua.StatusOK) || ct.DataType != "DateTime" || err != nil {
				t.Fatalf("read %d of Server_ServerStatus_CurrentTime: %s %s %s %v", i, ct.Status, ct.DataType, ct.Value, err)
			}
			// The server's clock is this machine's: a sanity check, not a timing.
			if times[i].Before(begin.Add(-time.Minute)) || times[i].After(end.Add(time.Minute)) {
				t.Errorf("CurrentTime %v is not within the test's run (%v … %v)", times[i], begin, end)
			}
		}
		if counters[1] <= counters[0] {
			t.Errorf("sim.Counter read %d, then %d 100 ms later: want it to advance", counters[0], counters[1])
		}
		if times[1].Before(times[0]) {
			t.Errorf("CurrentTime went back: %v, then %v", times[0], times[1])
		}
	})

	type item struct {
		nodeStatus
		ServerHandle            uint32  `json:"serverHandle"`
		ClientHandle            uint32  `json:"clientHandle"`
		RevisedSamplingInterval float64 `json:"revisedSamplingInterval"`
	}

	t.Run("subscribe", func(t *testing.T) {
		r.scenario(t, "subscribe")
		var sub struct {
			RevisedPublishingInterval float64 `json:"revisedPublishingInterval"`
		}
		r.get(t, "subscribe", "subscription", 0, &sub)
		if sub.RevisedPublishingInterval != 5 {
			t.Errorf("revised publishing interval %v ms, want 5", sub.RevisedPublishingInterval)
		}
		var it item
		r.get(t, "subscribe", "item", 0, &it)
		if !it.is(gua.StatusOK) || it.RevisedSamplingInterval != 5 {
			t.Errorf("monitored item: %s, revised sampling interval %v ms; want Good, 5", it.Status, it.RevisedSamplingInterval)
		}
		var c struct {
			Distinct, Notifications, Decreasing int
			Min, Max                            uint32
			Decreases                           [][]uint32 // the values up to each decrease
		}
		r.get(t, "subscribe", "count", 0, &c)
		t.Logf("node-opcua: sim.Counter: %d distinct values in 2 s (400 possible), %d notifications", c.Distinct, c.Notifications)
		switch {
		case c.Decreasing == 0:
		case os.Getenv("EDGED_TEST_EMULATED") != "":
			// Seen once under qemu-arm (make test-arm): one smaller value.
			// The cause found, an item created while older images waited
			// for the run loop (TestCreatedItemSkipsOlderPendingImages), is
			// fixed; until emulated runs have shown no other, a decrease is
			// logged there with the values before it, and an error natively.
			t.Logf("under emulation: %d notifications of sim.Counter came with a smaller value than the one before: %v", c.Decreasing, c.Decreases)
		default:
			t.Errorf("%d notifications of sim.Counter came with a smaller value than the one before: %v", c.Decreasing, c.Decreases)
		}
		if span := int(c.Max-c.Min) + 1; c.Distinct > span {
			t.Errorf("%d distinct values between %d and %d", c.Distinct, c.Min, c.Max)
		}
		// TestSubscribeCounter holds the gopcua client to the 350
		// of 400. Here node-opcua runs in a process of its own beside the
		// test's edged, which makes the count more sensitive to other
		// work on the machine (seen: 376–401 on a quiet machine, 328 with
		// a benchmark running beside it); what is lost then are simulator
		// ticks and engine cycles, not notifications (values rise without
		// a repeat, checked above). So 300 natively; under make test-arm
		// edged runs in qemu (node natively): 250 (seen: 321–394).
		want := 300
		if os.Getenv("EDGED_TEST_EMULATED") != "" {
			want = 250
		}
		if c.Distinct < want {
			t.Errorf("node-opcua received %d of the 400 possible changes of sim.Counter in 2 s, want at least %d", c.Distinct, want)
		}
	})

	t.Run("transfer", func(t *testing.T) {
		r.scenario(t, "transfer")
		var created struct {
			SubscriptionID uint32 `json:"subscriptionId"`
			Item           item   `json:"item"`
		}
		r.get(t, "transfer", "created", 0, &created)
		if !created.Item.is(gua.StatusOK) {
			t.Fatalf("session A's monitored item: %s", created.Item.Status)
		}
		var tr struct {
			nodeStatus
			Results []nodeStatus `json:"results"`
		}
		r.get(t, "transfer", "transfer", 0, &tr)
		if !tr.is(gua.StatusOK) || len(tr.Results) != 1 || !tr.Results[0].is(gua.StatusOK) {
			t.Fatalf("TransferSubscriptions([%d]) in session B: %s, results %+v; want Good, [Good]", created.SubscriptionID, tr.Status, tr.Results)
		}
		var b struct {
			SubscriptionIDs         []uint32 `json:"subscriptionIds"`
			Distinct                int      `json:"distinct"`
			First                   uint32   `json:"first"`
			Last                    uint32   `json:"last"`
			ALastBeforeTransfer     uint32   `json:"aLastBeforeTransfer"`
			SequenceNumbers         []uint32 `json:"sequenceNumbers"`
			ALastDataSequenceNumber uint32   `json:"aLastDataSequenceNumber"`
		}
		r.get(t, "transfer", "session_b", 0, &b)
		if !slices.Equal(b.SubscriptionIDs, []uint32{created.SubscriptionID}) {
			t.Errorf("session B's Publish responses were for subscriptions %v, want [%d]", b.SubscriptionIDs, created.SubscriptionID)
		}
		if b.Distinct < 50 || b.Last <= b.First {
			t.Errorf("session B: %d distinct values of sim.Counter, %d … %d; want 50, rising", b.Distinct, b.First, b.Last)
		}
		// sendInitialValues: B's first value is the current one, not older
		// than what A last had.
		if b.First < b.ALastBeforeTransfer {
			t.Errorf("session B's first value %d is older than session A's last %d", b.First, b.ALastBeforeTransfer)
		}
		// The subscription's sequence numbers go on in session B, without
		// a gap.
		for i, n := range b.SequenceNumbers {
			if i == 0 && n <= b.ALastDataSequenceNumber || i > 0 && n != b.SequenceNumbers[i-1]+1 {
				t.Errorf("session B's sequence numbers %v (session A's last %d): want them rising by 1 from above A's", b.SequenceNumbers, b.ALastDataSequenceNumber)
				break
			}
		}
		var a struct {
			StatusChanges               []nodeStatus `json:"statusChanges"`
			ValuesAfter                 []uint32     `json:"valuesAfter"`
			StatusChangeSequenceNumbers []uint32     `json:"statusChangeSequenceNumbers"`
		}
		r.get(t, "transfer", "session_a", 0, &a)
		if len(a.StatusChanges) != 1 || !a.StatusChanges[0].is(gua.StatusGoodSubscriptionTransferred) ||
			len(a.StatusChangeSequenceNumbers) != 1 {
			t.Fatalf("session A's StatusChangeNotifications: %+v in messages %v, want [GoodSubscriptionTransferred] in one", a.StatusChanges, a.StatusChangeSequenceNumbers)
		}
		if seq := a.StatusChangeSequenceNumbers[0]; seq <= b.ALastDataSequenceNumber {
			t.Errorf("session A's StatusChangeNotification has sequence number %d, not above its last data message's %d", seq, b.ALastDataSequenceNumber)
		} else if slices.Contains(b.SequenceNumbers, seq) {
			// OPC 10000-4 §5.13.1.1: NotificationMessages are identified
			// by their sequence numbers; the status change takes one of
			// its own.
			t.Errorf("sequence number %d is on session A's StatusChangeNotification and on a data message of session B (%v)", seq, b.SequenceNumbers)
		}
		// Session A may still take in Publish responses that the server sent
		// before the transfer; none may hold a value sampled after it.
		if len(a.ValuesAfter) > 0 {
			t.Logf("session A: data changes %v read after the transfer response", a.ValuesAfter)
		}
		for _, v := range a.ValuesAfter {
			if v > b.First {
				t.Errorf("session A got sim.Counter = %d after the transfer; session B's initial value was %d", v, b.First)
			}
		}
	})

	t.Run("write", func(t *testing.T) {
		r.scenario(t, "write")
		var w struct {
			nodeStatus
			Value uint16 `json:"value"`
		}
		r.get(t, "write", "write", 0, &w)
		if !w.is(gua.StatusOK) {
			t.Errorf("Write sim.Command = %d: %s", w.Value, w.Status)
		}
		var seen [2]struct {
			After string `json:"after"`
			Value uint16 `json:"value"`
		}
		r.get(t, "write", "status", 0, &seen[0])
		if seen[0].After != "write" || seen[0].Value != w.Value {
			t.Errorf("after the Write of %d: sim.Status data change %+v", w.Value, seen[0])
		}
		var c struct {
			nodeStatus
			Value                uint16       `json:"value"`
			InputArgumentResults []nodeStatus `json:"inputArgumentResults"`
		}
		r.get(t, "write", "call", 0, &c)
		if !c.is(gua.StatusOK) {
			t.Errorf("Call sim.WriteCommand(%d): %s", c.Value, c.Status)
		}
		for i, s := range c.InputArgumentResults {
			if !s.is(gua.StatusOK) {
				t.Errorf("Call sim.WriteCommand(%d): input argument %d: %s", c.Value, i, s.Status)
			}
		}
		r.get(t, "write", "status", 1, &seen[1])
		if seen[1].After != "call" || seen[1].Value != c.Value || c.Value == w.Value {
			t.Errorf("after the Call with %d: sim.Status data change %+v", c.Value, seen[1])
		}
		for i, argType := range []string{"String", "Double"} {
			var bad struct {
				nodeStatus
				ArgType              string       `json:"argType"`
				InputArgumentResults []nodeStatus `json:"inputArgumentResults"`
			}
			r.get(t, "write", "call_bad", i, &bad)
			if bad.ArgType != argType || !bad.is(gua.StatusBadInvalidArgument) ||
				len(bad.InputArgumentResults) != 1 || !bad.InputArgumentResults[0].is(gua.StatusBadTypeMismatch) {
				t.Errorf("Call sim.WriteCommand(%s): %s %+v; want BadInvalidArgument, [BadTypeMismatch]", argType, bad.Status, bad.InputArgumentResults)
			}
		}
		var cmd struct {
			nodeStatus
			Value uint16 `json:"value"`
		}
		r.get(t, "write", "command", 0, &cmd)
		if !cmd.is(gua.StatusOK) || cmd.Value != c.Value {
			t.Errorf("sim.Command after the rejected Calls: %s %d, want Good %d", cmd.Status, cmd.Value, c.Value)
		}
	})

	t.Run("getmonitoreditems", func(t *testing.T) {
		r.scenario(t, "getmonitoreditems")
		var its struct {
			Items []struct {
				Tag string `json:"tag"`
				item
			} `json:"items"`
		}
		r.get(t, "getmonitoreditems", "items", 0, &its)
		type pair struct{ server, client uint32 }
		var want []pair
		for _, it := range its.Items {
			if !it.is(gua.StatusOK) {
				t.Fatalf("monitored item on %s: %s", it.Tag, it.Status)
			}
			want = append(want, pair{it.ServerHandle, it.ClientHandle})
		}
		var got struct {
			ServerHandles []uint32 `json:"serverHandles"`
			ClientHandles []uint32 `json:"clientHandles"`
		}
		r.get(t, "getmonitoreditems", "get_monitored_items", 0, &got)
		if len(got.ServerHandles) != len(got.ClientHandles) {
			t.Fatalf("GetMonitoredItems: %d server handles, %d client handles", len(got.ServerHandles), len(got.ClientHandles))
		}
		var have []pair
		for i := range got.ServerHandles {
			have = append(have, pair{got.ServerHandles[i], got.ClientHandles[i]})
		}
		less := func(a, b pair) int { return int(int64(a.server) - int64(b.server)) }
		slices.SortFunc(want, less)
		slices.SortFunc(have, less)
		if len(want) != 3 || !slices.Equal(have, want) {
			t.Errorf("GetMonitoredItems (server, client handles): %v; CreateMonitoredItems gave %v", have, want)
		}
		var unk struct {
			nodeStatus
			OutputArguments int `json:"outputArguments"`
		}
		r.get(t, "getmonitoreditems", "get_monitored_items_unknown", 0, &unk)
		if !unk.is(gua.StatusBadSubscriptionIDInvalid) || unk.OutputArguments != 0 {
			t.Errorf("GetMonitoredItems of an unknown subscription: %s with %d outputs, want BadSubscriptionIdInvalid", unk.Status, unk.OutputArguments)
		}
	})

	t.Run("deadband", func(t *testing.T) {
		r.scenario(t, "deadband")
		var its struct{ All, Filtered item }
		r.get(t, "deadband", "items", 0, &its)
		if !its.All.is(gua.StatusOK) || !its.Filtered.is(gua.StatusOK) {
			t.Fatalf("monitored items on sim.Ramp: %s (no filter), %s (Absolute deadband)", its.All.Status, its.Filtered.Status)
		}
		var d struct {
			Deadband float64   `json:"deadband"`
			Filtered []float32 `json:"filtered"`
			All      []float32 `json:"all"`
		}
		r.get(t, "deadband", "deadband", 0, &d)
		checkDeadband(t, d.Deadband, d.All, d.Filtered)

		var pct struct {
			nodeStatus
			Results []nodeStatus `json:"results"`
		}
		r.get(t, "deadband", "percent", 0, &pct)
		if !pct.is(gua.StatusOK) || len(pct.Results) != 1 || !pct.Results[0].is(gua.StatusBadMonitoredItemFilterUnsupported) {
			t.Errorf("Percent deadband on sim.Ramp (no EURange): %s %+v, want [BadMonitoredItemFilterUnsupported]", pct.Status, pct.Results)
		}
	})

	t.Run("republish", func(t *testing.T) {
		r.scenario(t, "republish")
		var it nodeStatus
		r.get(t, "republish", "item", 0, &it)
		if !it.is(gua.StatusOK) {
			t.Fatalf("monitored item on sim.Counter: %s", it.Status)
		}
		type message struct {
			Seq       uint32   `json:"seq"`
			Values    []uint32 `json:"values"`
			Available []uint32 `json:"available"`
		}
		var pub struct{ Messages []message }
		r.get(t, "republish", "published", 0, &pub)
		if len(pub.Messages) != 3 {
			t.Fatalf("%d data messages, want 3", len(pub.Messages))
		}
		var seqs []uint32
		for i, m := range pub.Messages {
			seqs = append(seqs, m.Seq)
			if i > 0 && m.Seq != seqs[i-1]+1 || len(m.Values) == 0 {
				t.Errorf("message %d: sequence number %d after %v, values %v", i, m.Seq, seqs[:i], m.Values)
			}
			// Nothing was acknowledged: every message so far can be
			// retransmitted.
			if !slices.Equal(m.Available, seqs) {
				t.Errorf("message %d (%d): AvailableSequenceNumbers %v, want %v", i, m.Seq, m.Available, seqs)
			}
		}
		type result struct {
			nodeStatus
			Seq    uint32   `json:"seq"`
			Values []uint32 `json:"values"`
		}
		var rp struct{ Result result }
		r.get(t, "republish", "republish", 0, &rp)
		if first := pub.Messages[0]; !rp.Result.is(gua.StatusOK) || rp.Result.Seq != first.Seq || !slices.Equal(rp.Result.Values, first.Values) {
			t.Errorf("Republish(%d): %s, message %d with %v; want Good, the message with %v", first.Seq, rp.Result.Status, rp.Result.Seq, rp.Result.Values, first.Values)
		}
		var ack struct{ Results []nodeStatus }
		r.get(t, "republish", "ack", 0, &ack)
		if len(ack.Results) != 1 || !ack.Results[0].is(gua.StatusOK) {
			t.Errorf("acknowledgement of %d: %+v, want [Good]", seqs[0], ack.Results)
		}
		var gone struct{ Result result }
		r.get(t, "republish", "republish_acked", 0, &gone)
		if !gone.Result.is(gua.StatusBadMessageNotAvailable) {
			t.Errorf("Republish(%d) after its acknowledgement: %s, want BadMessageNotAvailable", seqs[0], gone.Result.Status)
		}
	})

	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// checkDeadband asserts that the values an Absolute deadband let through
// (filtered) are exactly those that OPC 10000-4's rule picks from every
// sampled value (all, from an item without filter on the same tag, sampled
// in the same cycles): the first, then each that differs by more than the
// deadband from the last one reported.
func checkDeadband(t *testing.T, deadband float64, all, filtered []float32) {
	t.Helper()
	if len(filtered) < 12 {
		t.Fatalf("%d values through the deadband, want 12", len(filtered))
	}
	for i := 1; i < len(filtered); i++ {
		if math.Abs(float64(filtered[i])-float64(filtered[i-1])) <= deadband {
			t.Errorf("value %d through the deadband %v: %v after %v", i, deadband, filtered[i], filtered[i-1])
		}
	}
	start := slices.Index(all, filtered[0])
	if start < 0 {
		t.Fatalf("first value %v through the deadband is not among the unfiltered ones %v", filtered[0], all)
	}
	want := []float32{all[start]}
	for _, v := range all[start+1:] {
		if math.Abs(float64(v)-float64(want[len(want)-1])) > deadband {
			want = append(want, v)
		}
	}
	if len(want) > len(filtered) {
		want = want[:len(filtered)]
	}
	if !slices.Equal(filtered, want) {
		t.Errorf("values through the Absolute deadband %v:\n got %v\nwant %v\n(from the unfiltered %v)", deadband, filtered, want, all[start:])
	}
}
