package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// Phases of the load, set by its main goroutine from its input: warm up
// (nothing counted), measure (count), stopped (count no more, go on
// publishing), quit (send no more Publish requests, drain, close).
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStopped
	phaseQuit
)

// itemsPerCall is the number of items of one CreateMonitoredItems request.
const itemsPerCall = 250

// loadFlags are the load role's flags.
type loadFlags struct {
	url               string
	ns                int
	sessions, items   int
	publish, sampling time.Duration
	queue, inflight   int
}

// loadMain is the load role: it sets up the sessions, prints "ready", and
// has them publish until its input ends; "mark" on its input starts the
// count, "stop" ends it. At the end it prints the result line (see
// result.format).
func loadMain(args []string, in io.Reader, out io.Writer) error {
	var f loadFlags
	fs := flag.NewFlagSet("fanbench load", flag.ContinueOnError)
	fs.StringVar(&f.url, "url", "", "endpoint URL")
	fs.IntVar(&f.ns, "ns", 2, "namespace index of the tags")
	fs.IntVar(&f.sessions, "sessions", 20, "sessions")
	fs.IntVar(&f.items, "items", benchTags, "monitored items per subscription")
	fs.DurationVar(&f.publish, "publish", 5*time.Millisecond, "publishing interval")
	fs.DurationVar(&f.sampling, "sampling", 5*time.Millisecond, "sampling interval")
	fs.IntVar(&f.queue, "queue", 10, "queue size")
	fs.IntVar(&f.inflight, "inflight", 5, "Publish requests in flight per session")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.items < 1 || f.items > benchTags || f.sessions < 1 || f.inflight < 1 {
		return fmt.Errorf("load: -sessions %d -items %d -inflight %d out of range", f.sessions, f.items, f.inflight)
	}
	addr, ok := strings.CutPrefix(f.url, "opc.tcp://")
	if !ok {
		return fmt.Errorf("load: -url %q: want opc.tcp://host:port", f.url)
	}
	var ss []*session
	defer func() {
		for _, s := range ss {
			if s.c != nil {
				s.c.Conn().Close()
			}
		}
	}()
	for i := range f.sessions {
		s, err := newSession(addr, fmt.Sprintf("fanbench-%d", i), &f)
		if err != nil {
			return fmt.Errorf("load: session %d: %w", i, err)
		}
		ss = append(ss, s)
	}

	var phase atomic.Int32
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() { s.err = s.run(&phase, f.inflight) })
	}
	fmt.Fprintln(out, "ready")

	sc := bufio.NewScanner(in)
	cpu0, cpu1 := kit.CPUTime(), kit.CPUTime()
	t0, t1 := time.Now(), time.Now()
	for sc.Scan() {
		switch sc.Text() {
		case "mark":
			cpu0, t0 = kit.CPUTime(), time.Now()
			phase.Store(phaseMeasure)
		case "stop":
			phase.Store(phaseStopped)
			cpu1, t1 = kit.CPUTime(), time.Now()
		}
	}
	if phase.Load() == phaseMeasure {
		cpu1, t1 = kit.CPUTime(), time.Now()
	}
	phase.Store(phaseQuit)
	wg.Wait()

	var r result
	var gaps []int64
	for _, s := range ss {
		r.add(&s.cnt)
		gaps = append(gaps, s.gaps...)
		if s.lastErr != "" {
			r.lastErr = s.lastErr
		}
		if s.err != nil {
			r.errors++
			r.lastErr = s.err.Error()
		}
	}
	if w := t1.Sub(t0).Seconds(); w > 0 {
		r.cpuPct = 100 * (cpu1 - cpu0).Seconds() / w
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		const tick = 10 // PublishTime is in 100 ns ticks
		r.gapMin, r.gapP50, r.gapMax = uint64(gaps[0]/tick), uint64(gaps[len(gaps)/2]/tick), uint64(gaps[len(gaps)-1]/tick)
	}
	fmt.Fprintln(out, r.format())
	return nil
}

// counts are what a session counts while measuring.
type counts struct {
	notifications, messages, keepAlives      uint64
	lost, overflows, gaps, badStatus, errors uint64
}

