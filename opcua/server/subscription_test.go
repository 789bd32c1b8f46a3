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

// TestSessionServicesTellTheEngine: the session services tell the engine
// before they answer (internal/subs tests the rest): by the time
// ActivateSession over another channel is answered, the Publish request
// queued over the old one was answered there with
// Bad_SecureChannelIdInvalid (the engine would otherwise find it stale
// only at its next round); by the time CloseSession with
// DeleteSubscriptions is answered, the queued Publish got
// Bad_SessionClosed and the subscription is gone.
func TestSessionServicesTellTheEngine(t *testing.T) {
	f := newSubFixture(t, Config{})
	sub := f.createSub(1000, 100, 1000) // no keep-alive for a long while
	f.createItems(sub, item("static", ua.AttributeIDValue, 0, 1, nil))
	publish := func(tc *testConn) {
		t.Helper()
		tc.handle++
		out := tc.c.handle(ua.AppendMessage(nil, &ua.PublishRequest{
			RequestHeader: ua.RequestHeader{RequestHandle: tc.handle, AuthenticationToken: tc.token},
		}))
		if out != nil {
			t.Fatalf("Publish answered at once: % x", out)
		}
	}
	publish(f.tc)
	wantOK[ua.PublishResponse](t, f.tc.async()) // the initial value
	publish(f.tc)

	tc2 := newTestConn(t, f.s, 2)
	tc2.token = f.tc.token
	wantOK[ua.ActivateSessionResponse](t, tc2.call(anonymousActivate()))
	answered := func(tc *testConn) int {
		fc := tc.c.ch.(*fakeChannel)
		fc.Mu.Lock()
		defer fc.Mu.Unlock()
		return len(fc.Out)
	}
	if n := answered(f.tc); n != 1 {
		t.Fatalf("%d answers on the old channel when ActivateSession returned, want 1", n)
	}
	wantFault(t, f.tc.async(), status.BadSecureChannelIDInvalid)

	publish(tc2)
	wantOK[ua.CloseSessionResponse](t, tc2.call(&ua.CloseSessionRequest{DeleteSubscriptions: true}))
	if n, cur := answered(tc2), f.s.Diagnostics().CurrentSubscriptionCount; n != 1 || cur != 0 {
		t.Fatalf("when CloseSession returned: %d answers to the queued Publish, %d subscriptions; want 1, 0", n, cur)
	}
	wantFault(t, tc2.async(), status.BadSessionClosed)
}
