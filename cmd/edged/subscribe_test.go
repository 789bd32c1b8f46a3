package main

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// TestSubscribeCounter is issue 6's acceptance test: the gopcua client
// subscribes to sim.Counter with 5 ms sampling and publishing and receives
// at least 350 of the 400 changes of 2 s (distinct values counted).
func TestSubscribeCounter(t *testing.T) {
	ctx, cancel, out, errc := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`sim \(modbus-tcp\): ns=2;s=sim\.`))

	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	c := dialGopcua(t, cctx, m[1])

	notes := make(chan *opcua.PublishNotificationData, 1024)
	sub, err := peer.GopcuaSubscribe(cctx, c, &opcua.SubscriptionParameters{Interval: 5 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	item := opcua.NewMonitoredItemCreateRequestWithDefaults(gua.MustParseNodeID("ns=2;s=sim.Counter"), gua.AttributeIDValue, 1)
	item.RequestedParameters.SamplingInterval = 5
	res, err := sub.Monitor(cctx, gua.TimestampsToReturnBoth, item)
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Results[0].StatusCode; st != gua.StatusOK {
		t.Fatalf("CreateMonitoredItems: %v", st)
	}
	if ri := res.Results[0].RevisedSamplingInterval; ri != 5 {
		t.Errorf("revised sampling interval %v ms, want 5", ri)
	}

	seen := map[uint32]bool{}
	var end <-chan time.Time
	timeout := time.After(30 * time.Second) // bounded wait for the first value
	for end == nil || len(end) == 0 {
		select {
		case n := <-notes:
			if n.Error != nil {
				t.Fatalf("notification error: %v", n.Error)
			}
			dcn, ok := n.Value.(*gua.DataChangeNotification)
			if !ok {
				continue
			}
			for _, mi := range dcn.MonitoredItems {
				if v, ok := mi.Value.Value.Value().(uint32); ok {
					seen[v] = true
				}
			}
			if end == nil && len(seen) > 0 {
				seen = map[uint32]bool{} // count from the first value on
				end = time.After(2 * time.Second)
			}
			continue
		case <-timeout:
			t.Fatal("no data change of sim.Counter within 30 s")
		case <-end:
		}
		break
	}
	t.Logf("sim.Counter: %d distinct values in 2 s (400 possible)", len(seen))
	// The bar is 350 of 400, and so it is in make test. Under
	// make test-arm the test runs in user-mode emulation (qemu), which
	// executes ARM code several times slower than the host: the whole
	// stack — simulator, driver, engine, server and gopcua client — then
	// still has to deliver most changes, but not 350.
	want := 350
	if os.Getenv("EDGED_TEST_EMULATED") != "" {
		want = 250
	}
	if len(seen) < want {
		t.Errorf("received %d of the 400 possible changes of sim.Counter in 2 s, want at least %d", len(seen), want)
	}
	sub.Cancel(cctx)
	c.Close(cctx)
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}
