package subs

import (
	"github.com/edged/edged/opcua/server/internal/subtest"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// testImages is a ValueSource of immutable images, as the binding's: each
// Snapshot is the image current at the call.
type testImages struct{ cur atomic.Pointer[testImage] }

type testImage struct{ v float64 }

func (s *testImages) Snapshot() addrspace.Snapshot { return s.cur.Load() }

func (im *testImage) Value(_ uint32, dv *ua.DataValue) { dv.Value.SetFloat64(im.v) }

// addImageNode adds ns=1;s=img, a Double served by handle 1 of a
// testImages source, to f's space.
func addImageNode(t *testing.T, f *subFixture) (addrspace.SourceID, *testImages) {
	imgs := &testImages{}
	imgs.cur.Store(&testImage{})
	as := f.s.AddressSpace()
	src := as.AddSource(imgs)
	if err := as.AddNode(&addrspace.Node{
		ID: ua.NewStringNodeID(1, "img"), Class: ua.NodeClassVariable,
		BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "img"},
		DataType:   ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead), Source: src, Handle: 1,
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		t.Fatal(err)
	}
	return src, imgs
}

// byHandle returns the Double values of r's data changes per client handle.
func byHandle(r *ua.PublishResponse, into map[uint32][]float64) {
	for _, eo := range r.NotificationMessage.NotificationData {
		if dcn, ok := eo.Body.(*ua.DataChangeNotification); ok {
			for _, n := range dcn.MonitoredItems {
				x, _ := n.Value.Value.Float64()
				into[n.ClientHandle] = append(into[n.ClientHandle], x)
			}
		}
	}
}

// TestSourceChangedSamplesItsImage: images published one after the other
// before the manager samples are each sampled, in the image that carried
// the change, so that no change is lost; the items on one node (sharing one
// Read) each get every value.
func TestSourceChangedSamplesItsImage(t *testing.T) {
	f := newSubFixture(t, Config{})
	src, imgs := addImageNode(t, f)
	sub := f.createSub(5, 10, 300)
	a, b := item("img", ua.AttributeIDValue, 0, 10, nil), item("img", ua.AttributeIDValue, 0, 10, nil)
	a.RequestedParameters.ClientHandle, b.RequestedParameters.ClientHandle = 1, 2
	for _, r := range f.createItems(sub, a, b) {
		if r.StatusCode != status.Good {
			t.Fatal(r.StatusCode)
		}
	}
	got := map[uint32][]float64{}
	byHandle(f.tc.publishData(), got) // the initial values
	// Three images while the run loop is busy (it runs this closure).
	m := f.s.subs
	m.call(func() {
		for k := 1; k <= 3; k++ {
			imgs.cur.Store(&testImage{v: float64(k)})
			f.s.SourceChanged(src, []uint32{1})
		}
	})
	want := map[uint32][]float64{1: {0, 1, 2, 3}, 2: {0, 1, 2, 3}}
	for range 100 {
		if len(got[1]) >= 4 && len(got[2]) >= 4 {
			break
		}
		byHandle(f.tc.publish(), got)
	}
	for h, w := range want {
		if !slices.Equal(got[h], w) {
			t.Errorf("item %d: values %v, want %v", h, got[h], w)
		}
	}
}

// TestRepublishAfterReuse: messages acknowledged are reused for later
// ones, and a message never acknowledged still republishes its own values.
func TestRepublishAfterReuse(t *testing.T) {
	f := newSubFixture(t, Config{})
	tc := f.tc
	sub := f.createSub(5, 10, 300)
	f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	first := tc.publishData() // the initial value, never acknowledged
	ack := ua.SubscriptionAcknowledgement{SubscriptionID: sub}
	for k := 1; k <= 8; k++ {
		f.set(float64(k))
		var r *ua.PublishResponse
		if ack.SequenceNumber != 0 {
			r = tc.publish(ack)
		} else {
			r = tc.publish()
		}
		for len(r.NotificationMessage.NotificationData) == 0 {
			r = tc.publish()
		}
		if v, _ := values(r); !slices.Equal(v, []float64{float64(k)}) {
			t.Fatalf("change %d: values %v", k, v)
		}
		ack.SequenceNumber = r.NotificationMessage.SequenceNumber
	}
	seq := first.NotificationMessage.SequenceNumber
	rp := subtest.WantOK[ua.RepublishResponse](t, tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: seq}))
	if v, _ := values(&ua.PublishResponse{NotificationMessage: rp.NotificationMessage}); rp.NotificationMessage.SequenceNumber != seq || !slices.Equal(v, []float64{0}) {
		t.Errorf("Republish %d: seq %d values %v, want [0]", seq, rp.NotificationMessage.SequenceNumber, v)
	}
}

