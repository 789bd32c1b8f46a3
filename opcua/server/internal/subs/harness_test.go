package subs

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// The engine's tests run it as the server does, without the server: a
// test server holds an address space (namespace 0, CurrentTime live) and
// the engine; a test connection answers the session services the way the
// server's session table does (create, activate over the same or another
// channel, close, time out) and hands every subscription service to the
// engine, its request and response passed through their encoding as over
// the wire.

// Config configures a test server: the engine's limits (zero fields take
// their defaults, as in the server).
type Config struct {
	Subscriptions Limits
}

// Defaults of the server that the engine's limits take.
const (
	testBaseCycle     = 5 * time.Millisecond
	testNodesPerCall  = 1000
	testSessionTimout = time.Minute
)

type testServer struct {
	cfg      Config
	as       *addrspace.Space
	subs     *Manager
	sessions *testSessions

	done chan struct{}
	wg   sync.WaitGroup
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	cfg.Subscriptions = cfg.Subscriptions.WithDefaults(testBaseCycle, testNodesPerCall)
	s := &testServer{cfg: cfg, as: addrspace.New(), sessions: &testSessions{byToken: map[ua.NodeID]*testSession{}}, done: make(chan struct{})}
	s.as.AddNamespace("urn:edged:test")
	live := s.as.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) {
		dv.Value.SetDateTime(time.Now())
		dv.SourceTimestamp = time.Now()
	}))
	if err := s.as.SetSource(ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime), live, 0); err != nil {
		t.Fatal(err)
	}
	s.subs = New(Deps{Space: s.as, Limits: cfg.Subscriptions, Clock: time.Now, Go: s.goTracked, Done: s.done, Events: events.NewTypes()})
	t.Cleanup(s.shutdown)
	return s
}

// goTracked is Deps.Go: the run loop ends before the test does (it ends
// once done is closed).
func (s *testServer) goTracked(f func()) bool {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

func (s *testServer) shutdown() {
	close(s.done)
	s.wg.Wait()
}

func (s *testServer) AddressSpace() *addrspace.Space { return s.as }

func (s *testServer) SourceChanged(src addrspace.SourceID, changed []uint32) {
	s.subs.SourceChanged(src, changed)
}

// diagCounts are the subscription counters of ServerDiagnosticsSummary.
type diagCounts struct{ CurrentSubscriptionCount, CumulatedSubscriptionCount uint32 }

func (s *testServer) Diagnostics() diagCounts {
	cur, cum := s.subs.Counts()
	return diagCounts{cur, cum}
}

// testSession is a session as the server's session table keeps it.
type testSession struct {
	token     ua.NodeID
	channelID atomic.Uint32
	activated atomic.Bool
	closed    atomic.Bool
	detached  atomic.Bool
	lastUsed  atomic.Int64
}

func (s *testSession) ChannelID() uint32 { return s.channelID.Load() }
func (s *testSession) Closed() bool      { return s.closed.Load() }
func (s *testSession) Detached() bool    { return s.detached.Load() }
func (s *testSession) User() any         { return "anonymous" }

type testSessions struct {
	mu      sync.Mutex
	next    uint32
	byToken map[ua.NodeID]*testSession
}

func (t *testSessions) create(channelID uint32) *testSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	s := &testSession{token: ua.NewNumericNodeID(0, 1000+t.next)}
	s.channelID.Store(channelID)
	s.lastUsed.Store(time.Now().UnixNano())
	t.byToken[s.token] = s
	return s
}

func (t *testSessions) remove(s *testSession) {
	s.closed.Store(true)
	t.mu.Lock()
	delete(t.byToken, s.token)
	t.mu.Unlock()
}

// expire closes the sessions without a request for the session timeout
// at now, as the server's sweeper does, and returns how many.
func (t *testSessions) expire(now time.Time) int {
	t.mu.Lock()
	var dead []*testSession
	for _, s := range t.byToken {
		if now.UnixNano()-s.lastUsed.Load() > int64(testSessionTimout) {
			dead = append(dead, s)
		}
	}
	t.mu.Unlock()
	for _, s := range dead {
		t.remove(s)
	}
	return len(dead)
}

// lookup finds the session of token as the server's session table does
// for a service that needs an activated session (activated: true) or
// any session of the token.
func (t *testSessions) lookup(token ua.NodeID, activated bool, channelID uint32) (*testSession, error) {
	t.mu.Lock()
	s := t.byToken[token]
	t.mu.Unlock()
	switch {
	case s == nil || s.closed.Load():
		return nil, status.BadSessionIDInvalid
	case activated && !s.activated.Load():
		return nil, status.BadSessionNotActivated
	case activated && s.channelID.Load() != channelID:
		return nil, status.BadSecureChannelIDInvalid
	}
	s.lastUsed.Store(time.Now().UnixNano())
	return s, nil
}

// fakeChannel records the responses posted to it.
type fakeChannel = subtest.Channel

// conn is a connection of a test server over a channel.
type conn struct {
	s     *testServer
	ch    Channel
	reqID uint32
}

func newConn(s *testServer, ch Channel) *conn { return &conn{s: s, ch: ch} }