func (r *result) add(c *counts) {
	r.notifications += c.notifications
	r.messages += c.messages
	r.keepAlives += c.keepAlives
	r.lost += c.lost
	r.overflows += c.overflows
	r.gaps += c.gaps
	r.badStatus += c.badStatus
	r.errors += c.errors
}

// item is the state of one monitored item, by client handle.
type item struct {
	last uint64 // the change number of the last value
	seen bool
}

// session is one session of the load with its subscription; owned by its
// goroutine once run starts.
type session struct {
	c     *uaclient.Client
	subID uint32
	items []item

	nextSeq uint32 // the sequence number of the next NotificationMessage; 0: not known yet
	acks    []ua.SubscriptionAcknowledgement
	req     ua.PublishRequest
	wbuf    []byte

	dec, body ua.Decoder
	tid       ua.NodeID
	rh        ua.ResponseHeader

	cnt     counts // while measuring
	scratch counts // otherwise
	// lastData is the PublishTime of the last message with data that
	// began a publishing cycle (0: none yet); gaps the spacings of such
	// messages while measuring. A message after one with
	// MoreNotifications continues its cycle and is not counted.
	lastData int64
	lastMore bool
	gaps     []int64
	lastErr  string
	err      error
}

// newSession connects, creates the subscription and its items.
func newSession(addr, name string, f *loadFlags) (*session, error) {
	c, err := uaclient.DialSession(addr, name, 10*time.Second)
	if err != nil {
		return nil, err
	}
	s := &session{c: c, items: make([]item, f.items), gaps: make([]int64, 0, 1<<14)}
	c.Conn().SetDeadline(time.Now().Add(30 * time.Second))
	defer c.Conn().SetDeadline(time.Time{})
	var cs ua.CreateSubscriptionResponse
	err = c.Call(&ua.CreateSubscriptionRequest{
		RequestHeader:               c.Header(),
		RequestedPublishingInterval: durMS(f.publish),
		RequestedLifetimeCount:      30000, // long: the setup of all sessions takes a while
		RequestedMaxKeepAliveCount:  10,
		PublishingEnabled:           true,
	}, &cs)
	if err != nil {
		c.Conn().Close()
		return nil, fmt.Errorf("CreateSubscription: %w", err)
	}
	s.subID = cs.SubscriptionID
	for first := 0; first < f.items; first += itemsPerCall {
		req := ua.CreateMonitoredItemsRequest{RequestHeader: c.Header(), SubscriptionID: s.subID,
			TimestampsToReturn: ua.TimestampsToReturnSource}
		for g := first; g < min(first+itemsPerCall, f.items); g++ {
			req.ItemsToCreate = append(req.ItemsToCreate, ua.MonitoredItemCreateRequest{
				ItemToMonitor:  ua.ReadValueID{NodeID: ua.NewStringNodeID(uint16(f.ns), nodeName(g)), AttributeID: uint32(ua.AttributeIDValue)},
				MonitoringMode: ua.MonitoringModeReporting,
				RequestedParameters: ua.MonitoringParameters{ClientHandle: uint32(g), SamplingInterval: durMS(f.sampling),
					QueueSize: uint32(f.queue), DiscardOldest: true},
			})
		}
		var resp ua.CreateMonitoredItemsResponse
		if err := c.Call(&req, &resp); err != nil {
			c.Conn().Close()
			return nil, fmt.Errorf("CreateMonitoredItems: %w", err)
		}
		if len(resp.Results) != len(req.ItemsToCreate) {
			c.Conn().Close()
			return nil, fmt.Errorf("CreateMonitoredItems: %d results for %d items", len(resp.Results), len(req.ItemsToCreate))
		}
		for i, r := range resp.Results {
			if r.StatusCode.IsBad() {
				c.Conn().Close()
				return nil, fmt.Errorf("CreateMonitoredItems %s: %w", nodeName(first+i), r.StatusCode)
			}
		}
	}
	return s, nil
}

