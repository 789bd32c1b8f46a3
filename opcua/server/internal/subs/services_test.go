package subs

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// subFixture is a test server with a session and variables to monitor:
// ns=1;s=ext (a Double served by a source whose value the test sets, with
// an EURange 0..200), ns=1;s=slow (the same source, MinimumSamplingInterval
// 100 ms) and ns=1;s=static (a static Double).
type subFixture struct {
	t    *testing.T
	s    *testServer
	tc   *testConn
	vars *subtest.Vars
	src  addrspace.SourceID
}

func newSubFixture(t *testing.T, cfg Config) *subFixture {
	f := &subFixture{t: t, s: newTestServer(t, cfg)}
	f.vars = subtest.AddVars(t, f.s.AddressSpace())
	f.src = f.vars.Src
	f.tc = newTestConn(t, f.s, 1)
	f.tc.openSession()
	return f
}

// set gives ext the value v and has the manager sample it, as the binding
// does on a new image.
func (f *subFixture) set(v float64) {
	f.vars.Set(v)
	time.Sleep(6 * time.Millisecond) // the item is due again (5 ms sampling)
	f.s.SourceChanged(f.src, []uint32{1, 2})
	m := f.s.subs
	m.call(func() { m.sourceChanges(time.Now()) })
}

func (f *subFixture) createSub(interval float64, keepAlive, lifetime uint32) uint32 {
	f.t.Helper()
	return subtest.CreateSub(f.t, f.tc.call, interval, keepAlive, lifetime)
}

func (f *subFixture) createItems(sub uint32, items ...ua.MonitoredItemCreateRequest) []ua.MonitoredItemCreateResult {
	f.t.Helper()
	return subtest.CreateItems(f.t, f.tc.call, sub, items...)
}

// publish sends a Publish and waits for its response.
func (tc *testConn) publish(acks ...ua.SubscriptionAcknowledgement) *ua.PublishResponse {
	tc.t.Helper()
	if r := tc.sendPublish(acks...); r != nil {
		tc.t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
	}
	return subtest.WantOK[ua.PublishResponse](tc.t, tc.async())
}

// publishData publishes until a response carries data changes.
func (tc *testConn) publishData() *ua.PublishResponse {
	tc.t.Helper()
	for range 500 {
		r := tc.publish()
		if len(r.NotificationMessage.NotificationData) > 0 {
			return r
		}
	}
	tc.t.Fatal("no data change in 500 Publish responses")
	return nil
}

