//go:build robust

package robust

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// The subscription attack: one session holds as many subscriptions and
// items as edged allows, all on sim.Counter (it changes every 5 ms
// cycle), sampled and published every 5 ms.
const (
	floodSubs    = 10
	floodItems   = 10000
	itemsPerCall = 1000
	maxControl   = 50 * time.Millisecond // the bound for the control requests, p99
)

// flood creates the attacker's subscriptions and items over c, and then
// keeps Publish requests in flight without acknowledging anything until
// stop is closed; then it closes its session, deleting the
// subscriptions.
func flood(c *uaclient.Client, ready, closing func(), stop <-chan struct{}, held *int) error {
	for range floodSubs {
		var cs ua.CreateSubscriptionResponse
		if err := c.Call(&ua.CreateSubscriptionRequest{RequestHeader: c.Header(), RequestedPublishingInterval: 5,
			RequestedLifetimeCount: 3000, RequestedMaxKeepAliveCount: 10, PublishingEnabled: true}, &cs); err != nil {
			return fmt.Errorf("CreateSubscription: %w", err)
		}
		for first := 0; first < floodItems; first += itemsPerCall {
			req := ua.CreateMonitoredItemsRequest{RequestHeader: c.Header(), SubscriptionID: cs.SubscriptionID,
				TimestampsToReturn: ua.TimestampsToReturnBoth}
			for h := first; h < first+itemsPerCall; h++ {
				req.ItemsToCreate = append(req.ItemsToCreate, ua.MonitoredItemCreateRequest{
					ItemToMonitor:       ua.ReadValueID{NodeID: counterNode, AttributeID: uint32(ua.AttributeIDValue)},
					MonitoringMode:      ua.MonitoringModeReporting,
					RequestedParameters: ua.MonitoringParameters{ClientHandle: uint32(h), SamplingInterval: 5, QueueSize: 1, DiscardOldest: true},
				})
			}
			var resp ua.CreateMonitoredItemsResponse
			if err := c.Call(&req, &resp); err != nil {
				return fmt.Errorf("CreateMonitoredItems: %w", err)
			}
			for _, r := range resp.Results {
				if !r.StatusCode.IsBad() {
					*held++
				}
			}
		}
	}
	for range 5 {
		if _, err := c.Send(&ua.PublishRequest{RequestHeader: c.Header()}); err != nil {
			return err
		}
	}
	ready()
	for {
		select {
		case <-stop:
			closing()
			c.Conn().SetDeadline(time.Now().Add(30 * time.Second))
			var resp ua.CloseSessionResponse
			id, err := c.Send(&ua.CloseSessionRequest{RequestHeader: c.Header(), DeleteSubscriptions: true})
			for err == nil {
				var got uint32
				got, msg, rerr := c.ReadMessage()
				if rerr != nil {
					return fmt.Errorf("CloseSession: %w", rerr)
				}
				if got == id {
					return c.Decode(msg, &resp)
				}
			}
			return err
		default:
		}
		c.Conn().SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, _, err := c.ReadMessage(); err != nil {
			return fmt.Errorf("Publish: %w", err)
		}
		if _, err := c.Send(&ua.PublishRequest{RequestHeader: c.Header()}); err != nil {
			return err
		}
	}
}

// control is the other client: every 5 ms it creates a subscription with
// one item, publishes once, deletes it, and creates, activates and closes
// a session over a second channel, timing each request.
type control struct {
	mu  sync.Mutex
	lat map[string][]time.Duration
	err error
}

func (k *control) time(what string, f func() error) error {
	t0 := time.Now()
	err := f()
	d := time.Since(t0)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		if k.err == nil {
			k.err = fmt.Errorf("%s: %w", what, err)
		}
		return err
	}
	if k.lat == nil {
		k.lat = map[string][]time.Duration{}
	}
	k.lat[what] = append(k.lat[what], d)
	return nil
}

func (k *control) run(addr string, stop <-chan struct{}) {
	c, err := uaclient.DialSession(addr, "control", 10*time.Second)
	if err != nil {
		k.time("connect", func() error { return err })
		return
	}
	defer c.Conn().Close()
	sc, err := uaclient.DialSession(addr, "control-sessions", 10*time.Second)
	if err != nil {
		k.time("connect", func() error { return err })
		return
	}
	defer sc.Conn().Close()
	for {
		select {
		case <-stop:
			return
		case <-time.After(5 * time.Millisecond): // a p99 wants some hundreds of samples in CI's short window
		}
		c.Conn().SetDeadline(time.Now().Add(30 * time.Second))
		var cs ua.CreateSubscriptionResponse
		if k.time("CreateSubscription", func() error {
			return c.Call(&ua.CreateSubscriptionRequest{RequestHeader: c.Header(), RequestedPublishingInterval: 5,
				RequestedLifetimeCount: 300, RequestedMaxKeepAliveCount: 10, PublishingEnabled: true}, &cs)
		}) != nil {
			return
		}
		var mi ua.CreateMonitoredItemsResponse
		if k.time("CreateMonitoredItems", func() error {
			err := c.Call(&ua.CreateMonitoredItemsRequest{RequestHeader: c.Header(), SubscriptionID: cs.SubscriptionID,
				TimestampsToReturn: ua.TimestampsToReturnBoth, ItemsToCreate: []ua.MonitoredItemCreateRequest{{
					ItemToMonitor:       ua.ReadValueID{NodeID: counterNode, AttributeID: uint32(ua.AttributeIDValue)},
					MonitoringMode:      ua.MonitoringModeReporting,
					RequestedParameters: ua.MonitoringParameters{ClientHandle: 1, SamplingInterval: 5, QueueSize: 1},
				}}}, &mi)
			if err == nil && (len(mi.Results) != 1 || mi.Results[0].StatusCode.IsBad()) {
				err = fmt.Errorf("results %+v", mi.Results)
			}
			return err
		}) != nil {
			return
		}
		var pub ua.PublishResponse
		if k.time("Publish", func() error {
			return c.Call(&ua.PublishRequest{RequestHeader: c.Header()}, &pub)
		}) != nil {
			return
		}
		var del ua.DeleteSubscriptionsResponse
		if k.time("DeleteSubscriptions", func() error {
			return c.Call(&ua.DeleteSubscriptionsRequest{RequestHeader: c.Header(), SubscriptionIDs: []uint32{cs.SubscriptionID}}, &del)
		}) != nil {
			return
		}
		// A session of its own, over a second channel, created,
		// activated and closed.
		sc.Conn().SetDeadline(time.Now().Add(30 * time.Second))
		policy, err := sc.CreateSession("control-session")
		if err == nil {
			err = sc.ActivateSession(policy)
		}
		if err != nil {
			k.time("CreateSession", func() error { return err })
			return
		}
		if k.time("CloseSession", func() error {
			var resp ua.CloseSessionResponse
			return sc.Call(&ua.CloseSessionRequest{RequestHeader: sc.Header(), DeleteSubscriptions: true}, &resp)
		}) != nil {
			return
		}
	}
}