// TestCloneMessage: Republish's copy shares no bytes with the message the
// manager reuses.
func TestCloneMessage(t *testing.T) {
	var sub subscription
	msg := sub.newMessage()
	e := msg.NotificationData[0].Body.(*encodedDCN)
	e.start()
	e.add([]queued{{s: &sample{dv: ua.DataValue{Value: ua.MustVariant(2.5)}}, handle: 5}})
	e.finish()
	c := cloneMessage(msg)
	e.start()
	e.add([]queued{{s: &sample{dv: ua.DataValue{Value: ua.MustVariant(9.0)}}, handle: 6}})
	e.finish()
	out := ua.AppendMessage(nil, &ua.PublishResponse{NotificationMessage: c})
	body, err := ua.DecodeMessage(ua.NewDecoder(out))
	if err != nil {
		t.Fatal(err)
	}
	dcn := body.(*ua.PublishResponse).NotificationMessage.NotificationData[0].Body.(*ua.DataChangeNotification)
	if len(dcn.MonitoredItems) != 1 || dcn.MonitoredItems[0].ClientHandle != 5 || dcn.DiagnosticInfos != nil {
		t.Fatalf("copy decodes as %+v", dcn)
	}
	if x, _ := dcn.MonitoredItems[0].Value.Value.Float64(); x != 2.5 {
		t.Errorf("copy's value %v, want 2.5", x)
	}
}

// recChannel records the responses the manager writes.
type recChannel struct {
	Channel
	mu   sync.Mutex
	n    int
	last []byte
}

func (c *recChannel) WriteResponse(_ uint32, msg []byte) error {
	c.mu.Lock()
	c.n++
	c.last = append(c.last[:0], msg...)
	c.mu.Unlock()
	return nil
}

// PostResponse records like WriteResponse: the manager posts its responses.
func (c *recChannel) PostResponse(id uint32, msg []byte) error { return c.WriteResponse(id, msg) }

// ID is the channel of the fixture's session: a Publish request of another
// channel is stale and never answered with notifications.
func (c *recChannel) ID() uint32 { return 1 }

// TestSamplePublishAllocs asserts that the steady state of the data path,
// from SourceChanged through sampling to the Publish response written,
// allocates nothing: three items on one changing variable (one shared
// Read) and one on a static variable, a Publish request waiting in every
// cycle, the retransmission queue full.
func TestSamplePublishAllocs(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(5, 10, 300)
	for _, r := range f.createItems(sub,
		item("ext", ua.AttributeIDValue, 0, 10, nil), item("ext", ua.AttributeIDValue, 0, 10, nil),
		item("ext", ua.AttributeIDValue, 0, 10, nil), item("static", ua.AttributeIDValue, 0, 10, nil)) {
		if r.StatusCode != status.Good {
			t.Fatal(r.StatusCode)
		}
	}
	m := f.s.subs
	ch := &recChannel{}
	handles := []uint32{1}
	var allocs float64
	var steps int
	m.call(func() {
		ss := m.subs[sub].ss
		queue := make([]pubReq, 0, 1)
		now := time.Now()
		step := func() {
			steps++
			f.vars.Set(float64(steps))
			f.s.SourceChanged(f.src, handles)
			ss.queue = append(queue[:0], pubReq{ch: ch, reqID: uint32(steps)})
			now = now.Add(5 * time.Millisecond)
			m.sourceChanges(now)
		}
		for range 3 * f.s.cfg.Subscriptions.MaxRetransmissionQueue {
			step()
		}
		allocs = testing.AllocsPerRun(200, step)
	})
	if allocs != 0 {
		t.Errorf("sample → publish allocates %v times per cycle, want 0", allocs)
	}
	if ch.n != steps {
		t.Fatalf("%d responses for %d cycles", ch.n, steps)
	}
	body, err := ua.DecodeMessage(ua.NewDecoder(ch.last))
	if err != nil {
		t.Fatal(err)
	}
	r := subtest.WantOK[ua.PublishResponse](t, body)
	if v, _ := values(r); !slices.Equal(v, []float64{float64(steps), float64(steps), float64(steps)}) {
		t.Errorf("last response: values %v, want three %d", v, steps)
	}
	if n := len(r.AvailableSequenceNumbers); n != f.s.cfg.Subscriptions.MaxRetransmissionQueue {
		t.Errorf("%d available sequence numbers, want %d", n, f.s.cfg.Subscriptions.MaxRetransmissionQueue)
	}
}