func TestSubscriptionRevisionsAndErrors(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: Limits{MaxSubscriptionsPerSession: 3, MaxPublishRequestsPerSession: 2}})
	tc := f.tc
	// Publish before any subscription.
	subtest.WantFault(t, tc.sendPublish(), status.BadNoSubscription)

	for _, tt := range []struct {
		interval, wantInterval  float64
		keepAlive, lifetime     uint32
		wantKeepAlive, wantLife uint32
	}{
		{0, 5, 0, 0, 10, 30},
		{7, 10, 5, 100, 5, 100},
		{1000, 1000, 20, 1, 20, 60},
	} {
		r := subtest.WantOK[ua.CreateSubscriptionResponse](t, tc.call(&ua.CreateSubscriptionRequest{
			RequestedPublishingInterval: tt.interval, RequestedMaxKeepAliveCount: tt.keepAlive, RequestedLifetimeCount: tt.lifetime,
		}))
		if r.RevisedPublishingInterval != tt.wantInterval || r.RevisedMaxKeepAliveCount != tt.wantKeepAlive || r.RevisedLifetimeCount != tt.wantLife {
			t.Errorf("requested %v ms, %d, %d: revised %v ms, keep-alive %d, lifetime %d; want %v, %d, %d", tt.interval, tt.keepAlive, tt.lifetime,
				r.RevisedPublishingInterval, r.RevisedMaxKeepAliveCount, r.RevisedLifetimeCount, tt.wantInterval, tt.wantKeepAlive, tt.wantLife)
		}
		tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{r.SubscriptionID}})
	}
	for range 3 {
		f.createSub(1000, 1000, 3000)
	}
	subtest.WantFault(t, tc.call(&ua.CreateSubscriptionRequest{}), status.BadTooManySubscriptions)

	subtest.WantFault(t, tc.call(&ua.ModifySubscriptionRequest{SubscriptionID: 999}), status.BadSubscriptionIDInvalid)
	subtest.WantFault(t, tc.call(&ua.RepublishRequest{SubscriptionID: 999, RetransmitSequenceNumber: 1}), status.BadSubscriptionIDInvalid)
	subtest.WantFault(t, tc.call(&ua.SetPublishingModeRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.DeleteSubscriptionsRequest{}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.TransferSubscriptionsRequest{}), status.BadNothingToDo)
	spm := subtest.WantOK[ua.SetPublishingModeResponse](t, tc.call(&ua.SetPublishingModeRequest{SubscriptionIDs: []uint32{999}}))
	if spm.Results[0] != status.BadSubscriptionIDInvalid {
		t.Errorf("SetPublishingMode of 999: %v", spm.Results[0])
	}

	// The Publish queue: two are queued (the subscriptions publish only
	// every second), the third is one too many.
	for range 2 {
		if r := tc.sendPublish(); r != nil {
			t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
		}
	}
	subtest.WantFault(t, tc.sendPublish(), status.BadTooManyPublishRequests)
	// Only then one publishes every 15 ms: sooner, its first keep-alive
	// could take a queued Publish before the third came (a slow machine).
	mod := subtest.WantOK[ua.ModifySubscriptionResponse](t, tc.call(&ua.ModifySubscriptionRequest{SubscriptionID: 4, RequestedPublishingInterval: 12}))
	if mod.RevisedPublishingInterval != 15 {
		t.Errorf("ModifySubscription 12 ms revised to %v, want 15", mod.RevisedPublishingInterval)
	}
	r := tc.async() // the first keep-alive
	subtest.WantOK[ua.PublishResponse](t, r)

	// Deleting every subscription answers the queued Publish with
	// Bad_NoSubscription.
	del := subtest.WantOK[ua.DeleteSubscriptionsResponse](t, tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{4, 5, 6, 999}}))
	if !slices.Equal(del.Results, []ua.StatusCode{status.Good, status.Good, status.Good, status.BadSubscriptionIDInvalid}) {
		t.Errorf("DeleteSubscriptions results %v", del.Results)
	}
	subtest.WantFault(t, tc.async(), status.BadNoSubscription)
}