func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// run keeps inflight Publish requests in flight, each acknowledging what
// the responses before it brought, and checks and counts the responses,
// until phase is quit; then it drains the requests in flight and closes
// the session.
func (s *session) run(phase *atomic.Int32, inflight int) error {
	out := 0
	for range inflight {
		if err := s.sendPublish(); err != nil {
			return err
		}
		out++
	}
	quitting := false
	for out > 0 {
		_, msg, err := s.c.ReadMessage()
		if err != nil {
			return err
		}
		out--
		ph := phase.Load()
		cnt := &s.scratch
		if ph == phaseMeasure {
			cnt = &s.cnt
		}
		s.response(msg, cnt)
		if ph == phaseQuit {
			if !quitting {
				quitting = true
				s.c.Conn().SetReadDeadline(time.Now().Add(10 * time.Second))
			}
			continue
		}
		if err := s.sendPublish(); err != nil {
			return err
		}
		out++
	}
	// The last messages stay unacknowledged: the session ends with them.
	s.c.Conn().SetReadDeadline(time.Time{})
	return s.c.Close(5 * time.Second)
}

// sendPublish sends a Publish request with the pending acknowledgements.
func (s *session) sendPublish() error {
	s.req.RequestHeader = s.c.Header()
	s.req.SubscriptionAcknowledgements = s.acks
	s.wbuf = s.c.AppendRequest(s.wbuf[:0], s.c.NextRequestID(), &s.req)
	s.acks = s.acks[:0]
	_, err := s.c.Conn().Write(s.wbuf)
	return err
}

// Encodings of the type ids the load tells apart (namespace 0, numeric).
const (
	publishResponseID  = id.PublishResponse_Encoding_DefaultBinary
	serviceFaultID     = id.ServiceFault_Encoding_DefaultBinary
	dataChangeID       = id.DataChangeNotification_Encoding_DefaultBinary
	statusChangeID     = id.StatusChangeNotification_Encoding_DefaultBinary
	statusInfoOverflow = 0x0480 // InfoType DataValue + Overflow (see opcua/server statusOverflow)
)

// fail counts an error and keeps its text.
func (s *session) fail(cnt *counts, format string, args ...any) {
	cnt.errors++
	s.lastErr = fmt.Sprintf(format, args...)
}

// isNS0 reports whether the decoded type id is the namespace-0 number n.
func (s *session) isNS0(n uint32) bool {
	return s.tid.Namespace == 0 && s.tid.Type == ua.IDNumeric && s.tid.Numeric == n
}

// response checks and counts one response message: a PublishResponse is
// decoded field by field, skipping what is not counted, into reused state.
func (s *session) response(msg []byte, cnt *counts) {
	d := &s.dec
	d.Reset(msg)
	s.tid.Decode(d)
	switch {
	case s.isNS0(serviceFaultID):
		s.rh.Decode(d)
		s.fail(cnt, "Publish: ServiceFault %v", s.rh.ServiceResult)
		return
	case !s.isNS0(publishResponseID):
		s.fail(cnt, "Publish: a response of type %v", s.tid)
		return
	}
	s.rh.Decode(d)
	if s.rh.ServiceResult.IsBad() {
		s.fail(cnt, "Publish: %v", s.rh.ServiceResult)
		return
	}
	subID := d.ReadUint32()
	d.ReadBytes(4 * d.ReadArrayLen(4)) // AvailableSequenceNumbers
	more := d.ReadBool()
	seq := d.ReadUint32()
	published := d.ReadInt64()
	data := false
	for range d.ReadArrayLen(1) {
		s.tid.Decode(d)
		var body []byte
		if enc := d.ReadUint8(); enc == 1 {
			n := d.ReadInt32()
			if n < 0 {
				s.fail(cnt, "Publish: NotificationData of %d bytes", n)
				return
			}
			body = d.ReadBytes(int(n))
		} else if enc != 0 {
			s.fail(cnt, "Publish: NotificationData encoded as %d", enc)
			return
		}
		switch {
		case s.isNS0(dataChangeID):
			data = true
			s.dataChange(body, cnt)
		case s.isNS0(statusChangeID):
			var st uint32
			if len(body) >= 4 {
				st = uint32(body[0]) | uint32(body[1])<<8 | uint32(body[2])<<16 | uint32(body[3])<<24
			}
			s.fail(cnt, "Publish: StatusChangeNotification %v", ua.StatusCode(st))
		default:
			s.fail(cnt, "Publish: NotificationData of type %v", s.tid)
		}
	}
	for range d.ReadArrayLen(4) { // Results of the acknowledgements
		if st := ua.StatusCode(d.ReadUint32()); st.IsBad() {
			s.fail(cnt, "Publish: acknowledgement %v", st)
		}
	}
	if d.ReadArrayLen(1) > 0 {
		s.fail(cnt, "Publish: DiagnosticInfos")
		return
	}
	if err := d.Err(); err != nil {
		s.fail(cnt, "Publish: decoding: %v", err)
		return
	}
	if subID != s.subID {
		s.fail(cnt, "Publish: subscription %d, want %d", subID, s.subID)
		return
	}
	s.sequence(seq, data, cnt)
	if data {
		if !s.lastMore {
			if s.lastData != 0 && cnt == &s.cnt && len(s.gaps) < cap(s.gaps) {
				s.gaps = append(s.gaps, published-s.lastData)
			}
			s.lastData = published
		}
		s.lastMore = more
		s.acks = append(s.acks, ua.SubscriptionAcknowledgement{SubscriptionID: subID, SequenceNumber: seq})
	}
}