// BenchmarkSamplePublish measures the manager's work per cycle at the
// fan-out bench's shape without the network: 20 subscriptions × 1,000
// items on 1,000 variables of one image source that all change in every
// cycle, a Publish request waiting for each subscription. ns/notif is the
// cost per notification delivered.
func BenchmarkSamplePublish(b *testing.B) {
	const tags, subs = 1000, 20
	s := newTestServer(b, Config{Subscriptions: Limits{MaxSubscriptionsPerSession: subs}})
	as := s.AddressSpace()
	imgs := &testImages{}
	imgs.cur.Store(&testImage{})
	src := as.AddSource(imgs)
	reqs := make([]ua.MonitoredItemCreateRequest, tags)
	handles := make([]uint32, tags)
	for i := range tags {
		nid := ua.NewNumericNodeID(1, uint32(1000+i))
		if err := as.AddNode(&addrspace.Node{
			ID: nid, Class: ua.NodeClassVariable, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "t"},
			DataType: ua.NewNumericNodeID(0, id.Double), ValueRank: addrspace.ValueRankScalar,
			AccessLevel: uint8(ua.AccessLevelTypeCurrentRead), Source: src, Handle: uint32(i),
		}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
			Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
			b.Fatal(err)
		}
		handles[i] = uint32(i)
		reqs[i] = ua.MonitoredItemCreateRequest{
			ItemToMonitor:  ua.ReadValueID{NodeID: nid, AttributeID: uint32(ua.AttributeIDValue)},
			MonitoringMode: ua.MonitoringModeReporting,
			RequestedParameters: ua.MonitoringParameters{
				ClientHandle: uint32(i), SamplingInterval: 5, QueueSize: 10, DiscardOldest: true,
			},
		}
	}
	tc := newTestConn(b, s, 1)
	tc.openSession()
	var ids []uint32
	for range subs {
		r := subtest.WantOK[ua.CreateSubscriptionResponse](b, tc.call(&ua.CreateSubscriptionRequest{
			RequestedPublishingInterval: 5, RequestedMaxKeepAliveCount: 10, RequestedLifetimeCount: 300, PublishingEnabled: true,
		}))
		ids = append(ids, r.SubscriptionID)
		cr := subtest.WantOK[ua.CreateMonitoredItemsResponse](b, tc.call(&ua.CreateMonitoredItemsRequest{
			SubscriptionID: r.SubscriptionID, TimestampsToReturn: ua.TimestampsToReturnBoth, ItemsToCreate: reqs,
		}))
		if cr.Results[0].StatusCode != status.Good {
			b.Fatal(cr.Results[0].StatusCode)
		}
	}
	m := s.subs
	ch := &recChannel{}
	m.call(func() {
		ss := m.subs[ids[0]].ss
		queue := make([]pubReq, 0, subs)
		now := time.Now()
		k := 0
		step := func() {
			k++
			imgs.cur.Store(&testImage{v: float64(k)})
			s.SourceChanged(src, handles)
			queue = queue[:0]
			for range subs {
				queue = append(queue, pubReq{ch: ch})
			}
			ss.queue = queue
			now = now.Add(5 * time.Millisecond)
			m.sourceChanges(now)
		}
		for range 20 {
			step()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			step()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*subs*tags), "ns/notif")
	})
}

// TestLifetimesExpireTogether: subscriptions of one session whose
// lifetimes end in the same cycle are all deleted (tick deletes from the
// list it walks), and each reports Bad_Timeout.
func TestLifetimesExpireTogether(t *testing.T) {
	f := newSubFixture(t, Config{})
	var ids []uint32
	for range 3 {
		ids = append(ids, f.createSub(5, 1, 3))
	}
	m := f.s.subs
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var n int
		m.call(func() { n = len(m.subs) })
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions alive after 10 s without Publish", n)
		}
	}
	var got []uint32
	for range ids {
		r := f.tc.publish()
		if sc, ok := r.NotificationMessage.NotificationData[0].Body.(*ua.StatusChangeNotification); !ok || sc.Status != status.BadTimeout {
			t.Errorf("after expiry: %+v", r)
		}
		got = append(got, r.SubscriptionID)
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Errorf("status changes for %v, want %v", got, ids)
	}
}

