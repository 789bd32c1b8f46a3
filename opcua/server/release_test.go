package server

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua/id"
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
		// The sweeper counts from where it starts: before the items are
		// created (it once started after some, and the count fell short).
		synctest.Wait()
		tc := newTestConn(t, s, 1)
		tc.openSession()
		sub := subtest.CreateSub(t, tc.call, 1000, 10, 10000)
		create := func(n int) {
			t.Helper()
			wantItems(t, subtest.CreateItems(t, tc.call, sub, nodeItems(n, id.Server_ServiceLevel, 60000)...), n)
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