func TestMonitoredItemRevisionsAndErrors(t *testing.T) {
	f := newSubFixture(t, Config{})
	tc := f.tc
	sub := f.createSub(20, 10, 30)
	subtest.WantFault(t, tc.call(&ua.CreateMonitoredItemsRequest{SubscriptionID: sub, TimestampsToReturn: 9,
		ItemsToCreate: []ua.MonitoredItemCreateRequest{item("ext", ua.AttributeIDValue, 0, 1, nil)}}), status.BadTimestampsToReturnInvalid)
	subtest.WantFault(t, tc.call(&ua.CreateMonitoredItemsRequest{SubscriptionID: sub}), status.BadNothingToDo)
	subtest.WantFault(t, tc.call(&ua.CreateMonitoredItemsRequest{SubscriptionID: 999,
		ItemsToCreate: []ua.MonitoredItemCreateRequest{item("ext", ua.AttributeIDValue, 0, 1, nil)}}), status.BadSubscriptionIDInvalid)

	badMode := item("ext", ua.AttributeIDValue, 0, 1, nil)
	badMode.MonitoringMode = 7
	res := f.createItems(sub,
		item("nope", ua.AttributeIDValue, 0, 1, nil),
		item("ext", 99, 0, 1, nil),
		badMode,
		item("ext", ua.AttributeIDDisplayName, 0, 1, &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue}),
		item("ext", ua.AttributeIDValue, 0, 1, &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypeAbsolute), DeadbandValue: -1}),
		item("ext", ua.AttributeIDValue, 0, 1, &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypePercent), DeadbandValue: 150}),
		item("static", ua.AttributeIDValue, 0, 1, &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypePercent), DeadbandValue: 10}),
		item("ext", ua.AttributeIDValue, 0, 1, &ua.EventFilter{}),
		item("ext", ua.AttributeIDValue, 0, 1, &ua.DataChangeFilter{Trigger: 9}),
		// Revisions.
		item("ext", ua.AttributeIDValue, 0, 0, nil),
		item("ext", ua.AttributeIDValue, 7, 5, nil),
		item("ext", ua.AttributeIDValue, -1, 1e6, nil),
		item("slow", ua.AttributeIDValue, 0, 1, nil),
		item("slow", ua.AttributeIDValue, 150, 1, nil),
		item("static", ua.AttributeIDValue, 0, 1, nil),
		item("ext", ua.AttributeIDDisplayName, 0, 1, nil),
		item("ext", ua.AttributeIDValue, 0, 1, &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypePercent), DeadbandValue: 10}),
	)
	want := []struct {
		st ua.StatusCode
		si float64
		q  uint32
	}{
		{status.BadNodeIDUnknown, 0, 0},
		{status.BadAttributeIDInvalid, 0, 0},
		{status.BadMonitoringModeInvalid, 0, 0},
		{status.BadFilterNotAllowed, 0, 0},
		{status.BadDeadbandFilterInvalid, 0, 0},
		{status.BadDeadbandFilterInvalid, 0, 0},
		{status.BadMonitoredItemFilterUnsupported, 0, 0}, // Percent without EURange
		{status.BadMonitoredItemFilterUnsupported, 0, 0}, // EventFilter on a variable
		{status.BadDeadbandFilterInvalid, 0, 0},
		{status.Good, 5, 1},
		{status.Good, 10, 5},
		{status.Good, 20, 1000}, // -1: the publishing interval; queue capped
		{status.Good, 100, 1},   // the tag's MinimumSamplingInterval
		{status.Good, 200, 1},   // a multiple of it
		{status.Good, 5, 1},     // no source: its own interval, 0 is the base cycle
		{status.Good, 5, 1},
		{status.Good, 5, 1},
	}
	for i, w := range want {
		r := res[i]
		if r.StatusCode != w.st || (w.st == status.Good && (r.RevisedSamplingInterval != w.si || r.RevisedQueueSize != w.q)) {
			t.Errorf("item %d: %v, %v ms, queue %d; want %v, %v ms, queue %d", i, r.StatusCode, r.RevisedSamplingInterval, r.RevisedQueueSize, w.st, w.si, w.q)
		}
	}
	good := res[9].MonitoredItemID

	mm := subtest.WantOK[ua.ModifyMonitoredItemsResponse](t, tc.call(&ua.ModifyMonitoredItemsRequest{SubscriptionID: sub, TimestampsToReturn: ua.TimestampsToReturnBoth,
		ItemsToModify: []ua.MonitoredItemModifyRequest{{MonitoredItemID: 999}, {MonitoredItemID: good, RequestedParameters: ua.MonitoringParameters{SamplingInterval: 12, QueueSize: 3}}}}))
	if mm.Results[0].StatusCode != status.BadMonitoredItemIDInvalid || mm.Results[1].StatusCode != status.Good ||
		mm.Results[1].RevisedSamplingInterval != 15 || mm.Results[1].RevisedQueueSize != 3 {
		t.Errorf("ModifyMonitoredItems: %+v", mm.Results)
	}
	subtest.WantFault(t, tc.call(&ua.SetMonitoringModeRequest{SubscriptionID: sub, MonitoringMode: 5, MonitoredItemIDs: []uint32{good}}), status.BadMonitoringModeInvalid)
	sm := subtest.WantOK[ua.SetMonitoringModeResponse](t, tc.call(&ua.SetMonitoringModeRequest{SubscriptionID: sub, MonitoringMode: ua.MonitoringModeSampling, MonitoredItemIDs: []uint32{good, 999}}))
	if !slices.Equal(sm.Results, []ua.StatusCode{status.Good, status.BadMonitoredItemIDInvalid}) {
		t.Errorf("SetMonitoringMode: %v", sm.Results)
	}
	subtest.WantFault(t, tc.call(&ua.SetTriggeringRequest{SubscriptionID: sub, TriggeringItemID: 999, LinksToAdd: []uint32{good}}), status.BadMonitoredItemIDInvalid)
	subtest.WantFault(t, tc.call(&ua.SetTriggeringRequest{SubscriptionID: sub, TriggeringItemID: good}), status.BadNothingToDo)
	st := subtest.WantOK[ua.SetTriggeringResponse](t, tc.call(&ua.SetTriggeringRequest{SubscriptionID: sub, TriggeringItemID: res[10].MonitoredItemID,
		LinksToAdd: []uint32{good, 999}, LinksToRemove: []uint32{998}}))
	if !slices.Equal(st.AddResults, []ua.StatusCode{status.Good, status.BadMonitoredItemIDInvalid}) ||
		!slices.Equal(st.RemoveResults, []ua.StatusCode{status.BadMonitoredItemIDInvalid}) {
		t.Errorf("SetTriggering: add %v remove %v", st.AddResults, st.RemoveResults)
	}
	dm := subtest.WantOK[ua.DeleteMonitoredItemsResponse](t, tc.call(&ua.DeleteMonitoredItemsRequest{SubscriptionID: sub, MonitoredItemIDs: []uint32{good, good}}))
	if !slices.Equal(dm.Results, []ua.StatusCode{status.Good, status.BadMonitoredItemIDInvalid}) {
		t.Errorf("DeleteMonitoredItems: %v", dm.Results)
	}
	subtest.WantFault(t, tc.call(&ua.DeleteMonitoredItemsRequest{SubscriptionID: sub}), status.BadNothingToDo)
}