// sequence checks a NotificationMessage's sequence number: a message with
// notifications uses the next number, a keep-alive carries it without
// using it (OPC 10000-4 §5.13.1.1).
func (s *session) sequence(seq uint32, data bool, cnt *counts) {
	if s.nextSeq != 0 && seq != s.nextSeq {
		cnt.gaps++
	}
	if !data {
		cnt.keepAlives++
		s.nextSeq = seq
		return
	}
	cnt.messages++
	s.nextSeq = seq + 1
	if seq == math.MaxUint32 {
		s.nextSeq = 1
	}
}

// Variant type ids of the bench tags and the modulus of their change
// numbers (see putChange).
const (
	variantUInt16 = 5
	variantInt32  = 6
	variantFloat  = 10
	variantDouble = 11
)

// dataChange counts the MonitoredItemNotifications of a
// DataChangeNotification body and finds the lost changes.
func (s *session) dataChange(body []byte, cnt *counts) {
	d := &s.body
	d.Reset(body)
	for range d.ReadArrayLen(5) {
		h := d.ReadUint32()
		mask := d.ReadUint8()
		var v, mod uint64
		if mask&0x01 != 0 {
			switch t := d.ReadUint8(); t {
			case variantUInt16:
				v, mod = uint64(d.ReadUint16()), 1<<16
			case variantInt32:
				v, mod = uint64(d.ReadUint32()), 1<<32
			case variantFloat:
				v, mod = uint64(d.ReadFloat32()), 1<<24
			case variantDouble:
				v, mod = uint64(d.ReadFloat64()), 1<<53
			default:
				s.fail(cnt, "Publish: a value of variant type %d", t)
				return
			}
		}
		var st uint32
		if mask&0x02 != 0 {
			st = d.ReadUint32()
		}
		skip := 0
		if mask&0x04 != 0 {
			skip += 8
		}
		if mask&0x10 != 0 {
			skip += 2
		}
		if mask&0x08 != 0 {
			skip += 8
		}
		if mask&0x20 != 0 {
			skip += 2
		}
		d.ReadBytes(skip)
		if d.Err() != nil {
			s.fail(cnt, "Publish: decoding a notification: %v", d.Err())
			return
		}
		cnt.notifications++
		if st&statusInfoOverflow == statusInfoOverflow {
			cnt.overflows++
		}
		if st&0xC0000000 != 0 {
			cnt.badStatus++
		}
		if int(h) >= len(s.items) {
			s.fail(cnt, "Publish: client handle %d", h)
			continue
		}
		if mod == 0 {
			continue
		}
		it := &s.items[h]
		if it.seen {
			switch step := (v + mod - it.last%mod) % mod; {
			case step == 0: // the same value again (a status change)
			case step > mod/2:
				s.fail(cnt, "item %d: value %d after %d", h, v, it.last)
			default:
				cnt.lost += step - 1
			}
		}
		it.last, it.seen = v, true
	}
}
