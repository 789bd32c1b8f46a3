package server

import (
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// TestServerWideSubscriptionLimits: MaxSubscriptions and MaxMonitoredItems
// bound the whole server, under the per-session limits, are freed by
// deletion, and are advertised in ServerCapabilities.
func TestServerWideSubscriptionLimits(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: SubscriptionLimits{MaxSubscriptions: 2, MaxMonitoredItems: 3}})
	a, b := f.createSub(5, 10, 300), f.createSub(5, 10, 300)
	if r := f.tc.call(&ua.CreateSubscriptionRequest{RequestedPublishingInterval: 5, PublishingEnabled: true}); faultOf(r) != ua.StatusBadTooManySubscriptions {
		t.Fatalf("third subscription: %v, want Bad_TooManySubscriptions", faultOf(r))
	}
	ext := item("ext", ua.AttributeIDValue, 0, 1, nil)
	got := append(f.createItems(a, ext, ext), f.createItems(b, ext, ext)...)
	want := []ua.StatusCode{ua.StatusGood, ua.StatusGood, ua.StatusGood, ua.StatusBadTooManyMonitoredItems}
	for i, r := range got {
		if r.StatusCode != want[i] {
			t.Errorf("item %d: %v, want %v", i, r.StatusCode, want[i])
		}
	}
	wantOK[ua.DeleteSubscriptionsResponse](t, f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{a}}))
	for i, r := range f.createItems(b, ext, ext) {
		if r.StatusCode != ua.StatusGood {
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
