package server_test

import (
	"net"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// openChannel connects to url and opens a secure channel without a
// session.
func openChannel(t *testing.T, url string) *uaclient.Client {
	t.Helper()
	nc, err := net.Dial("tcp", url[len("opc.tcp://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := uaclient.New(nc, url)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.Hello(); err != nil {
		t.Fatal(err)
	}
	if err := c.OpenSecureChannel(); err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Time{})
	return c
}

// closedByServer reports whether the server closed c's connection (a
// read ends within a second with an error, a UA-TCP Error included).
func closedByServer(c *uaclient.Client) bool {
	c.Conn().SetReadDeadline(time.Now().Add(time.Second))
	for {
		_, err := c.ReadChunk()
		if err == nil {
			continue
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return false
		}
		return true
	}
}

// readState reads Server_ServerStatus_State over c's session.
func readState(t *testing.T, c *uaclient.Client) {
	t.Helper()
	var resp ua.ReadResponse
	err := c.Call(&ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{
		{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_State), AttributeID: uint32(ua.AttributeIDValue)}}}, &resp)
	if err != nil || len(resp.Results) != 1 || resp.Results[0].Status.IsBad() {
		t.Fatalf("Read over the session: %v %+v", err, resp.Results)
	}
}

// TestConnectionsWithoutSession: when every connection place is taken,
// the oldest connection whose channel has no session is closed to admit a
// new one, never one with a session (OPC 10000-4 §5.5.2); a connection
// that has had no session for NoSessionTimeout is closed; a session never
// activated is closed with its channel.
func TestConnectionsWithoutSession(t *testing.T) {
	clk := subtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, url := startServer(t, server.Config{MaxConnections: 3, NoSessionTimeout: 10 * time.Second, Clock: clk.Now})
	addr := url[len("opc.tcp://"):]
	a, err := uaclient.Dial(addr, 10*time.Second) // with an activated session
	if err != nil {
		t.Fatal(err)
	}
	defer a.Conn().Close()
	b := openChannel(t, url) // no session: the oldest such
	clk.Add(time.Second)
	c := openChannel(t, url)
	clk.Add(time.Second)

	d := openChannel(t, url) // the table is full: b makes room
	if !closedByServer(b) {
		t.Fatal("the oldest connection without a session was not closed for a new one")
	}
	if closedByServer(c) {
		t.Fatal("a younger connection without a session was closed too")
	}
	readState(t, a)

	// A session created over d and never activated ends with d.
	before := srv.Diagnostics().CurrentSessionCount
	if _, err := d.CreateSession("never activated"); err != nil {
		t.Fatal(err)
	}
	if n := srv.Diagnostics().CurrentSessionCount; n != before+1 {
		t.Fatalf("%d sessions after CreateSession, want %d", n, before+1)
	}
	d.Conn().Close()
	waitFor(t, "the unactivated session closed with its channel", func() bool {
		return srv.Diagnostics().CurrentSessionCount == before
	})

	// c has had no session for NoSessionTimeout: closed; a stays.
	clk.Add(11 * time.Second)
	if !closedByServer(c) {
		waitFor(t, "c closed after NoSessionTimeout", func() bool { return closedByServer(c) })
	}
	readState(t, a)

	// A session that is not activated holds no place either: f, whose
	// only session is not activated, is the oldest connection without an
	// activated one when the table fills. (Which of g and h fills it
	// depends on when the server counts d's connection gone: f goes
	// either way.)
	waitFor(t, "only a connected", func() bool { return srv.Diagnostics().CurrentSessionCount == before })
	f := openChannel(t, url)
	if _, err := f.CreateSession("not activated yet"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	openChannel(t, url) // g
	clk.Add(time.Second)
	openChannel(t, url) // h
	if !closedByServer(f) {
		t.Fatal("f, whose only session was not activated, was not closed for a new connection")
	}
	readState(t, a)
}

// TestAcceptPacing: connections are accepted at AcceptRate, a second's
// worth at once: at 100 a second, the first 100 of a burst wait not at
// all, the next ones 10 ms each more, and after a quiet second the budget
// is whole again.
func TestAcceptPacing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var paid time.Time
	var wait time.Duration
	for i := range 100 {
		if paid, wait = server.Pace(paid, t0, 100); wait != 0 {
			t.Fatalf("connection %d of a burst waits %v, want 0 within the first second's worth", i, wait)
		}
	}
	for i := 1; i <= 5; i++ {
		if paid, wait = server.Pace(paid, t0, 100); wait != time.Duration(i)*10*time.Millisecond {
			t.Fatalf("connection %d over the burst waits %v, want %v", 100+i, wait, time.Duration(i)*10*time.Millisecond)
		}
	}
	if _, wait = server.Pace(paid, t0.Add(3*time.Second), 100); wait != 0 {
		t.Fatalf("after a quiet while a connection waits %v", wait)
	}
}