// testConn is a client of a test server over a connection.
type testConn struct {
	t      testing.TB
	c      *conn
	handle uint32
	token  ua.NodeID
}

func newTestConn(t testing.TB, s *testServer, channelID uint32) *testConn {
	return &testConn{t: t, c: newConn(s, &fakeChannel{Num: channelID})}
}

// call sends req (its header's handle and token set by call) and returns
// the decoded response: the service's response or a *ua.ServiceFault;
// nil for a Publish the engine queued.
func (tc *testConn) call(req ua.Body) ua.Body {
	tc.t.Helper()
	r, ok := req.(ua.Request)
	if !ok {
		tc.t.Fatalf("%T is no request", req)
	}
	tc.handle++
	h := r.Header()
	h.RequestHandle, h.AuthenticationToken = tc.handle, tc.token
	// Over the wire: the engine gets a decoded copy, never the test's value.
	in, err := ua.DecodeMessage(ua.NewDecoder(ua.AppendMessage(nil, req)))
	if err != nil {
		tc.t.Fatalf("request does not decode: %v", err)
	}
	resp, err := tc.c.answer(in.(ua.Request))
	switch {
	case err == ErrAsync:
		return nil
	case err != nil:
		sc, ok := err.(ua.StatusCode)
		if !ok {
			sc = status.BadInternalError
		}
		resp = &ua.ServiceFault{ResponseHeader: ua.ResponseHeader{Timestamp: time.Now(), RequestHandle: tc.handle, ServiceResult: sc}}
	}
	out, err := ua.DecodeMessage(ua.NewDecoder(ua.AppendMessage(nil, resp)))
	if err != nil {
		tc.t.Fatalf("response does not decode: %v", err)
	}
	return out
}

// answer answers one request as the server's dispatcher does: the session
// check, the response header, the handler.
func (c *conn) answer(req ua.Request) (ua.Response, error) {
	c.reqID++
	h := req.Header()
	ts := c.s.sessions
	switch r := req.(type) {
	case *ua.CreateSessionRequest:
		s := ts.create(c.ch.ID())
		return &ua.CreateSessionResponse{ResponseHeader: header(h), SessionID: s.token, AuthenticationToken: s.token,
			RevisedSessionTimeout: float64(testSessionTimout / time.Millisecond)}, nil
	case *ua.ActivateSessionRequest:
		s, err := ts.lookup(h.AuthenticationToken, false, 0)
		if err != nil {
			return nil, err
		}
		chID := c.ch.ID()
		if !s.activated.Load() && s.channelID.Load() != chID {
			return nil, status.BadSecureChannelIDInvalid
		}
		moved := s.channelID.Swap(chID) != chID
		s.activated.Store(true)
		if moved {
			c.s.subs.SessionMoved(s)
		}
		return &ua.ActivateSessionResponse{ResponseHeader: header(h)}, nil
	case *ua.CloseSessionRequest:
		s, err := ts.lookup(h.AuthenticationToken, false, 0)
		if err != nil {
			return nil, err
		}
		if s.channelID.Load() != c.ch.ID() {
			return nil, status.BadSessionIDInvalid
		}
		ts.remove(s)
		c.s.subs.SessionClosed(s, r.DeleteSubscriptions)
		return &ua.CloseSessionResponse{ResponseHeader: header(h)}, nil
	}
	s, err := ts.lookup(h.AuthenticationToken, true, c.ch.ID())
	if err != nil {
		return nil, err
	}
	m := c.s.subs
	if r, ok := req.(*ua.PublishRequest); ok {
		return nil, m.Publish(s, c.ch, c.reqID, r)
	}
	// The engine's other services, through the rows of the server's
	// service table.
	for _, sv := range Services {
		if sv.Request != req.BinaryEncodingID().Numeric {
			continue
		}
		_, resp := sv.Values()
		*resp.Header() = header(h)
		if err := sv.Handle(m, s, req, resp); err != nil {
			return nil, err
		}
		return resp, nil
	}
	return nil, status.BadServiceUnsupported
}

func header(h *ua.RequestHeader) ua.ResponseHeader {
	return ua.ResponseHeader{Timestamp: time.Now(), RequestHandle: h.RequestHandle, ServiceResult: status.Good}
}

// openSession creates and activates an anonymous session on tc.
func (tc *testConn) openSession() *ua.CreateSessionResponse {
	tc.t.Helper()
	return subtest.OpenSession(tc.t, tc.call, func(tok ua.NodeID) { tc.token = tok })
}

// sendPublish sends a Publish; it returns the immediate answer (a fault),
// nil when the request was queued.
func (tc *testConn) sendPublish(acks ...ua.SubscriptionAcknowledgement) ua.Body {
	tc.t.Helper()
	return tc.call(&ua.PublishRequest{SubscriptionAcknowledgements: acks})
}

// async waits (up to 10 s) for the next response posted by the engine.
func (tc *testConn) async() ua.Body {
	tc.t.Helper()
	return tc.c.ch.(*fakeChannel).Next(tc.t)
}

// The helpers shared with the server's tests.
var (
	item   = subtest.Item
	values = subtest.Values
)
