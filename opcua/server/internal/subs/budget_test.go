package subs

import (
	"testing"
	"time"

	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// TestSamplingBudgetIsShared: with a budget of 100 samples per cycle, a
// session with 1,000 items on a variable that changes in every cycle
// takes no more than the budget per cycle (after a burst of at most
// budgetBurst cycles' worth), and another session's item on it is sampled
// in every cycle; the big session's items wait in its backlog, oldest
// first, so that each is sampled within the cycles the budget needs, in
// the image current then.
func TestSamplingBudgetIsShared(t *testing.T) {
	const budget, bigItems = 100, 1000
	f := newSubFixture(t, Config{Subscriptions: Limits{SamplesPerCycle: budget}})
	big := f.createSub(5, 10, 300)
	createExtItems(t, f, big, bigItems)
	other := newTestConn(t, f.s, 2)
	other.openSession()
	small := subtest.CreateSub(t, other.call, 5, 10, 300)
	if r := subtest.CreateItems(t, other.call, small, item("ext", ua.AttributeIDValue, 5, 1, nil)); r[0].StatusCode != status.Good {
		t.Fatal(r[0].StatusCode)
	}

	m := f.s.subs
	m.call(func() {
		bigSub, smallItem := m.subs[big], firstItem(m.subs[small])
		now := time.Now().Add(time.Second)
		seen := map[*monItem]int{} // the round in which each big item was first sampled again
		const rounds = 12
		total := 0
		for round := 1; round <= rounds; round++ {
			now = now.Add(5 * time.Millisecond)
			sampled := imageAt(f, now, float64(round), bigSub, func(it *monItem) {
				if seen[it] == 0 {
					seen[it] = round
				}
			})
			total += sampled + 1
			if sampled+1 > budgetBurst*budget || total > (round+budgetBurst-1)*budget {
				t.Errorf("round %d: the big session took %d samples, %d in all with the other's, the budget is %d a cycle, %d cycles' worth at most at once",
					round, sampled, total, budget, budgetBurst)
			}
			if !smallItem.lastSample.Equal(now) {
				t.Errorf("round %d: the other session's item was not sampled", round)
			}
			if v, _ := smallItem.last.dv.Value.Float64(); v != float64(round) {
				t.Errorf("round %d: the other session's item has %v", round, v)
			}
		}
		// 99 samples a round for the big session: all its 1,000 items
		// were sampled again within 11 rounds, or 10 with the burst.
		if len(seen) != bigItems {
			t.Errorf("%d of the big session's %d items sampled in %d rounds, want all", len(seen), bigItems, rounds)
		}
		for it, r := range seen {
			if v, _ := it.last.dv.Value.Float64(); v < float64(r) {
				t.Errorf("item %d sampled in round %d has value %v, an older image", it.handle, r, v)
			}
		}
	})
}

// TestSamplingBudgetTakesJitter: a session within the budget is never
// held back by the engine's jitter: an image late by most of a cycle
// followed by one on time is sampled in full, though two images' samples
// come within a millisecond.
func TestSamplingBudgetTakesJitter(t *testing.T) {
	const budget, items = 100, 80
	f := newSubFixture(t, Config{Subscriptions: Limits{SamplesPerCycle: budget}})
	sub := f.createSub(5, 10, 300)
	createExtItems(t, f, sub, items)
	m := f.s.subs
	m.call(func() {
		s := m.subs[sub]
		start := time.Now().Add(time.Second)
		// Cycle k's image comes at 5k ms, but cycle 4's is 4 ms late.
		at := []time.Duration{5, 10, 15, 24, 25, 30, 35}
		for k, d := range at {
			now := start.Add(d * time.Millisecond)
			sampled := imageAt(f, now, float64(k+1), s, func(*monItem) {})
			if sampled != items || len(s.ss.backlog) != 0 {
				t.Errorf("image at %v: %d of %d items sampled, %d in the backlog", d*time.Millisecond, sampled, items, len(s.ss.backlog))
			}
		}
	})
}

// imageAt publishes v as the fixture's variable's new image and has the
// run loop (the caller) sample it at now; it returns how many of sub's
// items were sampled, calling each with them.
func imageAt(f *subFixture, now time.Time, v float64, sub *subscription, each func(*monItem)) int {
	f.vars.Set(v)
	f.s.SourceChanged(f.src, []uint32{1})
	f.s.subs.sourceChanges(now)
	n := 0
	for _, it := range sub.items {
		if it.lastSample.Equal(now) {
			n++
			each(it)
		}
	}
	return n
}

// createExtItems creates n items on the fixture's variable in sub, with
// client handles 0..n-1, 500 a call.
func createExtItems(t *testing.T, f *subFixture, sub uint32, n int) {
	t.Helper()
	reqs := make([]ua.MonitoredItemCreateRequest, n)
	for i := range reqs {
		reqs[i] = item("ext", ua.AttributeIDValue, 5, 1, nil)
		reqs[i].RequestedParameters.ClientHandle = uint32(i)
	}
	for first := 0; first < n; first += 500 {
		for _, r := range f.createItems(sub, reqs[first:min(first+500, n)]...) {
			if r.StatusCode != status.Good {
				t.Fatal(r.StatusCode)
			}
		}
	}
}

func firstItem(sub *subscription) *monItem {
	for _, it := range sub.items {
		return it
	}
	return nil
}

// TestRetransmissionBytesBounded: unacknowledged messages are kept for
// Republish within MaxRetransmissionBytes, all subscriptions together:
// beyond it the subscription that sends drops its oldest, whose Republish
// is then Bad_MessageNotAvailable; the newest message is always kept.
func TestRetransmissionBytesBounded(t *testing.T) {
	const limit = 4000
	f := newSubFixture(t, Config{Subscriptions: Limits{MaxRetransmissionBytes: limit}})
	sub := f.createSub(5, 10, 300)
	reqs := make([]ua.MonitoredItemCreateRequest, 50)
	for i := range reqs {
		reqs[i] = item("ext", ua.AttributeIDValue, 5, 1, nil)
		reqs[i].RequestedParameters.ClientHandle = uint32(i)
	}
	f.createItems(sub, reqs...)
	var seqs []uint32
	for k := range 6 {
		f.set(float64(k + 1))
		r := f.tc.publishData()
		seqs = append(seqs, r.NotificationMessage.SequenceNumber)
		if len(r.AvailableSequenceNumbers) == 0 || r.AvailableSequenceNumbers[len(r.AvailableSequenceNumbers)-1] != r.NotificationMessage.SequenceNumber {
			t.Fatalf("message %d: available %v, want the newest kept", k, r.AvailableSequenceNumbers)
		}
	}
	m := f.s.subs
	var held, kept int
	m.call(func() { held, kept = m.retransBytes, len(m.subs[sub].retrans) })
	if kept >= len(seqs) || kept == 0 {
		t.Fatalf("%d of %d unacknowledged messages kept, want fewer but at least one", kept, len(seqs))
	}
	if held > limit && kept > 1 {
		t.Errorf("%d bytes kept in %d messages, above the limit %d", held, kept, limit)
	}
	r := f.tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: seqs[0]})
	if subtest.FaultOf(r) != status.BadMessageNotAvailable {
		t.Errorf("Republish of a dropped message: %v, want Bad_MessageNotAvailable", subtest.FaultOf(r))
	}
	subtest.WantOK[ua.RepublishResponse](t, f.tc.call(&ua.RepublishRequest{SubscriptionID: sub, RetransmitSequenceNumber: seqs[len(seqs)-1]}))
	// Deleting the subscription gives its bytes back.
	subtest.WantOK[ua.DeleteSubscriptionsResponse](t, f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{sub}}))
	m.call(func() { held = m.retransBytes })
	if held != 0 {
		t.Errorf("%d retransmission bytes counted after the last subscription went", held)
	}
}

// BenchmarkDeleteSubscription: deleting a subscription of 10,000 items
// on one variable (DeleteSubscriptions, or CloseSession with
// DeleteSubscriptions). Items were once taken out of the variable's list
// one by one: quadratic, seconds of the run loop for a session of 50,000.
func BenchmarkDeleteSubscription(b *testing.B) {
	s := newTestServer(b, Config{})
	subtest.AddVars(b, s.AddressSpace())
	tc := newTestConn(b, s, 1)
	tc.openSession()
	reqs := make([]ua.MonitoredItemCreateRequest, 1000)
	for i := range reqs {
		reqs[i] = item("ext", ua.AttributeIDValue, 5, 1, nil)
	}
	for b.Loop() {
		b.StopTimer()
		sub := subtest.CreateSub(b, tc.call, 5, 10, 300)
		for range 10 {
			subtest.CreateItems(b, tc.call, sub, reqs...)
		}
		b.StartTimer()
		subtest.WantOK[ua.DeleteSubscriptionsResponse](b, tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{sub}}))
	}
}
