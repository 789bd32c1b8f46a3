package server

import (
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// TestServerWideSubscriptionLimits: MaxSubscriptions and MaxMonitoredItems
// bound the whole server, under the per-session limits, are freed by
// deletion, and are advertised in ServerCapabilities.
func TestServerWideSubscriptionLimits(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: SubscriptionLimits{MaxSubscriptions: 2, MaxMonitoredItems: 3}})
	a, b := f.createSub(5, 10, 300), f.createSub(5, 10, 300)
	if r := f.tc.call(&ua.CreateSubscriptionRequest{RequestedPublishingInterval: 5, PublishingEnabled: true}); faultOf(r) != status.BadTooManySubscriptions {
		t.Fatalf("third subscription: %v, want Bad_TooManySubscriptions", faultOf(r))
	}
	ext := item("ext", ua.AttributeIDValue, 0, 1, nil)
	got := append(f.createItems(a, ext, ext), f.createItems(b, ext, ext)...)
	want := []ua.StatusCode{status.Good, status.Good, status.Good, status.BadTooManyMonitoredItems}
	for i, r := range got {
		if r.StatusCode != want[i] {
			t.Errorf("item %d: %v, want %v", i, r.StatusCode, want[i])
		}
	}
	wantOK[ua.DeleteSubscriptionsResponse](t, f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{a}}))
	for i, r := range f.createItems(b, ext, ext) {
		if r.StatusCode != status.Good {
			t.Errorf("after deleting the first subscription, item %d: %v", i, r.StatusCode)
		}
	}
	f.createSub(5, 10, 300) // the deleted one's place
	rr := wantOK[ua.ReadResponse](t, f.tc.call(&ua.ReadRequest{
		TimestampsToReturn: ua.TimestampsToReturnNeither,
		NodesToRead: []ua.ReadValueID{
			{NodeID: ua.NewNumericNodeID(0, id.Server_ServerCapabilities_MaxSubscriptions), AttributeID: uint32(ua.AttributeIDValue)},
			{NodeID: ua.NewNumericNodeID(0, id.Server_ServerCapabilities_MaxMonitoredItems), AttributeID: uint32(ua.AttributeIDValue)},
		},
	}))
	for i, w := range []uint32{2, 3} {
		if v, ok := rr.Results[i].Value.Value().(uint32); !ok || v != w {
			t.Errorf("capability %d: %v (%v), want %d", i, rr.Results[i].Value.Value(), rr.Results[i].Status, w)
		}
	}
}

// TestMaxQueuedNotifications: once the server holds the bound, a queue
// with a value in it takes new ones as a full queue does (Overflow bit,
// the newest kept with discardOldest); the queues drain on Publish and
// fill again.
func TestMaxQueuedNotifications(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: SubscriptionLimits{MaxQueuedNotifications: 3}})
	sub := f.createSub(5, 10, 300)
	a, b := item("ext", ua.AttributeIDValue, 0, 10, nil), item("ext", ua.AttributeIDValue, 0, 10, nil)
	a.RequestedParameters.ClientHandle, b.RequestedParameters.ClientHandle = 1, 2
	f.createItems(sub, a, b)
	f.tc.publishData() // the initial values
	for round := range 2 {
		for v := 1; v <= 5; v++ {
			f.set(float64(10*round + v))
		}
		got := map[uint32][]float64{}
		overflow := map[uint32]bool{}
		n := 0
		r := f.tc.publishData()
		for _, eo := range r.NotificationMessage.NotificationData {
			if dcn, ok := eo.Body.(*ua.DataChangeNotification); ok {
				for _, mi := range dcn.MonitoredItems {
					x, _ := mi.Value.Value.Float64()
					got[mi.ClientHandle] = append(got[mi.ClientHandle], x)
					overflow[mi.ClientHandle] = overflow[mi.ClientHandle] || mi.Value.Status&statusOverflow == statusOverflow
					n++
				}
			}
		}
		last := float64(10*round + 5)
		if n > 3 {
			t.Errorf("round %d: %d notifications queued, bound 3: %v", round, n, got)
		}
		for _, h := range []uint32{1, 2} {
			if v := got[h]; len(v) == 0 || v[len(v)-1] != last || !overflow[h] {
				t.Errorf("round %d, item %d: values %v (overflow bit %v), want the last %v with the Overflow bit", round, h, v, overflow[h], last)
			}
		}
	}
	m := &f.s.subs
	var queued int
	m.call(func() { queued = m.queuedCount })
	if queued != 0 {
		t.Errorf("%d notifications counted as queued after the queues drained", queued)
	}
}
