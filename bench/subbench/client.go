package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// The client role: one session (internal/testutil/uaclient), one subscription with
// the monitored items sim.Counter and sim.Status, Publish requests kept in
// flight, and three runs in turn on the same connection:
//
//  1. publish latency: for -warmup, then for -duration, it records the
//     receipt time (CLOCK_REALTIME, time.Now().UnixNano()) of each value of
//     sim.Counter, and prints them as "recv VALUE NS" lines for the main
//     role to match with the publish times of the engine's images;
//  2. write → status: -reps times, a Write of sim.Command and the wait for
//     the data change of sim.Status carrying the written value;
//  3. call → status: the same with a Call of sim.WriteCommand;
//  4. change → event: -reps times, a Write of sim.Command that moves
//     sim.Status off normal (or back), and the wait for the event of
//     sim.Status's off-normal alarm saying so: from the event's Time (the
//     source time of the read that brought the change) to its receipt.
//
// Runs 2 to 4 print their result lines themselves ("subbench: ...").

// Client handles of the monitored items.
const (
	handleCounter = 1
	handleStatus  = 2
	handleEvents  = 3 // the Server object's events
)

type clientFlags struct {
	addr             string
	ns               int
	warmup, duration time.Duration
	reps             int
	inflight         int
	queue            int
}

func clientMain(args []string, _ io.Reader, out io.Writer) error {
	var f clientFlags
	fs := flag.NewFlagSet("subbench client", flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", "", "server address host:port")
	fs.IntVar(&f.ns, "ns", 2, "namespace index of the tags")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "warm-up of the publish latency run")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "measured window of the publish latency run")
	fs.IntVar(&f.reps, "reps", 1000, "repetitions of the write and of the call run")
	fs.IntVar(&f.inflight, "inflight", 4, "Publish requests kept in flight")
	fs.IntVar(&f.queue, "queue", 10, "queue size of the monitored items")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.inflight < 1 || f.queue < 2 || f.reps < 1 || f.duration <= 0 || f.warmup < 0 {
		return fmt.Errorf("subbench client: want -inflight ≥ 1, -queue ≥ 2, -reps ≥ 1, -duration > 0")
	}
	c, err := uaclient.DialSession(f.addr, "subbench", 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Conn().Close()
	s, err := newSubClient(c, uint16(f.ns), f.inflight, uint32(f.queue))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	if err := s.publishRun(f.warmup, f.duration, w); err != nil {
		return err
	}
	w.Flush()
	write := &ua.WriteRequest{NodesToWrite: []ua.WriteValue{{
		NodeID: ua.NewStringNodeID(s.ns, "sim.Command"), AttributeID: uint32(ua.AttributeIDValue),
	}}}
	call := &ua.CallRequest{MethodsToCall: []ua.CallMethodRequest{{
		ObjectID: ua.NewStringNodeID(s.ns, "sim"), MethodID: ua.NewStringNodeID(s.ns, "sim.WriteCommand"),
		InputArguments: make([]ua.Variant, 1),
	}}}
	for _, sc := range []struct {
		name string
		req  ua.Body
	}{{"write", write}, {"call", call}} {
		r, err := s.commandRun(sc.req, f.reps)
		if err != nil {
			return fmt.Errorf("%s run: %w", sc.name, err)
		}
		r.print(w, sc.name)
		w.Flush()
	}
	change, wr, missed, err := s.eventRun(f.reps)
	if err != nil {
		return fmt.Errorf("event run: %w", err)
	}
	fmt.Fprintf(w, "subbench: sim.Status off normal or back (its read) → its alarm's event received, %d repetitions: p50 %v  p99 %v  max %v  (%d missed; publishing 5 ms + cycle 5 ms = 10 ms)\n",
		len(change)+missed, pct(change, 50), pct(change, 99), pct(change, 100), missed)
	fmt.Fprintf(w, "  distribution: %s\n", dist(change))
	fmt.Fprintf(w, "subbench: Write sim.Command → that event received: p50 %v  p99 %v  max %v\n", pct(wr, 50), pct(wr, 99), pct(wr, 100))
	w.Flush()
	// Let the Publish requests in flight be answered (a keep-alive at the
	// latest) before closing, so Close reads its own response.
	if err := s.drain(); err != nil {
		return err
	}
	return c.Close(5 * time.Second)
}

