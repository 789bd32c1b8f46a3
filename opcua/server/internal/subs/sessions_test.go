package subs

import (
	"github.com/edged/edged/opcua/server/internal/subtest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// itemIntervals returns the sampling intervals (ms) of the items ids of
// subscription sub, read on the manager.
func (f *subFixture) itemIntervals(sub uint32, ids ...uint32) []float64 {
	f.t.Helper()
	m := f.s.subs
	out := make([]float64, len(ids))
	m.call(func() {
		s := m.subs[sub]
		for i, id := range ids {
			if it := s.items[id]; it != nil {
				out[i] = durMS(it.interval)
			}
		}
	})
	return out
}

func (f *subFixture) modifySub(sub uint32, interval float64) {
	f.t.Helper()
	r := subtest.WantOK[ua.ModifySubscriptionResponse](f.t, f.tc.call(&ua.ModifySubscriptionRequest{
		SubscriptionID: sub, RequestedPublishingInterval: interval, RequestedMaxKeepAliveCount: 10, RequestedLifetimeCount: 30,
	}))
	if r.RevisedPublishingInterval != interval {
		f.t.Fatalf("publishing interval %v revised to %v", interval, r.RevisedPublishingInterval)
	}
}

// TestSamplingIntervalFollowsPublishing: an item created (or modified)
// with sampling interval -1 samples at the publishing interval, also after
// ModifySubscription changes it; an item with an interval of its own keeps
// it.
func TestSamplingIntervalFollowsPublishing(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(20, 10, 30)
	res := f.createItems(sub,
		item("ext", ua.AttributeIDValue, -1, 1, nil),
		item("static", ua.AttributeIDValue, -1, 1, nil),
		item("slow", ua.AttributeIDValue, -1, 1, nil),
		item("ext", ua.AttributeIDValue, 10, 1, nil),
		item("static", ua.AttributeIDValue, 10, 1, nil),
	)
	ids := make([]uint32, len(res))
	var got []float64
	for i, r := range res {
		if r.StatusCode != status.Good {
			t.Fatalf("item %d: %v", i, r.StatusCode)
		}
		ids[i] = r.MonitoredItemID
		got = append(got, r.RevisedSamplingInterval)
	}
	want := []float64{20, 20, 100, 10, 10}
	if !equalFloats(got, want) {
		t.Errorf("created: revised %v, want %v", got, want)
	}
	f.modifySub(sub, 50)
	if got, want := f.itemIntervals(sub, ids...), []float64{50, 50, 100, 10, 10}; !equalFloats(got, want) {
		t.Errorf("after ModifySubscription 50 ms: %v, want %v", got, want)
	}
	f.modifySub(sub, 250)
	if got, want := f.itemIntervals(sub, ids...), []float64{250, 250, 300, 10, 10}; !equalFloats(got, want) {
		t.Errorf("after ModifySubscription 250 ms: %v, want %v", got, want)
	}

	// ModifyMonitoredItems: the item with 10 asks for -1 now, the -1 one
	// for 15.
	mm := subtest.WantOK[ua.ModifyMonitoredItemsResponse](t, f.tc.call(&ua.ModifyMonitoredItemsRequest{
		SubscriptionID: sub, TimestampsToReturn: ua.TimestampsToReturnBoth,
		ItemsToModify: []ua.MonitoredItemModifyRequest{
			{MonitoredItemID: ids[0], RequestedParameters: ua.MonitoringParameters{SamplingInterval: 15, QueueSize: 1}},
			{MonitoredItemID: ids[3], RequestedParameters: ua.MonitoringParameters{SamplingInterval: -1, QueueSize: 1}},
			{MonitoredItemID: ids[4], RequestedParameters: ua.MonitoringParameters{SamplingInterval: -1, QueueSize: 1}},
		},
	}))
	got = got[:0]
	for _, r := range mm.Results {
		got = append(got, r.RevisedSamplingInterval)
	}
	if want := []float64{15, 250, 250}; !equalFloats(got, want) {
		t.Errorf("ModifyMonitoredItems: revised %v, want %v", got, want)
	}
	f.modifySub(sub, 40)
	if got, want := f.itemIntervals(sub, ids...), []float64{15, 40, 100, 40, 40}; !equalFloats(got, want) {
		t.Errorf("after ModifySubscription 40 ms: %v, want %v", got, want)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSourcelessItemOwnInterval: an item without a source (a static
// variable, a namespace 0 variable, a non-Value attribute) gets a sampling
// interval of its own, a multiple of the base cycle, and is sampled when
// it is due, not on the publishing cycle.
func TestSourcelessItemOwnInterval(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(1000, 10, 30)
	curTime := ua.MonitoredItemCreateRequest{
		ItemToMonitor:       ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime), AttributeID: uint32(ua.AttributeIDValue)},
		MonitoringMode:      ua.MonitoringModeReporting,
		RequestedParameters: ua.MonitoringParameters{ClientHandle: 9, SamplingInterval: 12, QueueSize: 100, DiscardOldest: true},
	}
	res := f.createItems(sub, curTime,
		item("static", ua.AttributeIDValue, 0, 1, nil),
		item("ext", ua.AttributeIDDisplayName, 3000, 1, nil),
	)
	var got []float64
	for i, r := range res {
		if r.StatusCode != status.Good {
			t.Fatalf("item %d: %v", i, r.StatusCode)
		}
		got = append(got, r.RevisedSamplingInterval)
	}
	if want := []float64{15, 5, 3000}; !equalFloats(got, want) {
		t.Errorf("revised %v, want %v", got, want)
	}

	// Deterministic: drive sampleDue with chosen times on the manager.
	m := f.s.subs
	m.call(func() {
		it := m.subs[sub].items[res[0].MonitoredItemID]
		if it.heapPos == 0 {
			t.Error("CurrentTime item is not scheduled")
			return
		}
		t0 := it.nextSample
		if d := m.subs[sub].next.Sub(t0); d%it.interval != 0 {
			t.Errorf("next sample %v not aligned with the publishing cycle (%v apart)", t0, d)
		}
		m.sampleDue(t0.Add(-5 * time.Millisecond))
		if !it.nextSample.Equal(t0) {
			t.Errorf("sampled %v before it is due", t0.Sub(it.lastSample))
			return
		}
		before := len(it.queue)
		for k := range 4 {
			now := t0.Add(time.Duration(k) * it.interval)
			m.sampleDue(now)
			if !it.lastSample.Equal(now) {
				t.Errorf("sample %d: last sample at %v, want %v", k, it.lastSample, now)
			}
			if want := now.Add(it.interval); !it.nextSample.Equal(want) {
				t.Errorf("sample %d: next at %v, want %v", k, it.nextSample, want)
			}
		}
		if n := len(it.queue) - before; n != 4 {
			t.Errorf("%d notifications queued by 4 samples of CurrentTime, want 4", n)
		}
		// A late manager does not sample twice for one interval.
		now := it.nextSample.Add(10 * it.interval)
		m.sampleDue(now)
		if !it.nextSample.After(now) || it.nextSample.Sub(now) > it.interval {
			t.Errorf("after a late round at %v: next %v", now, it.nextSample)
		}
		m.clearTouched()
	})

	// End to end on the timer: several samples of CurrentTime per Publish
	// (the publishing interval is 5 ms × the sampling interval's 13).
	f.modifySub(sub, 200)
	for range 20 {
		r := f.tc.publish()
		n := 0
		for _, eo := range r.NotificationMessage.NotificationData {
			if dcn, ok := eo.Body.(*ua.DataChangeNotification); ok {
				for _, mi := range dcn.MonitoredItems {
					if mi.ClientHandle == 9 {
						n++
					}
				}
			}
		}
		if n >= 2 {
			return
		}
	}
	t.Error("never more than one sample of CurrentTime per 200 ms Publish with 15 ms sampling")
}

// closableChannel is a fakeChannel that can die: Closed reports it, and
// what is written after that is counted and lost.
type closableChannel struct {
	fakeChannel
	dead       atomic.Bool
	lateWrites atomic.Int32
}

func (c *closableChannel) Closed() bool { return c.dead.Load() }

func (c *closableChannel) WriteResponse(id uint32, msg []byte) error {
	if c.dead.Load() {
		c.lateWrites.Add(1)
		return uasc.ErrClosed
	}
	return c.fakeChannel.WriteResponse(id, msg)
}

func (c *closableChannel) QueueResponse(id uint32, msg []byte) error { return c.WriteResponse(id, msg) }

// nextOut waits (up to 10 s) for the next response written to fc.
func nextOut(t *testing.T, fc *fakeChannel) ua.Body {
	t.Helper()
	return fc.Next(t)
}

// TestPublishAfterSessionMove: Publish requests queued over a channel
// that died, or that the session left for a new one, do not swallow
// notifications: after ActivateSession over the new channel, its Publish
// requests get every change, with no gap in the sequence numbers; the
// old channel's requests, if it is still open, get
// Bad_SecureChannelIdInvalid.
func TestPublishAfterSessionMove(t *testing.T) {
	for _, oldDies := range []bool{true, false} {
		name := "old channel open"
		if oldDies {
			name = "old channel dead"
		}
		t.Run(name, func(t *testing.T) {
			f := newSubFixture(t, Config{})
			old := &closableChannel{fakeChannel: fakeChannel{Num: 7}}
			tc1 := &testConn{t: t, c: newConn(f.s, old)}
			tc1.openSession()
			cs := subtest.WantOK[ua.CreateSubscriptionResponse](t, tc1.call(&ua.CreateSubscriptionRequest{
				RequestedPublishingInterval: 5, RequestedMaxKeepAliveCount: 200, RequestedLifetimeCount: 3000, PublishingEnabled: true,
			}))
			sub := cs.SubscriptionID
			subtest.WantOK[ua.CreateMonitoredItemsResponse](t, tc1.call(&ua.CreateMonitoredItemsRequest{
				SubscriptionID: sub, TimestampsToReturn: ua.TimestampsToReturnBoth,
				ItemsToCreate: []ua.MonitoredItemCreateRequest{item("ext", ua.AttributeIDValue, 0, 100, nil)},
			}))
			if r := tc1.sendPublish(); r != nil {
				t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
			}
			first := subtest.WantOK[ua.PublishResponse](t, nextOut(t, &old.fakeChannel))
			if v, _ := values(first); len(v) != 1 || v[0] != 0 {
				t.Fatalf("initial value %v", v)
			}
			seq := first.NotificationMessage.SequenceNumber
			// Two Publish requests wait on the old channel (no change, no
			// keep-alive for 1 s).
			for range 2 {
				if r := tc1.sendPublish(ua.SubscriptionAcknowledgement{SubscriptionID: sub, SequenceNumber: seq}); r != nil {
					t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
				}
			}
			if oldDies {
				old.dead.Store(true)
				f.set(1) // before the client is back
			}

			tc2 := newTestConn(t, f.s, 8)
			tc2.token = tc1.token
			subtest.WantOK[ua.ActivateSessionResponse](t, tc2.call(subtest.AnonymousActivate()))
			if !oldDies {
				for range 2 {
					subtest.WantFault(t, nextOut(t, &old.fakeChannel), status.BadSecureChannelIDInvalid)
				}
				f.set(1)
			}
			f.set(2)
			var got []float64
			for i := 0; len(got) < 2; i++ {
				if i == 5 {
					t.Fatalf("values after the move %v, want [1 2]", got)
				}
				r := tc2.publish()
				v, _ := values(r)
				if len(v) == 0 {
					continue // a keep-alive
				}
				if r.NotificationMessage.SequenceNumber != seq+1 {
					t.Fatalf("sequence number %d after %d: a message was lost", r.NotificationMessage.SequenceNumber, seq)
				}
				seq++
				got = append(got, v...)
			}
			if !slices.Equal(got, []float64{1, 2}) {
				t.Errorf("values after the move %v, want [1 2]", got)
			}
			if n := old.lateWrites.Load(); n != 0 {
				t.Errorf("%d responses written to the dead channel", n)
			}
		})
	}
}

// alive reports whether subscription id exists, after a tick of the
// manager has seen every closed session.
func (f *subFixture) alive(id uint32) bool {
	m := f.s.subs
	var ok bool
	m.call(func() {
		m.tick(time.Now())
		ok = m.subs[id] != nil
	})
	return ok
}

// hasState reports whether the manager keeps state for the session of
// token.
func (f *subFixture) hasState(token ua.NodeID) bool {
	m := f.s.subs
	var ok bool
	m.call(func() {
		for s := range m.sessions {
			ok = ok || s.(*testSession).token == token
		}
	})
	return ok
}

// TestCloseSessionSubscriptions: CloseSession with DeleteSubscriptions
// deletes the session's subscriptions; without it (and when the session
// times out, §5.7.2.1) they outlive it, expire with their own lifetime,
// and can be transferred to another session of the same user. Either way
// the session's queued Publish requests get Bad_SessionClosed.
func TestCloseSessionSubscriptions(t *testing.T) {
	for _, end := range []string{"delete", "keep", "timeout"} {
		t.Run(end, func(t *testing.T) {
			f := newSubFixture(t, Config{})
			closeSess := func(tc *testConn) {
				t.Helper()
				if end == "timeout" {
					if n := f.s.sessions.expire(time.Now().Add(time.Hour)); n < 1 {
						t.Fatalf("%d sessions timed out", n)
					}
				} else {
					subtest.WantOK[ua.CloseSessionResponse](t, tc.call(&ua.CloseSessionRequest{DeleteSubscriptions: end == "delete"}))
				}
			}
			long := f.createSub(5, 1000, 3000) // keep-alive 5 s, lifetime 15 s
			f.createItems(long, item("ext", ua.AttributeIDValue, 0, 10, nil))
			f.tc.publishData()                     // the initial value
			if r := f.tc.sendPublish(); r != nil { // waits: no change, no keep-alive for 5 s
				t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
			}
			closeSess(f.tc)
			subtest.WantFault(t, f.tc.async(), status.BadSessionClosed)
			if end == "delete" {
				if f.alive(long) || f.hasState(f.tc.token) {
					t.Fatal("subscription or session state alive after CloseSession with DeleteSubscriptions")
				}
				return
			}
			if !f.alive(long) {
				t.Fatal("subscription deleted with its session")
			}
			// The same user takes it over from a new session.
			tc2 := newTestConn(t, f.s, 2)
			tc2.openSession()
			tr := subtest.WantOK[ua.TransferSubscriptionsResponse](t, tc2.call(&ua.TransferSubscriptionsRequest{SubscriptionIDs: []uint32{long}}))
			if tr.Results[0].StatusCode != status.Good {
				t.Fatalf("TransferSubscriptions: %+v", tr.Results)
			}
			if f.hasState(f.tc.token) {
				t.Error("the closed session's state is kept after its last subscription left")
			}
			f.set(4)
			if v, _ := values(tc2.publishData()); !slices.Equal(v, []float64{4}) {
				t.Errorf("after the transfer: %v, want [4]", v)
			}

			// Without Publish requests, a subscription of a closed session
			// expires with its lifetime (3 × 5 ms).
			tc3 := newTestConn(t, f.s, 3)
			tc3.openSession()
			short := subtest.WantOK[ua.CreateSubscriptionResponse](t, tc3.call(&ua.CreateSubscriptionRequest{
				RequestedPublishingInterval: 5, RequestedMaxKeepAliveCount: 1, RequestedLifetimeCount: 3,
			})).SubscriptionID
			closeSess(tc3)
			for deadline := time.Now().Add(10 * time.Second); f.alive(short); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("orphaned subscription alive 10 s after its lifetime")
				}
			}
			if f.hasState(tc3.token) {
				t.Error("the closed session's state is kept after its last subscription expired")
			}
		})
	}
}