// TestDeadbandAndOverflow drives ext's value step by step: an absolute
// and a percent deadband pass exactly the values that moved far enough
// from the last one reported; a queue of 2 that overflows keeps the newest
// values with the overflow bit on the first.
func TestDeadbandAndOverflow(t *testing.T) {
	for _, tt := range []struct {
		name   string
		filter *ua.DataChangeFilter
		q      uint32
		in     []float64
		want   []float64
		status []ua.StatusCode
	}{
		{"absolute 1.0", &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypeAbsolute), DeadbandValue: 1},
			100, []float64{0.5, 1.0, 1.1, 2.2, 1.5, 3.3, 3.3, -1}, []float64{0, 1.1, 2.2, 3.3, -1}, nil},
		{"percent 5 of 0..200", &ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypePercent), DeadbandValue: 5},
			100, []float64{5, 10, 10.5, 20, 30.5, 25}, []float64{0, 10.5, 30.5}, nil},
		{"none", nil, 100, []float64{0, 1, 1, 2}, []float64{0, 1, 2}, nil},
		{"overflow", nil, 2, []float64{1, 2, 3}, []float64{2, 3}, []ua.StatusCode{statusOverflow, status.Good}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newSubFixture(t, Config{})
			sub := f.createSub(20, 1, 3000)
			var filter any
			if tt.filter != nil {
				filter = tt.filter
			}
			res := f.createItems(sub, item("ext", ua.AttributeIDValue, 0, tt.q, filter))
			if res[0].StatusCode != status.Good {
				t.Fatal(res[0].StatusCode)
			}
			for _, v := range tt.in {
				f.set(v)
			}
			// The first Publish gets the queue: the subscription is late
			// (its first cycle found no Publish) or publishes at once.
			var got []float64
			var status []ua.StatusCode
			for range 100 {
				if len(got) >= len(tt.want) {
					break
				}
				r := f.tc.publish()
				v, s := values(r)
				got, status = append(got, v...), append(status, s...)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("values %v, want %v", got, tt.want)
			}
			if tt.status != nil && !slices.Equal(status, tt.status) {
				t.Errorf("statuses %v, want %v", status, tt.status)
			}
		})
	}
}