// subClient is the session's subscription and its Publish loop, driven by
// whoever reads the next message (next).
type subClient struct {
	c     *uaclient.Client
	ns    uint16
	subID uint32

	pubIDs  []uint32 // request ids of the Publish requests in flight
	acks    []ua.SubscriptionAcknowledgement
	pubReq  ua.PublishRequest
	resp    ua.PublishResponse
	lastSeq uint32

	onValue func(handle uint32, dv *ua.DataValue, recvNs int64)
	onEvent func(fields []ua.Variant, recvNs int64)
	command uint16 // the last value written to sim.Command

	// Counted over the life of the subscription.
	seqGaps, overflows, keepAlives, notifications uint64
}

func newSubClient(c *uaclient.Client, ns uint16, inflight int, queue uint32) (*subClient, error) {
	s := &subClient{c: c, ns: ns}
	var cs ua.CreateSubscriptionResponse
	err := c.Call(&ua.CreateSubscriptionRequest{
		RequestHeader:               c.Header(),
		RequestedPublishingInterval: 5,
		RequestedLifetimeCount:      6000, // 30 s at 5 ms
		RequestedMaxKeepAliveCount:  200,  // 1 s
		PublishingEnabled:           true,
	}, &cs)
	if err != nil {
		return nil, fmt.Errorf("CreateSubscription: %w", err)
	}
	if cs.RevisedPublishingInterval != 5 {
		return nil, fmt.Errorf("publishing interval revised to %v ms, want 5", cs.RevisedPublishingInterval)
	}
	s.subID = cs.SubscriptionID
	item := func(name string, handle uint32) ua.MonitoredItemCreateRequest {
		return ua.MonitoredItemCreateRequest{
			ItemToMonitor:  ua.ReadValueID{NodeID: ua.NewStringNodeID(ns, name), AttributeID: uint32(ua.AttributeIDValue)},
			MonitoringMode: ua.MonitoringModeReporting,
			RequestedParameters: ua.MonitoringParameters{
				ClientHandle: handle, SamplingInterval: 5, QueueSize: queue, DiscardOldest: true,
			},
		}
	}
	var cm ua.CreateMonitoredItemsResponse
	err = c.Call(&ua.CreateMonitoredItemsRequest{
		RequestHeader:      c.Header(),
		SubscriptionID:     s.subID,
		TimestampsToReturn: ua.TimestampsToReturnBoth,
		ItemsToCreate:      []ua.MonitoredItemCreateRequest{item("sim.Counter", handleCounter), item("sim.Status", handleStatus), eventItem(queue)},
	}, &cm)
	if err != nil {
		return nil, fmt.Errorf("CreateMonitoredItems: %w", err)
	}
	if len(cm.Results) != 3 {
		return nil, fmt.Errorf("CreateMonitoredItems: %d results, want 3", len(cm.Results))
	}
	for i, r := range cm.Results {
		if r.StatusCode.IsBad() {
			return nil, fmt.Errorf("CreateMonitoredItems: item %d: %w", i, r.StatusCode)
		}
		if i == 2 {
			continue // the event item is not sampled
		}
		if r.RevisedSamplingInterval != 5 || r.RevisedQueueSize < 2 {
			return nil, fmt.Errorf("item %d: sampling interval revised to %v ms, queue size to %d", i, r.RevisedSamplingInterval, r.RevisedQueueSize)
		}
	}
	s.acks = make([]ua.SubscriptionAcknowledgement, 0, 64)
	s.pubIDs = make([]uint32, 0, inflight)
	for range inflight {
		if err := s.publish(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// publish sends a Publish request carrying the pending acknowledgements.
func (s *subClient) publish() error {
	s.pubReq.RequestHeader = s.c.Header()
	s.pubReq.RequestHeader.TimeoutHint = 10000
	s.pubReq.SubscriptionAcknowledgements = s.acks
	id, err := s.c.Send(&s.pubReq)
	if err != nil {
		return err
	}
	s.acks = s.acks[:0]
	s.pubIDs = append(s.pubIDs, id)
	return nil
}

// next reads the next response before deadline (zero: none). A Publish
// response is handled here (its values go to onValue, its sequence number
// is acknowledged, a new Publish request replaces it) and next returns
// id 0; any other response is returned with its request id, for the
// caller to decode. Past the deadline it returns 0, nil, nil.
func (s *subClient) next(deadline time.Time) (uint32, []byte, error) {
	s.c.Conn().SetReadDeadline(deadline)
	id, msg, err := s.c.ReadMessage()
	now := time.Now().UnixNano()
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil, nil
		}
		return 0, nil, err
	}
	i := slices.Index(s.pubIDs, id)
	if i < 0 {
		return id, msg, nil
	}
	s.pubIDs = slices.Delete(s.pubIDs, i, i+1)
	if err := s.c.Decode(msg, &s.resp); err != nil {
		return 0, nil, fmt.Errorf("Publish: %w", err)
	}
	if err := s.handle(now); err != nil {
		return 0, nil, err
	}
	return 0, nil, s.publish()
}

// handle takes in the Publish response in s.resp, received at recvNs.
func (s *subClient) handle(recvNs int64) error {
	r := &s.resp
	if r.SubscriptionID != s.subID {
		return fmt.Errorf("Publish response for subscription %d, want %d", r.SubscriptionID, s.subID)
	}
	nm := &r.NotificationMessage
	if len(nm.NotificationData) == 0 {
		s.keepAlives++
		return nil
	}
	if s.lastSeq != 0 && nm.SequenceNumber != s.lastSeq+1 {
		s.seqGaps++
	}
	s.lastSeq = nm.SequenceNumber
	s.acks = append(s.acks, ua.SubscriptionAcknowledgement{SubscriptionID: s.subID, SequenceNumber: nm.SequenceNumber})
	for i := range nm.NotificationData {
		if el, ok := nm.NotificationData[i].Body.(*ua.EventNotificationList); ok {
			for j := range el.Events {
				if s.onEvent != nil {
					s.onEvent(el.Events[j].EventFields, recvNs)
				}
			}
			continue
		}
		dc, ok := nm.NotificationData[i].Body.(*ua.DataChangeNotification)
		if !ok {
			continue
		}
		for j := range dc.MonitoredItems {
			mi := &dc.MonitoredItems[j]
			s.notifications++
			if mi.Value.Status&0x480 == 0x480 { // InfoType DataValue, Overflow
				s.overflows++
			}
			if s.onValue != nil {
				s.onValue(mi.ClientHandle, &mi.Value, recvNs)
			}
		}
	}
	return nil
}

// drain waits until no Publish request is in flight, sending no more.
func (s *subClient) drain() error {
	s.onValue = nil
	deadline := time.Now().Add(5 * time.Second)
	for len(s.pubIDs) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d Publish requests unanswered", len(s.pubIDs))
		}
		s.c.Conn().SetReadDeadline(deadline)
		id, msg, err := s.c.ReadMessage()
		if err != nil {
			return err
		}
		if i := slices.Index(s.pubIDs, id); i >= 0 {
			s.pubIDs = slices.Delete(s.pubIDs, i, i+1)
			if err := s.c.Decode(msg, &s.resp); err != nil {
				return err
			}
		}
	}
	s.c.Conn().SetReadDeadline(time.Time{})
	return nil
}

