package subs

import (
	"github.com/edged/edged/opcua/server/internal/subtest"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// TestLifetimeExpiresBesideAnother: the first of two subscriptions of a
// session expires while the manager's cycle goes through the session's
// subscriptions; the other one stays (this deletion once cleared the
// list being iterated and crashed the manager).
func TestLifetimeExpiresBesideAnother(t *testing.T) {
	f := newSubFixture(t, Config{})
	gone := f.createSub(5, 1, 3) // 5 ms, keep-alive 1, lifetime 3: gone after 15 ms without Publish
	kept := f.createSub(5, 10, 1000)
	m := f.s.subs
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var alive bool
		if err := m.call(func() { alive = m.subs[gone] != nil }); err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("subscription still alive after 10 s without Publish")
		}
	}
	var subs []uint32
	if err := m.call(func() {
		for _, ss := range m.sessions {
			for _, sub := range ss.subs {
				subs = append(subs, sub.id)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(subs) != 1 || subs[0] != kept {
		t.Errorf("subscriptions left %v, want [%d]", subs, kept)
	}
	r := subtest.WantOK[ua.DeleteSubscriptionsResponse](t, f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{kept}}))
	if r.Results[0] != status.Good {
		t.Errorf("DeleteSubscriptions: %v", r.Results)
	}
}

// TestSubscriptionCountsExpiryAndTransfer: a subscription that expires
// leaves CurrentSubscriptionCount, one that moves to another session
// changes neither count.
func TestSubscriptionCountsExpiryAndTransfer(t *testing.T) {
	f := newSubFixture(t, Config{})
	counts := func() (uint32, uint32) {
		d := f.s.Diagnostics()
		return d.CurrentSubscriptionCount, d.CumulatedSubscriptionCount
	}
	// 5 ms, keep-alive 1, lifetime 3: gone after 15 ms without Publish.
	f.createSub(5, 1, 3)
	kept := f.createSub(5, 10, 1000)
	if cur, cum := counts(); cur != 2 || cum != 2 {
		t.Fatalf("two subscriptions: current %d, cumulated %d", cur, cum)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if cur, _ := counts(); cur == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("subscription still counted after 10 s without Publish")
		}
	}
	if cur, cum := counts(); cur != 1 || cum != 2 {
		t.Errorf("after expiry: current %d, cumulated %d, want 1, 2", cur, cum)
	}

	tc2 := newTestConn(t, f.s, 2)
	tc2.openSession()
	tr := subtest.WantOK[ua.TransferSubscriptionsResponse](t, tc2.call(&ua.TransferSubscriptionsRequest{SubscriptionIDs: []uint32{kept}}))
	if tr.Results[0].StatusCode != status.Good {
		t.Fatalf("TransferSubscriptions: %v", tr.Results[0].StatusCode)
	}
	if cur, cum := counts(); cur != 1 || cum != 2 {
		t.Errorf("after the transfer: current %d, cumulated %d, want 1, 2", cur, cum)
	}
	r := subtest.WantOK[ua.DeleteSubscriptionsResponse](t, tc2.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{kept, kept}}))
	if r.Results[0] != status.Good || r.Results[1] != status.BadSubscriptionIDInvalid {
		t.Errorf("DeleteSubscriptions: %v", r.Results)
	}
	if cur, cum := counts(); cur != 0 || cum != 2 {
		t.Errorf("after deletion: current %d, cumulated %d, want 0, 2", cur, cum)
	}
}