func TestRepublish(t *testing.T) {
	f := newSubFixture(t, Config{})
	tc := f.tc
	sub := f.createSub(5, 10, 30)
	f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	// The client "drops" the response of this Publish: it does not ack it.
	r := tc.publishData()
	seq := r.NotificationMessage.SequenceNumber
	if !slices.Contains(r.AvailableSequenceNumbers, seq) {
		t.Errorf("AvailableSequenceNumbers %v without %d", r.AvailableSequenceNumbers, seq)
	}
	rp := subtest.WantOK[ua.RepublishResponse](t, tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: seq}))
	got, _ := values(&ua.PublishResponse{NotificationMessage: rp.NotificationMessage})
	want, _ := values(r)
	if rp.NotificationMessage.SequenceNumber != seq || !slices.Equal(got, want) {
		t.Errorf("Republish %d: seq %d values %v, want %v", seq, rp.NotificationMessage.SequenceNumber, got, want)
	}
	subtest.WantFault(t, tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: seq + 100}), status.BadMessageNotAvailable)
	// Acknowledged: gone. An unknown acknowledgement is reported.
	f.set(42)
	r2 := tc.publish(ua.SubscriptionAcknowledgement{SubscriptionID: sub, SequenceNumber: seq},
		ua.SubscriptionAcknowledgement{SubscriptionID: sub, SequenceNumber: seq + 100},
		ua.SubscriptionAcknowledgement{SubscriptionID: 999, SequenceNumber: 1})
	if !slices.Equal(r2.Results, []ua.StatusCode{status.Good, status.BadSequenceNumberUnknown, status.BadSubscriptionIDInvalid}) {
		t.Errorf("acknowledgement results %v", r2.Results)
	}
	subtest.WantFault(t, tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: seq}), status.BadMessageNotAvailable)
}

func TestTransferSubscriptions(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(5, 10, 30)
	f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	f.tc.publishData()

	tc2 := newTestConn(t, f.s, 2)
	tc2.openSession()
	tr := subtest.WantOK[ua.TransferSubscriptionsResponse](t, tc2.call(&ua.TransferSubscriptionsRequest{SubscriptionIDs: []uint32{sub, 999}, SendInitialValues: true}))
	if tr.Results[0].StatusCode != status.Good || tr.Results[1].StatusCode != status.BadSubscriptionIDInvalid {
		t.Fatalf("TransferSubscriptions: %+v", tr.Results)
	}
	// The old session learns of the transfer.
	old := f.tc.publish()
	var st ua.StatusCode = 1
	for _, eo := range old.NotificationMessage.NotificationData {
		if sc, ok := eo.Body.(*ua.StatusChangeNotification); ok {
			st = sc.Status
		}
	}
	if old.SubscriptionID != sub || st != status.GoodSubscriptionTransferred {
		t.Errorf("old session: subscription %d status %v, want %d Good_SubscriptionTransferred", old.SubscriptionID, st, sub)
	}
	// The new one gets the initial value, then the changes; the status
	// change took a sequence number of its own (OPC 10000-4 §5.13.1.1).
	first := tc2.publishData()
	if v, _ := values(first); len(v) == 0 || v[0] != 0 {
		t.Errorf("initial values after the transfer: %v", v)
	}
	if s0, s1 := old.NotificationMessage.SequenceNumber, first.NotificationMessage.SequenceNumber; s1 != s0+1 {
		t.Errorf("sequence numbers: status change %d, then the new session's first message %d, want %d", s0, s1, s0+1)
	}
	f.set(7)
	if v, _ := values(tc2.publishData()); !slices.Equal(v, []float64{7}) {
		t.Errorf("after the transfer: %v, want [7]", v)
	}
	subtest.WantFault(t, f.tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: 1}), status.BadSubscriptionIDInvalid)
}

