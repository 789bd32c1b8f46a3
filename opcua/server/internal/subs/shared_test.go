package subs

import (
	"fmt"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// The items on one node share each image's sample (sample.go): one
// comparison per last value and filter, one encoding per
// TimestampsToReturn. These tests hold that sharing to the behaviour of
// items that sample on their own: a model of one item (its last reported
// value, its filter, its queue with the overflow bit) predicts every
// notification of every item.

// svImage is an image of one variable: value, status and source timestamp.
type svImage struct {
	v  float64
	st ua.StatusCode
	ts time.Time
}

func (im *svImage) Value(_ uint32, dv *ua.DataValue) {
	dv.Value.SetFloat64(im.v)
	dv.Status = im.st
	dv.SourceTimestamp = im.ts
}

type svImages struct{ cur atomic.Pointer[svImage] }

func (s *svImages) Snapshot() addrspace.Snapshot { return s.cur.Load() }

// allChannel records every response the manager posts.
type allChannel struct {
	Channel
	mu  sync.Mutex
	out [][]byte
}

func (c *allChannel) PostResponse(_ uint32, msg []byte) error {
	c.mu.Lock()
	c.out = append(c.out, append([]byte(nil), msg...))
	c.mu.Unlock()
	return nil
}

func (c *allChannel) WriteResponse(id uint32, msg []byte) error { return c.PostResponse(id, msg) }

func (c *allChannel) ID() uint32 { return 1 }

func (c *allChannel) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.out
	c.out = nil
	return out
}

// modelItem is what one monitored item reports, sampling on its own.
type modelItem struct {
	trigger       ua.DataChangeTrigger
	deadband      ua.DeadbandType
	db            float64
	ts            ua.TimestampsToReturn
	qsize         int
	discardOldest bool
	last          *svImage
	queue         []svNote
}

// svNote is a notification as the client sees it.
type svNote struct {
	v         float64
	st        ua.StatusCode
	src       time.Time // zero when not returned
	hasServer bool
}

func (n svNote) String() string {
	return fmt.Sprintf("{%v %#x %v srv:%v}", n.v, uint32(n.st), n.src.UnixNano(), n.hasServer)
}

func (mi *modelItem) changed(im *svImage) bool {
	l := mi.last
	switch {
	case im.st != l.st:
		return true
	case mi.trigger == ua.DataChangeTriggerStatus:
		return false
	case mi.trigger == ua.DataChangeTriggerStatusValueTimestamp && !im.ts.Equal(l.ts):
		return true
	case mi.deadband != ua.DeadbandTypeNone:
		return math.Abs(im.v-l.v) > mi.db
	}
	return im.v != l.v
}

func (mi *modelItem) sample(im *svImage) {
	if mi.last != nil && !mi.changed(im) {
		return
	}
	mi.last = im
	n := svNote{v: im.v, st: im.st}
	if mi.ts == ua.TimestampsToReturnSource || mi.ts == ua.TimestampsToReturnBoth {
		n.src = im.ts
	}
	n.hasServer = mi.ts == ua.TimestampsToReturnServer || mi.ts == ua.TimestampsToReturnBoth
	switch {
	case len(mi.queue) < mi.qsize:
		mi.queue = append(mi.queue, n)
	case mi.qsize == 1:
		mi.queue[0] = n
	case mi.discardOldest:
		copy(mi.queue, mi.queue[1:])
		mi.queue[len(mi.queue)-1] = n
		mi.queue[0].st |= statusOverflow
	default:
		n.st |= statusOverflow
		mi.queue[len(mi.queue)-1] = n
	}
}

// checkSampleRefs checks the reference counts of the samples: each is
// the number of items holding it as their last value plus the queue
// entries holding it; the pool holds only unreferenced samples, once.
func checkSampleRefs(t *testing.T, m *Manager) {
	t.Helper()
	want := map[*sample]int32{}
	for _, sub := range m.subs {
		for _, it := range sub.items {
			if it.last != nil {
				want[it.last]++
			}
			for _, q := range it.queue {
				want[q.s]++
			}
		}
	}
	for s, n := range want {
		if s.refs != n {
			t.Errorf("sample %p (%v): %d references counted, %d held", s, s.dv.Value, s.refs, n)
		}
	}
	pooled := map[*sample]bool{}
	for _, s := range m.free {
		if pooled[s] || s.refs != 0 || want[s] != 0 {
			t.Errorf("pooled sample %p: twice %v, %d references counted, %d held", s, pooled[s], s.refs, want[s])
		}
		pooled[s] = true
	}
}