// createSubOver creates a subscription over c.
func createSubOver(t *testing.T, c *uaclient.Client) uint32 {
	t.Helper()
	var cs ua.CreateSubscriptionResponse
	if err := c.Call(&ua.CreateSubscriptionRequest{RequestHeader: c.Header(), RequestedPublishingInterval: 100,
		RequestedLifetimeCount: 3000, RequestedMaxKeepAliveCount: 10, PublishingEnabled: true}, &cs); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	return cs.SubscriptionID
}

// createItemsOver creates n items on the server's CurrentTime in
// subscription sub over c, returning their results.
func createItemsOver(t *testing.T, c *uaclient.Client, sub uint32, n int) []ua.MonitoredItemCreateResult {
	t.Helper()
	req := ua.CreateMonitoredItemsRequest{RequestHeader: c.Header(), SubscriptionID: sub}
	for i := range n {
		req.ItemsToCreate = append(req.ItemsToCreate, ua.MonitoredItemCreateRequest{
			ItemToMonitor:       ua.ReadValueID{NodeID: ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime), AttributeID: uint32(ua.AttributeIDValue)},
			MonitoringMode:      ua.MonitoringModeReporting,
			RequestedParameters: ua.MonitoringParameters{ClientHandle: uint32(i), SamplingInterval: 100, QueueSize: 1},
		})
	}
	var resp ua.CreateMonitoredItemsResponse
	if err := c.Call(&req, &resp); err != nil {
		t.Fatalf("CreateMonitoredItems: %v", err)
	}
	return resp.Results
}

// TestGoneClientsGiveWay: the subscriptions of a session whose client is
// gone (its connection dropped, no other channel took the session over)
// keep their places in the server-wide limits only until a present
// client needs them: then they are deleted, so that clients that
// disconnect cannot lock the others out for their session timeout.
func TestGoneClientsGiveWay(t *testing.T) {
	srv, url := startServer(t, server.Config{Subscriptions: server.SubscriptionLimits{MaxMonitoredItems: 4}})
	addr := url[len("opc.tcp://"):]
	gone, err := uaclient.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range createItemsOver(t, gone, createSubOver(t, gone), 4) {
		if r.StatusCode != status.Good {
			t.Fatalf("the first client's item: %v", r.StatusCode)
		}
	}
	here, err := uaclient.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer here.Conn().Close()
	sub := createSubOver(t, here)
	if r := createItemsOver(t, here, sub, 1); r[0].StatusCode != status.BadTooManyMonitoredItems {
		t.Fatalf("with every item taken by a connected client: %v, want Bad_TooManyMonitoredItems", r[0].StatusCode)
	}
	gone.Conn().Close() // no CloseSession: the session stays for its timeout
	waitFor(t, "the dropped client's items given to the present one", func() bool {
		time.Sleep(10 * time.Millisecond)
		return createItemsOver(t, here, sub, 1)[0].StatusCode == status.Good
	})
	if n := srv.Diagnostics().CurrentSessionCount; n != 2 {
		t.Errorf("%d sessions, want the dropped client's still there (its timeout has not passed) and ours", n)
	}
}