// publishRun records the receipt times of sim.Counter's values over the
// window after the warm-up and prints them, then a "window" line:
// notifications, Publish sequence gaps, overflows and keep-alives in the
// window.
func (s *subClient) publishRun(warmup, duration time.Duration, w io.Writer) error {
	n := int(duration/(5*time.Millisecond))*2 + 64
	vals, times := make([]uint32, 0, n), make([]int64, 0, n)
	record := false
	s.onValue = func(h uint32, dv *ua.DataValue, recvNs int64) {
		if h != handleCounter || !record || len(vals) == cap(vals) {
			return
		}
		if v, ok := dv.Value.Uint32(); ok {
			vals, times = append(vals, v), append(times, recvNs)
		}
	}
	var m0, m1 runtime.MemStats
	end := time.Now().Add(warmup)
	for phase := range 2 {
		for time.Now().Before(end) {
			if id, _, err := s.next(end); err != nil {
				return err
			} else if id != 0 {
				return fmt.Errorf("response to request %d, which is not a Publish", id)
			}
		}
		if phase == 0 {
			runtime.ReadMemStats(&m0)
			record = true
			end = time.Now().Add(duration)
			s.seqGaps, s.overflows, s.keepAlives, s.notifications = 0, 0, 0, 0
		}
	}
	runtime.ReadMemStats(&m1)
	s.onValue = nil
	for i := range vals {
		fmt.Fprintf(w, "recv %d %d\n", vals[i], times[i])
	}
	fmt.Fprintf(w, "window notifications=%d seqgaps=%d overflows=%d keepalives=%d client_mallocs=%d\n",
		s.notifications, s.seqGaps, s.overflows, s.keepAlives, m1.Mallocs-m0.Mallocs)
	return nil
}

// cmdResult is the outcome of a write or call run.
type cmdResult struct {
	status  []time.Duration // request sent → data change of Status received
	resp    []time.Duration // request sent → its response received
	bad     int             // responses with a bad status
	lastBad ua.StatusCode
	missed  int // repetitions whose Status change did not come within the bound
}