// TestSharedSamplesMatchModel: items with every combination of filter,
// TimestampsToReturn, queue size and discard policy, in three
// subscriptions, all on one node; random images (values within and beyond
// the deadband, statuses, source timestamps that change or not) and
// Publish requests that come or not, so that queues overflow. Every
// notification of every item is the model's, in order; the reference
// counts of the samples hold throughout, and after items are disabled and
// deleted.
func TestSharedSamplesMatchModel(t *testing.T) {
	f := newSubFixture(t, Config{})
	imgs := &svImages{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	imgs.cur.Store(&svImage{v: 0, ts: t0})
	as := f.s.AddressSpace()
	src := as.AddSource(imgs)
	if err := as.AddNode(&addrspace.Node{
		ID: ua.NewStringNodeID(1, "sv"), Class: ua.NodeClassVariable,
		BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "sv"},
		DataType:   ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead), Source: src, Handle: 1,
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}

	filters := []*ua.DataChangeFilter{
		nil,
		{Trigger: ua.DataChangeTriggerStatus},
		{Trigger: ua.DataChangeTriggerStatusValue},
		{Trigger: ua.DataChangeTriggerStatusValueTimestamp},
		{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypeAbsolute), DeadbandValue: 1},
		{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypeAbsolute), DeadbandValue: 1},
	}
	models := map[uint32]*modelItem{} // by client handle
	subOf := map[uint32]uint32{}      // subscription of each client handle
	itemIDs := map[uint32]uint32{}    // server handle of each client handle
	var subs []uint32
	handle := uint32(100)
	for s := range 3 {
		sub := f.createSub(5, 10000, 30000)
		subs = append(subs, sub)
		for ts := ua.TimestampsToReturnSource; ts <= ua.TimestampsToReturnNeither; ts++ {
			var reqs []ua.MonitoredItemCreateRequest
			for fi, flt := range filters {
				for _, q := range []uint32{1, 2, 3} {
					handle++
					r := item("sv", ua.AttributeIDValue, 0, q, nil)
					r.RequestedParameters.ClientHandle = handle
					r.RequestedParameters.DiscardOldest = (fi+int(q)+s)%2 == 0
					mi := &modelItem{trigger: ua.DataChangeTriggerStatusValue, ts: ts, qsize: int(q),
						discardOldest: r.RequestedParameters.DiscardOldest}
					if flt != nil {
						r.RequestedParameters.Filter = ua.ExtensionObject{Body: flt}
						mi.trigger, mi.deadband, mi.db = flt.Trigger, ua.DeadbandType(flt.DeadbandType), flt.DeadbandValue
					}
					reqs = append(reqs, r)
					models[handle], subOf[handle] = mi, sub
				}
			}
			res := subtest.WantOK[ua.CreateMonitoredItemsResponse](t, f.tc.call(&ua.CreateMonitoredItemsRequest{
				SubscriptionID: sub, TimestampsToReturn: ts, ItemsToCreate: reqs,
			}))
			for i, r := range res.Results {
				if r.StatusCode != status.Good {
					t.Fatal(r.StatusCode)
				}
				itemIDs[reqs[i].RequestedParameters.ClientHandle] = r.MonitoredItemID
			}
		}
	}
	for _, mi := range models {
		mi.sample(imgs.cur.Load()) // the initial value
	}

	m := f.s.subs
	ch := &allChannel{}
	rng := rand.New(rand.NewPCG(1, 2))
	var published, notes int
	// check runs on the run loop: it reports with Errorf and stops the
	// test at the first failure, never with Fatal (the run loop's
	// goroutine would exit, and m.call never return).
	check := func(msgs [][]byte) {
		for _, msg := range msgs {
			body, err := ua.DecodeMessage(ua.NewDecoder(msg))
			r, ok := body.(*ua.PublishResponse)
			if err != nil || !ok {
				t.Errorf("response %T, %v", body, err)
				return
			}
			got := map[uint32][]svNote{}
			for _, eo := range r.NotificationMessage.NotificationData {
				dcn, ok := eo.Body.(*ua.DataChangeNotification)
				if !ok {
					t.Errorf("notification %T", eo.Body)
					return
				}
				for _, n := range dcn.MonitoredItems {
					x, _ := n.Value.Value.Float64()
					got[n.ClientHandle] = append(got[n.ClientHandle], svNote{x, n.Value.Status, n.Value.SourceTimestamp, !n.Value.ServerTimestamp.IsZero()})
				}
			}
			if len(got) == 0 {
				continue // a keep-alive
			}
			published++
			for h, mi := range models {
				if subOf[h] != r.SubscriptionID {
					if len(got[h]) > 0 {
						t.Errorf("item %d of subscription %d in a message of %d", h, subOf[h], r.SubscriptionID)
						return
					}
					continue
				}
				if fmt.Sprint(got[h]) != fmt.Sprint(mi.queue) {
					t.Errorf("message %d, item %d (%+v): got %v, want %v", r.NotificationMessage.SequenceNumber, h, *mi, got[h], mi.queue)
					return
				}
				notes += len(got[h])
				mi.queue = mi.queue[:0]
			}
		}
	}
	m.call(func() {
		ss := m.subs[subs[0]].ss
		now := time.Now()
		values := []float64{0, 0.5, 1, 1.6, 3, -1}
		img := *imgs.cur.Load()
		for range 2000 {
			next := img
			next.v = values[rng.IntN(len(values))]
			if rng.IntN(4) == 0 {
				next.st = ua.StatusCode(0x40000000) * ua.StatusCode(rng.IntN(2)) // Uncertain or Good
			}
			if rng.IntN(3) == 0 {
				next.ts = next.ts.Add(time.Millisecond)
			}
			img = next
			imgs.cur.Store(&next)
			for _, mi := range models {
				mi.sample(&next)
			}
			f.s.SourceChanged(src, []uint32{1})
			for range rng.IntN(3) {
				ss.queue = append(ss.queue, pubReq{ch: ch})
			}
			now = now.Add(5 * time.Millisecond)
			m.sourceChanges(now)
			check(ch.take())
			if t.Failed() {
				return
			}
		}
		ss.queue = ss.queue[:0]
		checkSampleRefs(t, m)
	})
	if published < 100 || notes < 1000 {
		t.Errorf("%d messages with %d notifications: too few to tell", published, notes)
	}
	t.Logf("%d messages with %d notifications", published, notes)

	// Disable some items, delete others, then the subscriptions.
	var disable, del []uint32
	for h, id := range itemIDs {
		if subOf[h] != subs[0] {
			continue
		}
		if h%2 == 0 {
			disable = append(disable, id)
		} else {
			del = append(del, id)
		}
	}
	subtest.WantOK[ua.SetMonitoringModeResponse](t, f.tc.call(&ua.SetMonitoringModeRequest{
		SubscriptionID: subs[0], MonitoringMode: ua.MonitoringModeDisabled, MonitoredItemIDs: disable}))
	subtest.WantOK[ua.DeleteMonitoredItemsResponse](t, f.tc.call(&ua.DeleteMonitoredItemsRequest{
		SubscriptionID: subs[0], MonitoredItemIDs: del}))
	m.call(func() { checkSampleRefs(t, m) })
	subtest.WantOK[ua.DeleteSubscriptionsResponse](t, f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: subs}))
	m.call(func() {
		checkSampleRefs(t, m)
		for _, s := range m.free {
			if !s.dv.Value.IsNull() {
				t.Errorf("a pooled sample keeps the value %v", s.dv.Value)
				return
			}
		}
	})
}