// TestPendingImagesBounded: while the run loop is busy, SourceChanged
// keeps at most maxPendingImages images; the changes of the calls beyond
// are sampled in the image current when the run loop gets to them.
func TestPendingImagesBounded(t *testing.T) {
	f := newSubFixture(t, Config{})
	src, imgs := addImageNode(t, f)
	sub := f.createSub(5, 10, 300)
	f.createItems(sub, item("img", ua.AttributeIDValue, 0, 100, nil))
	got := map[uint32][]float64{}
	byHandle(f.tc.publishData(), got) // the initial value
	const calls = maxPendingImages + 5
	m := f.s.subs
	var kept int
	m.call(func() {
		for k := 1; k <= calls; k++ {
			imgs.cur.Store(&testImage{v: float64(k)})
			f.s.SourceChanged(src, []uint32{1})
		}
		m.hookMu.Lock()
		kept = len(m.batches)
		m.hookMu.Unlock()
	})
	if kept != maxPendingImages {
		t.Errorf("%d images kept, want %d", kept, maxPendingImages)
	}
	want := []float64{0}
	for k := 1; k < maxPendingImages; k++ {
		want = append(want, float64(k))
	}
	want = append(want, calls)
	for range 100 {
		if len(got[7]) >= len(want) {
			break
		}
		byHandle(f.tc.publish(), got)
	}
	if !slices.Equal(got[7], want) {
		t.Errorf("values %v, want %v", got[7], want)
	}
}

// countingImages counts the snapshots taken of a testImages.
type countingImages struct {
	testImages
	n atomic.Int32
}

func (s *countingImages) Snapshot() addrspace.Snapshot {
	s.n.Add(1)
	return s.testImages.Snapshot()
}

// TestSourceChangedKeepsNoImageUnwatched: while no item is indexed by any
// source, SourceChanged takes no snapshot (which would keep the engine's
// image from reuse); once one is, it does.
func TestSourceChangedKeepsNoImageUnwatched(t *testing.T) {
	f := newSubFixture(t, Config{})
	imgs := &countingImages{}
	imgs.cur.Store(&testImage{v: 1})
	src := f.s.AddressSpace().AddSource(imgs)
	sub := f.createSub(5, 10, 300)
	f.createItems(sub, item("static", ua.AttributeIDValue, 0, 10, nil))
	m := f.s.subs
	for range 5 {
		f.s.SourceChanged(src, []uint32{1})
		m.call(func() { m.sourceChanges(time.Now()) })
	}
	if n := imgs.n.Load(); n != 0 {
		t.Errorf("%d snapshots taken without an item on a source", n)
	}
	f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	m.call(func() {}) // the round of the creation is over
	f.s.SourceChanged(src, []uint32{1})
	if n := imgs.n.Load(); n != 1 {
		t.Errorf("%d snapshots taken with an item on a source, want 1", n)
	}
}

// releasedImages is a testImages whose snapshots count their holders.
type releasedImages struct {
	testImages
	held atomic.Int32
}

type releasedImage struct {
	*testImage
	src *releasedImages
}

func (s *releasedImages) Snapshot() addrspace.Snapshot {
	s.held.Add(1)
	return releasedImage{s.cur.Load(), s}
}

func (im releasedImage) Release() { im.src.held.Add(-1) }

// TestSourceChangedReleasesImages: the images SourceChanged takes are
// released once the run loop sampled them, also when more calls came
// than it keeps images for, and when changes overflowed.
func TestSourceChangedReleasesImages(t *testing.T) {
	f := newSubFixture(t, Config{})
	imgs := &releasedImages{}
	imgs.cur.Store(&testImage{v: 1})
	src := f.s.AddressSpace().AddSource(imgs)
	sub := f.createSub(5, 10, 300)
	f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	m := f.s.subs
	m.call(func() {})
	for _, calls := range []int{1, 5, maxPendingImages + 3} {
		// On the run loop's goroutine, so that it cannot sample them
		// before they are counted (SourceChanged does not wait for it).
		var held int32
		m.call(func() {
			for range calls {
				f.s.SourceChanged(src, []uint32{1})
			}
			held = imgs.held.Load()
			m.sourceChanges(time.Now())
		})
		if calls <= maxPendingImages && held != int32(calls) {
			t.Errorf("%d calls: %d images held before the run loop, want %d", calls, held, calls)
		}
		if n := imgs.held.Load(); n != 0 {
			t.Errorf("%d calls: %d images held after the run loop, want 0", calls, n)
		}
	}
	big := make([]uint32, maxPendingChanges+1)
	for i := range big {
		big[i] = 1
	}
	f.s.SourceChanged(src, []uint32{1})
	f.s.SourceChanged(src, big) // overflows: sampled in the current images
	m.call(func() { m.sourceChanges(time.Now()) })
	if n := imgs.held.Load(); n != 0 {
		t.Errorf("after an overflow: %d images held, want 0", n)
	}
}