func (k *control) check(t *testing.T, g *gateway, name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		g.errorf(t, "%s: the control client failed: %v", name, k.err)
	}
	var kinds []string
	for what := range k.lat {
		kinds = append(kinds, what)
	}
	sort.Strings(kinds)
	for _, what := range []string{"CreateSubscription", "CreateMonitoredItems", "Publish", "DeleteSubscriptions", "CloseSession"} {
		lat := k.lat[what]
		p99 := kit.Percentile(lat, 99)
		t.Logf("%s: control %s: %d answered, p99 %v", name, what, len(lat), p99)
		if len(lat) == 0 {
			g.errorf(t, "%s: the control client made no %s", name, what)
		} else if p99 > maxControl {
			g.errorf(t, "%s: control %s took %v at p99, want at most %v", name, what, p99, maxControl)
		}
	}
}

// subscriptionCount reads the server's CurrentSubscriptionCount.
func subscriptionCount(c *uaclient.Client) (uint32, error) {
	var resp ua.ReadResponse
	c.Conn().SetDeadline(time.Now().Add(10 * time.Second))
	err := c.Call(&ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{{
		NodeID:      ua.NewNumericNodeID(0, id.Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSubscriptionCount),
		AttributeID: uint32(ua.AttributeIDValue)}}}, &resp)
	if err != nil {
		return 0, err
	}
	if len(resp.Results) != 1 {
		return 0, fmt.Errorf("Read: %d results", len(resp.Results))
	}
	n, ok := resp.Results[0].Value.Value().(uint32)
	if !ok {
		return 0, fmt.Errorf("CurrentSubscriptionCount is %T", resp.Results[0].Value.Value())
	}
	return n, nil
}

// TestSubscriptionFlood: while one session holds 10 × 10,000 items on a
// tag that changes every 5 ms, another client's subscription requests and
// a new session's CloseSession are answered within 50 ms at p99, the scan
// keeps its cycle, and once the attacker closes its session everything it
// held is gone within seconds.
func TestSubscriptionFlood(t *testing.T) {
	name := "one session with 10 × 10,000 items at 5 ms"
	var k control
	var floodErr error
	var closedAt time.Time
	var freed time.Duration
	var held int // the attacker's items edged accepted
	g := run(t, name, func(g *gateway, ready func(), stop <-chan struct{}) {
		c, err := uaclient.DialSession(g.addr, "flood", 10*time.Second)
		if err != nil {
			floodErr = err
			return
		}
		defer c.Conn().Close()
		kstop := make(chan struct{})
		kdone := make(chan struct{})
		// The control client runs while the attacker holds its items,
		// and stops before the attacker's CloseSession.
		floodErr = flood(c, func() {
			go func() { defer close(kdone); k.run(g.addr, kstop) }()
			ready()
		}, func() {
			close(kstop)
			<-kdone
		}, stop, &held)
		closedAt = time.Now()
		if floodErr == nil {
			freed, floodErr = subscriptionsGone(g.addr, closedAt)
		}
	})
	if floodErr != nil {
		g.errorf(t, "the attacker: %v", floodErr)
		return
	}
	t.Logf("%s: edged accepted %d of the attacker's %d items", name, held, floodSubs*floodItems)
	k.check(t, g, name)
	t.Logf("%s: no subscription left %v after the attacker's CloseSession", name, freed.Round(time.Millisecond))
	time.Sleep(8 * time.Second)
}

// subscriptionsGone waits up to 5 s from closed for the server to have no
// subscription left and returns how long it took.
func subscriptionsGone(addr string, closed time.Time) (time.Duration, error) {
	c, err := uaclient.DialSession(addr, "after", 10*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Conn().Close()
	for {
		n, err := subscriptionCount(c)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return time.Since(closed), nil
		}
		if time.Since(closed) > 5*time.Second {
			return 0, fmt.Errorf("%d subscriptions left 5 s after the attacker's CloseSession", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