func (r *cmdResult) print(w io.Writer, name string) {
	what := map[string]string{"write": "Write sim.Command", "call": "Call sim.WriteCommand"}[name]
	n := len(r.status)
	fmt.Fprintf(w, "subbench: %s → data change of sim.Status, %d repetitions: p50 %v  p99 %v  max %v  (%d missed, %d bad responses%s)\n",
		what, n+r.missed, pct(r.status, 50), pct(r.status, 99), pct(r.status, 100), r.missed, r.bad, badNote(r))
	fmt.Fprintf(w, "  distribution: %s\n", dist(r.status))
	fmt.Fprintf(w, "subbench: %s → its response: p50 %v  p99 %v  max %v\n", what, pct(r.resp, 50), pct(r.resp, 99), pct(r.resp, 100))
}

func badNote(r *cmdResult) string {
	if r.bad == 0 {
		return ""
	}
	return ", e.g. " + r.lastBad.String()
}

// repBound bounds one repetition: a Status change later than this is
// counted as missed.
const repBound = 2 * time.Second

// commandRun runs reps repetitions of req (a WriteRequest of sim.Command
// or a CallRequest of sim.WriteCommand): set a new value, send, wait for
// both its response and the data change of sim.Status with that value,
// then pause for a random 0..5 ms so that the requests start at every
// phase of the scan cycle and of the simulator's tick.
func (s *subClient) commandRun(req ua.Body, reps int) (*cmdResult, error) {
	r := &cmdResult{status: make([]time.Duration, 0, reps), resp: make([]time.Duration, 0, reps)}
	var want uint16
	var gotNs int64
	s.onValue = func(h uint32, dv *ua.DataValue, recvNs int64) {
		if v, ok := dv.Value.Uint16(); ok && h == handleStatus && v == want && gotNs == 0 {
			gotNs = recvNs
		}
	}
	defer func() { s.onValue = nil }()
	var wresp ua.WriteResponse
	var cresp ua.CallResponse
	for range reps {
		want = uint16(rand.IntN(65535) + 1) // never 0 nor, below, the current Status
		for want == s.command {
			want = uint16(rand.IntN(65535) + 1)
		}
		s.command = want
		v := ua.MustVariant(want)
		switch q := req.(type) {
		case *ua.WriteRequest:
			q.RequestHeader = s.c.Header()
			q.NodesToWrite[0].Value = ua.DataValue{Value: v}
		case *ua.CallRequest:
			q.RequestHeader = s.c.Header()
			q.MethodsToCall[0].InputArguments[0] = v
		}
		gotNs = 0
		t0 := time.Now()
		id, err := s.c.Send(req)
		if err != nil {
			return nil, err
		}
		respDone := false
		bound := t0.Add(repBound)
		for !respDone || gotNs == 0 {
			got, msg, err := s.next(bound)
			if err != nil {
				return nil, err
			}
			if got == 0 {
				if time.Now().After(bound) {
					if !respDone {
						return nil, fmt.Errorf("no response to request %d within %v", id, repBound)
					}
					break
				}
				continue
			}
			if got != id {
				return nil, fmt.Errorf("response to request %d, want %d", got, id)
			}
			respDone = true
			r.resp = append(r.resp, time.Since(t0))
			var st ua.StatusCode
			switch req.(type) {
			case *ua.WriteRequest:
				if err := s.c.Decode(msg, &wresp); err != nil {
					st = statusOf(err)
				} else if len(wresp.Results) == 1 {
					st = wresp.Results[0]
				} else {
					st = status.BadUnexpectedError
				}
			case *ua.CallRequest:
				if err := s.c.Decode(msg, &cresp); err != nil {
					st = statusOf(err)
				} else if len(cresp.Results) == 1 {
					st = cresp.Results[0].StatusCode
				} else {
					st = status.BadUnexpectedError
				}
			}
			if st.IsBad() {
				r.bad++
				r.lastBad = st
			}
		}
		if gotNs == 0 {
			r.missed++
		} else {
			r.status = append(r.status, time.Duration(gotNs-t0.UnixNano()))
		}
		pause := time.Now().Add(time.Duration(rand.Int64N(int64(5 * time.Millisecond))))
		for time.Now().Before(pause) {
			if got, _, err := s.next(pause); err != nil {
				return nil, err
			} else if got != 0 {
				return nil, fmt.Errorf("response to request %d, which is not a Publish", got)
			}
		}
	}
	return r, nil
}

