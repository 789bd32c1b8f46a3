package server

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// TestCreatedItemsReleaseMemory: the sweeper tells Runtime.MemoryReleased
// once freeOSAfterItems monitored items were created since its last
// report (the garbage of their requests), and once more two rounds later;
// not before.
func TestCreatedItemsReleaseMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Int32
		s := newTestServer(t, Config{Runtime: Runtime{MemoryReleased: func() { released.Add(1) }}})
		go s.Serve(&idleListener{done: make(chan struct{})}) // starts the sweeper, a round a second
		tc := newTestConn(t, s, 1)
		tc.openSession()
		sub := subtest.WantOK[ua.CreateSubscriptionResponse](t, tc.call(&ua.CreateSubscriptionRequest{
			RequestedPublishingInterval: 1000, RequestedMaxKeepAliveCount: 10, RequestedLifetimeCount: 10000, PublishingEnabled: true}))
		create := func(n int) {
			t.Helper()
			items := make([]ua.MonitoredItemCreateRequest, n)
			for i := range items {
				items[i] = ua.MonitoredItemCreateRequest{
					ItemToMonitor:       ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, id.Server_ServiceLevel), AttributeID: uint32(ua.AttributeIDValue)},
					MonitoringMode:      ua.MonitoringModeReporting,
					RequestedParameters: ua.MonitoringParameters{ClientHandle: uint32(i), SamplingInterval: 60000, QueueSize: 1, DiscardOldest: true},
				}
			}
			r := subtest.WantOK[ua.CreateMonitoredItemsResponse](t, tc.call(&ua.CreateMonitoredItemsRequest{
				SubscriptionID: sub.SubscriptionID, TimestampsToReturn: ua.TimestampsToReturnBoth, ItemsToCreate: items}))
			for i := range r.Results {
				if r.Results[i].StatusCode != status.Good {
					t.Fatalf("item %d: %v", i, r.Results[i].StatusCode)
				}
			}
		}
		for range freeOSAfterItems / 1000 {
			create(999)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if n := released.Load(); n != 0 {
			t.Fatalf("%d reports after %d items created, want none before %d", n, freeOSAfterItems/1000*999, freeOSAfterItems)
		}
		create(freeOSAfterItems / 1000)
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		if n := released.Load(); n != 1 {
			t.Fatalf("%d reports a round after %d items created, want 1", n, freeOSAfterItems)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := released.Load(); n != 2 {
			t.Fatalf("%d reports three rounds after, want 2 (the second, two rounds later)", n)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