// TestTransferWithinLimits: a session takes over no more subscriptions
// or monitored items than it could create; what it cannot take stays
// with its owner.
func TestTransferWithinLimits(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: Limits{MaxSubscriptionsPerSession: 2, MaxMonitoredItemsPerSession: 3}})
	ext := item("ext", ua.AttributeIDValue, 0, 10, nil)
	a, b := f.createSub(5, 10, 30), f.createSub(5, 10, 30)
	f.createItems(a, ext, ext)
	f.createItems(b, ext)

	tc2 := newTestConn(t, f.s, 2)
	tc2.openSession()
	own := subtest.CreateSub(t, tc2.call, 5, 10, 30)
	subtest.CreateItems(t, tc2.call, own, ext, ext)
	transfer := func(id uint32) ua.StatusCode {
		t.Helper()
		tr := subtest.WantOK[ua.TransferSubscriptionsResponse](t, tc2.call(&ua.TransferSubscriptionsRequest{SubscriptionIDs: []uint32{id}}))
		return tr.Results[0].StatusCode
	}
	owner := func(id uint32) uint32 {
		var ch uint32
		f.s.subs.call(func() { ch = f.s.subs.subs[id].ss.sess.ChannelID() })
		return ch
	}
	// 2 items + a's 2 > 3.
	if st := transfer(a); st != status.BadTooManyMonitoredItems || owner(a) != 1 {
		t.Errorf("transfer of 2 more items: %v, owner on channel %d; want Bad_TooManyMonitoredItems, 1", st, owner(a))
	}
	if st := transfer(b); st != status.Good || owner(b) != 2 {
		t.Errorf("transfer of b: %v, owner on channel %d; want Good, 2", st, owner(b))
	}
	// A third subscription is one too many, even without items.
	c := f.createSub(5, 10, 30)
	if st := transfer(c); st != status.BadTooManySubscriptions || owner(c) != 1 {
		t.Errorf("transfer of a third subscription: %v, owner on channel %d; want Bad_TooManySubscriptions, 1", st, owner(c))
	}
}

func TestLifetimeExpires(t *testing.T) {
	f := newSubFixture(t, Config{})
	// 5 ms, keep-alive 1, lifetime 3: gone after 15 ms without Publish.
	sub := f.createSub(5, 1, 3)
	m := f.s.subs
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var alive bool
		m.call(func() { alive = m.subs[sub] != nil })
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("subscription still alive after 10 s without Publish")
		}
	}
	r := f.tc.publish()
	sc, ok := r.NotificationMessage.NotificationData[0].Body.(*ua.StatusChangeNotification)
	if r.SubscriptionID != sub || !ok || sc.Status != status.BadTimeout {
		t.Errorf("after expiry: %+v", r)
	}
}

// TestSourceChangedOverrun: more pending changes than the bound are not
// kept; the next round samples every item on a source instead.
func TestSourceChangedOverrun(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(5, 10, 30)
	f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	f.tc.publishData() // the initial value
	f.vars.Set(9)
	m := f.s.subs
	f.s.SourceChanged(f.src, make([]uint32, maxPendingChanges+1)) // handle 0: nobody's
	m.hookMu.Lock()
	overrun, n := m.overrun, len(m.changed)
	m.hookMu.Unlock()
	if n > maxPendingChanges {
		t.Fatalf("%d pending changes kept, bound %d", n, maxPendingChanges)
	}
	if !overrun && n == 0 {
		t.Log("the run loop drained the changes already")
	}
	m.call(func() { m.sourceChanges(time.Now()) })
	if v, _ := values(f.tc.publishData()); !slices.Equal(v, []float64{9}) {
		t.Errorf("after an overrun: %v, want [9]", v)
	}
}

// TestDeadbandNaN: with a deadband filter, a value that becomes NaN (a
// failed sensor, a division by zero in a scaled tag) and a NaN that
// becomes a number again are changes; |x-NaN| > deadband never holds, so
// both were dropped. NaN to NaN is no change.
func TestDeadbandNaN(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(20, 1, 3000)
	res := f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 100,
		&ua.DataChangeFilter{Trigger: ua.DataChangeTriggerStatusValue, DeadbandType: uint32(ua.DeadbandTypeAbsolute), DeadbandValue: 1}))
	if res[0].StatusCode != status.Good {
		t.Fatal(res[0].StatusCode)
	}
	for _, v := range []float64{5, math.NaN(), math.NaN(), 5.5, 5.6} {
		f.set(v)
	}
	var got []float64
	for range 100 {
		if len(got) >= 4 {
			break
		}
		v, _ := values(f.tc.publish())
		got = append(got, v...)
	}
	if len(got) != 4 || got[0] != 0 || got[1] != 5 || !math.IsNaN(got[2]) || got[3] != 5.5 {
		t.Errorf("values %v, want [0 5 NaN 5.5]", got)
	}
}

