package server

import (
	"testing"
	"time"

	"github.com/edged/edged/opcua/server/internal/subtest"
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
	if r := f.tc.call(&ua.CreateSubscriptionRequest{RequestedPublishingInterval: 5, PublishingEnabled: true}); subtest.FaultOf(r) != status.BadTooManySubscriptions {
		t.Fatalf("third subscription: %v, want Bad_TooManySubscriptions", subtest.FaultOf(r))
	}
	ext := item("ext", ua.AttributeIDValue, 0, 1, nil)
	got := append(f.createItems(a, ext, ext), f.createItems(b, ext, ext)...)
	want := []ua.StatusCode{status.Good, status.Good, status.Good, status.BadTooManyMonitoredItems}
	for i, r := range got {
		if r.StatusCode != want[i] {
			t.Errorf("item %d: %v, want %v", i, r.StatusCode, want[i])
		}
	}
	subtest.WantOK[ua.DeleteSubscriptionsResponse](t, f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{a}}))
	for i, r := range f.createItems(b, ext, ext) {
		if r.StatusCode != status.Good {
			t.Errorf("after deleting the first subscription, item %d: %v", i, r.StatusCode)
		}
	}
	f.createSub(5, 10, 300) // the deleted one's place
	rr := subtest.WantOK[ua.ReadResponse](t, f.tc.call(&ua.ReadRequest{
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
		}), time.Time{})
		if out != nil {
			t.Fatalf("Publish answered at once: % x", out)
		}
	}
	publish(f.tc)
	subtest.WantOK[ua.PublishResponse](t, f.tc.async()) // the initial value
	publish(f.tc)

	tc2 := newTestConn(t, f.s, 2)
	tc2.token = f.tc.token
	subtest.WantOK[ua.ActivateSessionResponse](t, tc2.call(subtest.AnonymousActivate()))
	answered := func(tc *testConn) int {
		fc := tc.c.ch.(*fakeChannel)
		fc.Mu.Lock()
		defer fc.Mu.Unlock()
		return len(fc.Out)
	}
	if n := answered(f.tc); n != 1 {
		t.Fatalf("%d answers on the old channel when ActivateSession returned, want 1", n)
	}
	subtest.WantFault(t, f.tc.async(), status.BadSecureChannelIDInvalid)

	publish(tc2)
	subtest.WantOK[ua.CloseSessionResponse](t, tc2.call(&ua.CloseSessionRequest{DeleteSubscriptions: true}))
	if n, cur := answered(tc2), f.s.Diagnostics().CurrentSubscriptionCount; n != 1 || cur != 0 {
		t.Fatalf("when CloseSession returned: %d answers to the queued Publish, %d subscriptions; want 1, 0", n, cur)
	}
	subtest.WantFault(t, tc2.async(), status.BadSessionClosed)
}

// openSessionAs opens an anonymous session over tc as the client
// application appURI, with the certificate cert (nil: none).
func (tc *testConn) openSessionAs(appURI string, cert []byte) {
	tc.t.Helper()
	cs := subtest.WantOK[ua.CreateSessionResponse](tc.t, tc.call(&ua.CreateSessionRequest{SessionName: "test", RequestedSessionTimeout: 60000,
		ClientDescription: ua.ApplicationDescription{ApplicationURI: appURI, ApplicationType: ua.ApplicationTypeClient},
		ClientCertificate: cert}))
	tc.token = cs.AuthenticationToken
	subtest.WantOK[ua.ActivateSessionResponse](tc.t, tc.call(subtest.AnonymousActivate()))
}

// TestTransferBelongsToTheClient: an anonymous session takes over the
// subscription of another anonymous session only if both are the same
// client application, by ApplicationUri and, where it sent one, its
// certificate (OPC 10000-4 §5.14.7); otherwise Bad_UserAccessDenied and
// the subscription stays where it was.
func TestTransferBelongsToTheClient(t *testing.T) {
	f := newSubFixture(t, Config{})
	owner := newTestConn(t, f.s, 2)
	owner.openSessionAs("urn:plant:scada", []byte("certificate A"))
	sub := subtest.CreateSub(t, owner.call, 5, 10, 300)
	transfer := func(tc *testConn) ua.StatusCode {
		r := subtest.WantOK[ua.TransferSubscriptionsResponse](t, tc.call(&ua.TransferSubscriptionsRequest{SubscriptionIDs: []uint32{sub}}))
		return r.Results[0].StatusCode
	}
	for _, c := range []struct {
		appURI string
		cert   []byte
	}{
		{"urn:attacker", []byte("certificate A")},
		{"urn:plant:scada", []byte("certificate B")},
		{"urn:plant:scada", nil},
	} {
		other := newTestConn(t, f.s, 3)
		other.openSessionAs(c.appURI, c.cert)
		if st := transfer(other); st != status.BadUserAccessDenied {
			t.Errorf("transfer to %s with certificate %q: %v, want Bad_UserAccessDenied", c.appURI, c.cert, st)
		}
	}
	// Nothing changed: the subscription is still the owner's.
	if r := owner.call(&ua.ModifySubscriptionRequest{SubscriptionID: sub, RequestedPublishingInterval: 5, RequestedLifetimeCount: 300, RequestedMaxKeepAliveCount: 10}); subtest.FaultOf(r) != status.Good {
		t.Fatalf("the owner's ModifySubscription after the refused transfers: %v", subtest.FaultOf(r))
	}
	again := newTestConn(t, f.s, 4) // the same client, reconnected
	again.openSessionAs("urn:plant:scada", []byte("certificate A"))
	if st := transfer(again); st != status.Good {
		t.Fatalf("transfer to the same client: %v, want Good", st)
	}
	r := subtest.WantOK[ua.DeleteSubscriptionsResponse](t, again.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{sub}}))
	if r.Results[0] != status.Good {
		t.Errorf("the new owner's DeleteSubscriptions: %v", r.Results[0])
	}
}