// TestSamplePool: a released sample goes back to the pool emptied; it
// keeps the encoding buffer of a scalar for reuse, not that of a large
// array; a sample still referenced is not pooled.
func TestSamplePool(t *testing.T) {
	var m Manager
	small := m.newSample()
	small.dv.Value.SetFloat64(2.5)
	if b := small.encoded(ua.TimestampsToReturnNeither); len(b) != 1+1+8 {
		t.Fatalf("encoding of a Double without timestamps: % x", b)
	}
	small.hold()
	m.release(small)
	if len(m.free) != 0 {
		t.Fatal("a sample with a reference left was pooled")
	}
	m.release(small)
	if len(m.free) != 1 || m.free[0] != small || cap(small.enc) == 0 || len(small.enc) != 0 || small.made != 0 || !small.dv.Value.IsNull() {
		t.Fatalf("pooled small sample: %d pooled, enc %d/%d, made %b, value %v", len(m.free), len(small.enc), cap(small.enc), small.made, small.dv.Value)
	}
	if s := m.newSample(); s != small || s.refs != 1 {
		t.Fatalf("newSample did not reuse the pooled sample (refs %d)", s.refs)
	}
	big := m.newSample()
	big.dv.Value = ua.MustVariant(make([]float64, 1000))
	big.encoded(ua.TimestampsToReturnBoth)
	m.release(big)
	if len(m.free) != 1 || m.free[0] != big || big.enc != nil {
		t.Errorf("pooled big sample keeps %d bytes of encoding", cap(big.enc))
	}
}