// eventItem is the event item on the Server object: SourceName, Time
// and ActiveState/Id of every event.
func eventItem(queue uint32) ua.MonitoredItemCreateRequest {
	var f ua.EventFilter
	for _, p := range [][]string{{"SourceName"}, {"Time"}, {"ActiveState", "Id"}} {
		o := ua.SimpleAttributeOperand{TypeDefinitionID: ua.NewNumericNodeID(0, 2915), AttributeID: uint32(ua.AttributeIDValue)} // AlarmConditionType
		if p[0] != "ActiveState" {
			o.TypeDefinitionID = ua.NewNumericNodeID(0, 2041) // BaseEventType
		}
		for _, n := range p {
			o.BrowsePath = append(o.BrowsePath, ua.QualifiedName{Name: n})
		}
		f.SelectClauses = append(f.SelectClauses, o)
	}
	return ua.MonitoredItemCreateRequest{
		ItemToMonitor:       ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, 2253), AttributeID: uint32(ua.AttributeIDEventNotifier)},
		MonitoringMode:      ua.MonitoringModeReporting,
		RequestedParameters: ua.MonitoringParameters{ClientHandle: handleEvents, QueueSize: queue, DiscardOldest: true, Filter: ua.ExtensionObject{Body: &f}},
	}
}

// eventRun runs reps repetitions of a Write of sim.Command that moves
// sim.Status off normal or back (1, 0, 1, ...), each waiting for the
// event of its alarm with that ActiveState; it measures the event's Time
// (the source time of the Status read that brought the change) → the
// receipt of the event, and the Write's send → that receipt.
func (s *subClient) eventRun(reps int) (change, write []time.Duration, missed int, err error) {
	var want bool
	var gotNs, evTime int64
	s.onEvent = func(f []ua.Variant, recvNs int64) {
		if len(f) != 3 || gotNs != 0 {
			return
		}
		src, _ := f[0].Value().(string)
		t, _ := f[1].Value().(time.Time)
		active, ok := f[2].Value().(bool)
		if src == "sim.Status" && ok && active == want {
			gotNs, evTime = recvNs, t.UnixNano()
		}
	}
	defer func() { s.onEvent = nil }()
	req := &ua.WriteRequest{NodesToWrite: []ua.WriteValue{{NodeID: ua.NewStringNodeID(s.ns, "sim.Command"), AttributeID: uint32(ua.AttributeIDValue)}}}
	var wresp ua.WriteResponse
	for i := range reps + 1 {
		want = i%2 == 0
		v := uint16(0)
		if want {
			v = 1
		}
		req.RequestHeader = s.c.Header()
		req.NodesToWrite[0].Value = ua.DataValue{Value: ua.MustVariant(v)}
		gotNs = 0
		t0 := time.Now()
		id, err := s.c.Send(req)
		if err != nil {
			return nil, nil, 0, err
		}
		bound := t0.Add(repBound)
		respDone := false
		for !respDone || gotNs == 0 {
			got, msg, err := s.next(bound)
			if err != nil {
				return nil, nil, 0, err
			}
			if got == 0 {
				if time.Now().After(bound) {
					break
				}
				continue
			}
			if got != id {
				return nil, nil, 0, fmt.Errorf("response to request %d, want %d", got, id)
			}
			respDone = true
			if err := s.c.Decode(msg, &wresp); err != nil {
				return nil, nil, 0, err
			}
		}
		switch {
		case i == 0:
			// The first sets the alarm's state whatever it was: not counted.
		case gotNs == 0:
			missed++
		default:
			change = append(change, time.Duration(gotNs-evTime))
			write = append(write, time.Duration(gotNs-t0.UnixNano()))
		}
	}
	return change, write, missed, nil
}

func statusOf(err error) ua.StatusCode {
	var sc ua.StatusCode
	if errors.As(err, &sc) {
		return sc
	}
	return status.BadDecodingError
}

// dist returns the counts of d by whole milliseconds, "ms:count ...":
// the shape that percentiles hide (e.g. two modes a cycle apart).
func dist(d []time.Duration) string {
	if len(d) == 0 {
		return "none"
	}
	slices.Sort(d)
	var b strings.Builder
	for i := 0; i < len(d); {
		ms := d[i] / time.Millisecond
		j := i
		for j < len(d) && d[j]/time.Millisecond == ms {
			j++
		}
		fmt.Fprintf(&b, " %d:%d", ms, j-i)
		i = j
	}
	return "ms:count" + b.String()
}

// pct returns the p-th percentile (nearest rank) of d, sorting it; 0 for
// none.
func pct(d []time.Duration, p int) time.Duration {
	return kit.Percentile(d, p).Round(10 * time.Microsecond)
}