// TestCatchUpAfterIdleCycle: the publishing timer fires a moment before
// the image it waits for, runs an idle cycle, and the image's change goes
// out at once instead of one publishing interval later; after a cycle that
// sent data, a change that follows at once waits for the next cycle.
func TestCatchUpAfterIdleCycle(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(5, 10, 300)
	if r := f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil)); r[0].StatusCode != status.Good {
		t.Fatal(r[0].StatusCode)
	}
	f.tc.publishData() // the initial value
	m := f.s.subs
	ch := &recChannel{}
	handles := []uint32{1}
	var afterIdle, afterData int
	m.call(func() {
		s := m.subs[sub]
		ss := s.ss
		t0 := time.Now().Add(time.Hour) // after any cycle the timer has set
		change := func(v float64) {
			f.vars.Set(v)
			f.s.SourceChanged(f.src, handles)
		}
		// An idle cycle at t0, a Publish request waiting; the image 0.2 ms later.
		m.cycle(s, t0)
		ss.queue = append(ss.queue[:0], pubReq{ch: ch, reqID: 1})
		change(1)
		m.sourceChanges(t0.Add(200 * time.Microsecond))
		afterIdle = ch.n
		// That message had data; a change 0.2 ms after it waits for the cycle.
		change(2)
		m.sourceChanges(t0.Add(400 * time.Microsecond))
		afterData = ch.n
		ss.queue = ss.queue[:0]
	})
	if afterIdle != 1 {
		t.Fatalf("%d responses for the image just after an idle cycle, want 1 at once", afterIdle)
	}
	r := subtest.WantOK[ua.PublishResponse](t, mustDecode(t, ch.last))
	if v, _ := values(r); !slices.Equal(v, []float64{1}) {
		t.Errorf("values %v, want [1]", v)
	}
	if afterData != 1 {
		t.Errorf("%d responses after a change 0.2 ms after a data message, want still 1", afterData)
	}
}

