package subs

import (
	"testing"

	"github.com/edged/edged/opcua/ua"
)

// TestMaxQueuedNotifications: once the server holds the bound, a queue
// with a value in it takes new ones as a full queue does (Overflow bit,
// the newest kept with discardOldest); the queues drain on Publish and
// fill again.
func TestMaxQueuedNotifications(t *testing.T) {
	f := newSubFixture(t, Config{Subscriptions: Limits{MaxQueuedNotifications: 3}})
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
	m := f.s.subs
	var queued int
	m.call(func() { queued = m.queuedCount })
	if queued != 0 {
		t.Errorf("%d notifications counted as queued after the queues drained", queued)
	}
}