// TestSamplingModeDoesNotReport: an item set to Sampling keeps queueing
// but reports nothing (OPC 10000-4 §7.23), also the notifications it had
// queued as a Reporting item; back to Reporting, it reports them.
func TestSamplingModeDoesNotReport(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(20, 1, 3000)
	res := f.createItems(sub, item("ext", ua.AttributeIDValue, 0, 10, nil))
	if res[0].StatusCode != status.Good {
		t.Fatal(res[0].StatusCode)
	}
	itemID := res[0].MonitoredItemID
	if vs, _ := values(f.tc.publishData()); len(vs) != 1 || vs[0] != 0 {
		t.Fatalf("first values %v, want [0]", vs)
	}
	f.set(7) // queued while Reporting, not yet published
	mode := func(m ua.MonitoringMode) {
		t.Helper()
		r := subtest.WantOK[ua.SetMonitoringModeResponse](t, f.tc.call(&ua.SetMonitoringModeRequest{
			SubscriptionID: sub, MonitoringMode: m, MonitoredItemIDs: []uint32{itemID}}))
		if r.Results[0] != status.Good {
			t.Fatal(r.Results[0])
		}
	}
	mode(ua.MonitoringModeSampling)
	f.set(8)
	for range 3 {
		if vs, _ := values(f.tc.publish()); len(vs) != 0 {
			t.Fatalf("a Sampling item reported %v", vs)
		}
	}
	mode(ua.MonitoringModeReporting)
	if vs, _ := values(f.tc.publishData()); !slices.Equal(vs, []float64{7, 8}) {
		t.Fatalf("values %v once Reporting again, want [7 8]", vs)
	}
}

// TestTriggeredRespectsMaxNotifications: the queues of the items a
// SetTriggering link reports count against MaxNotificationsPerPublish
// too; what does not fit goes with the next messages, MoreNotifications
// set, without waiting for another trigger.
func TestTriggeredRespectsMaxNotifications(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: Limits{MaxNotificationsPerPublish: 2}})
	sub := f.createSub(20, 1, 3000)
	a := item("ext", ua.AttributeIDValue, 0, 1, nil)
	b := item("ext", ua.AttributeIDValue, 0, 4, nil)
	b.MonitoringMode = ua.MonitoringModeSampling
	res := f.createItems(sub, a, b)
	for _, r := range res {
		if r.StatusCode != status.Good {
			t.Fatal(r.StatusCode)
		}
	}
	tr := subtest.WantOK[ua.SetTriggeringResponse](t, f.tc.call(&ua.SetTriggeringRequest{
		SubscriptionID: sub, TriggeringItemID: res[0].MonitoredItemID, LinksToAdd: []uint32{res[1].MonitoredItemID}}))
	if tr.AddResults[0] != status.Good {
		t.Fatal(tr.AddResults[0])
	}
	for _, v := range []float64{1, 2, 3} {
		f.set(v)
	}
	// a's queue holds 3; b's 0, 1, 2, 3. One trigger: a's value and all
	// of b's queue, two a message.
	for i, want := range []struct {
		values []float64
		more   bool
	}{
		{[]float64{3, 0}, true},
		{[]float64{1, 2}, true},
		{[]float64{3}, false},
	} {
		r := f.tc.publishData()
		if vs, _ := values(r); !slices.Equal(vs, want.values) || r.MoreNotifications != want.more {
			t.Fatalf("message %d: values %v MoreNotifications %v, want %v %v", i+1, vs, r.MoreNotifications, want.values, want.more)
		}
	}
	// A new trigger reports b's new samples only.
	f.set(13)
	if vs, _ := values(f.tc.publishData()); !slices.Equal(vs, []float64{13, 13}) {
		t.Fatalf("after a new trigger: %v, want [13 13]", vs)
	}
}