func mustDecode(t *testing.T, msg []byte) ua.Body {
	t.Helper()
	body, err := ua.DecodeMessage(ua.NewDecoder(msg))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestCreatedItemSkipsOlderPendingImages: an item created (sampled in the
// current image) while the changes of an older image still wait for the
// run loop does not sample that older image after its first value.
func TestCreatedItemSkipsOlderPendingImages(t *testing.T) {
	f := newSubFixture(t, Config{})
	src, imgs := addImageNode(t, f)
	sub := f.createSub(5, 10, 300)
	// An item on the node already, so that SourceChanged keeps the image
	// of each call; the one under test comes later, with handle 2.
	if r := f.createItems(sub, item("img", ua.AttributeIDValue, 0, 10, nil)); r[0].StatusCode != status.Good {
		t.Fatal(r[0].StatusCode)
	}
	f.tc.publishData()
	req := item("img", ua.AttributeIDValue, 0, 10, nil)
	req.RequestedParameters.ClientHandle = 2
	m := f.s.subs
	var res ua.MonitoredItemCreateResult
	m.call(func() {
		imgs.cur.Store(&testImage{v: 1})
		f.s.SourceChanged(src, []uint32{1}) // waits: the run loop runs this
		imgs.cur.Store(&testImage{v: 2})
		now := time.Now()
		m.rc.Reset()
		res = m.createItem(m.subs[sub], &req, ua.TimestampsToReturnBoth, now)
		m.sourceChanges(now.Add(5 * time.Millisecond))
		m.clearTouched()
	})
	if res.StatusCode != status.Good {
		t.Fatal(res.StatusCode)
	}
	got := map[uint32][]float64{}
	byHandle(f.tc.publishData(), got)
	if !slices.Equal(got[2], []float64{2}) {
		t.Errorf("new item's values %v, want [2]: the image of value 1 is older than its first sample", got[2])
	}
	if !slices.Equal(got[7], []float64{1}) {
		t.Errorf("older item's values %v, want [1], the change of the pending image", got[7])
	}
}

// TestDeadbandOnArrays: an absolute deadband applies to each element of
// an array (OPC 10000-4 §7.22.2): the array is reported when one element
// moves by more than the deadband, or its length or type changes.
func TestDeadbandOnArrays(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		last, now any
		want      bool
	}{
		{[]float64{1, 2, 3}, []float64{1.5, 2, 3.9}, false},
		{[]float64{1, 2, 3}, []float64{1, 2, 4.5}, true},
		{[]float64{1, 2, 3}, []float64{1, 2}, true},
		{[]float64{nan, 2}, []float64{nan, 2.5}, false},
		{[]float64{1, 2}, []float64{nan, 2}, true},
		{[]int32{10, 20}, []int32{11, 19}, false},
		{[]int32{10, 20}, []int32{10, 22}, true},
		{[]int32{10, 20}, []float64{10, 20}, true},
		{[]float32{0.5}, []float32{1.4}, false},
		{[]string{"a"}, []string{"a"}, false},
		{[]string{"a"}, []string{"b"}, true},
	} {
		it := &monItem{trigger: ua.DataChangeTriggerStatusValue, deadband: ua.DeadbandTypeAbsolute, db: 1,
			last: &sample{dv: ua.DataValue{Value: ua.MustVariant(tc.last)}}}
		dv := ua.DataValue{Value: ua.MustVariant(tc.now)}
		if got := it.changed(&dv); got != tc.want {
			t.Errorf("%v → %v, deadband 1: changed %v, want %v", tc.last, tc.now, got, tc.want)
		}
	}
}

// TestSourceValuesChanged: while no item reports source timestamp
// changes, SourceValuesChanged samples only the handles whose value or
// status changed (a handle listed only in changed is not looked at, so
// an image whose value moved all the same is not reported); once an item
// with DataChangeTrigger StatusValueTimestamp exists, it samples every
// changed handle.
func TestSourceValuesChanged(t *testing.T) {
	f := newSubFixture(t, Config{})
	src, imgs := addImageNode(t, f)
	m := f.s.subs
	sub := f.createSub(5, 10, 300)
	a := item("img", ua.AttributeIDValue, 0, 10, nil)
	a.RequestedParameters.ClientHandle = 1
	if r := f.createItems(sub, a); r[0].StatusCode != status.Good {
		t.Fatal(r[0].StatusCode)
	}
	got := map[uint32][]float64{}
	byHandle(f.tc.publishData(), got) // the initial value, 0
	// The value moves to 1, but the call says only its timestamp did.
	imgs.cur.Store(&testImage{v: 1})
	m.SourceValuesChanged(src, []uint32{1}, nil)
	imgs.cur.Store(&testImage{v: 2})
	m.SourceValuesChanged(src, []uint32{1}, []uint32{1})
	for k := 0; len(got[1]) < 2 && k < 500; k++ {
		byHandle(f.tc.publish(), got)
	}
	if want := []float64{0, 2}; !slices.Equal(got[1], want) {
		t.Errorf("item 1: values %v, want %v (1 came as a timestamp change)", got[1], want)
	}

	b := item("img", ua.AttributeIDValue, 0, 10, &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValueTimestamp})
	b.RequestedParameters.ClientHandle = 2
	if r := f.createItems(sub, b); r[0].StatusCode != status.Good {
		t.Fatal(r[0].StatusCode)
	}
	for k := 0; len(got[2]) < 1 && k < 500; k++ {
		byHandle(f.tc.publish(), got) // b's initial value, 2
	}
	imgs.cur.Store(&testImage{v: 3})
	m.SourceValuesChanged(src, []uint32{1}, nil)
	for k := 0; (len(got[1]) < 3 || len(got[2]) < 2) && k < 500; k++ {
		byHandle(f.tc.publish(), got)
	}
	if w1, w2 := []float64{0, 2, 3}, []float64{2, 3}; !slices.Equal(got[1], w1) || !slices.Equal(got[2], w2) {
		t.Errorf("values %v and %v, want %v and %v: with a timestamp trigger every change is sampled", got[1], got[2], w1, w2)
	}
}
