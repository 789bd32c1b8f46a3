package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/uasc"
)

// fakeChannel is a secure channel without a network: tests hand its
// connection service messages directly (conn.handle), or queue them for
// conn.serve; the responses are recorded (subtest.Channel).
type fakeChannel struct {
	subtest.Channel

	in     [][]byte // under Mu
	closed ua.StatusCode
	// The channel's security, for tests of secure sessions: zero is
	// SecurityPolicy None.
	policy string
	mode   ua.MessageSecurityMode
	peer   []byte
}

func newFakeChannel(id uint32) *fakeChannel { return &fakeChannel{Channel: subtest.Channel{Num: id}} }

func (f *fakeChannel) ReadRequest() (uasc.Request, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if len(f.in) == 0 {
		return uasc.Request{}, uasc.ErrClosed
	}
	m := f.in[0]
	f.in = f.in[1:]
	return uasc.Request{RequestID: uint32(len(f.Out) + 1), Message: m}, nil
}

func (f *fakeChannel) Buffered() bool {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.in) > 0
}

func (f *fakeChannel) SetMessageLimit(uint32) {}
func (f *fakeChannel) SecurityPolicyURI() string {
	if f.policy == "" {
		return uasc.SecurityPolicyURINone
	}
	return f.policy
}
func (f *fakeChannel) PeerCertificate() []byte   { return f.peer }
func (f *fakeChannel) ChannelThumbprint() []byte { return nil }
func (f *fakeChannel) TrimSendBuffers()          {}
func (f *fakeChannel) ReadWaits() uint64         { return 0 }
func (f *fakeChannel) SecurityMode() ua.MessageSecurityMode {
	if f.policy == "" {
		return ua.MessageSecurityModeNone
	}
	return f.mode
}

func (f *fakeChannel) Close(status ua.StatusCode, _ string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.closed = status
	return nil
}

const testURL = "opc.tcp://gw01:4840"

func newTestServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.EndpointURL == "" {
		cfg.EndpointURL = testURL
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testConn is a connection of a test server over a fake channel.
type testConn struct {
	t      testing.TB
	c      *conn
	handle uint32
	token  ua.NodeID
	// received is the uasc.Request.Received raw hands the connection;
	// zero: the connection reads its clock.
	received time.Time
}

func newTestConn(t testing.TB, s *Server, channelID uint32) *testConn {
	return &testConn{t: t, c: newConn(s, newFakeChannel(channelID))}
}

// call sends req (its header's handle and token set by call) and returns
// the decoded response: the service's response or a *ua.ServiceFault.
func (tc *testConn) call(req ua.Body) ua.Body {
	tc.t.Helper()
	tc.handle++
	if h := requestHeader(req); h != nil {
		h.RequestHandle = tc.handle
		h.AuthenticationToken = tc.token
	}
	resp := tc.raw(ua.AppendMessage(nil, req))
	if rh := responseHeader(resp); rh != nil && rh.RequestHandle != tc.handle {
		tc.t.Errorf("RequestHandle %d echoed as %d", tc.handle, rh.RequestHandle)
	}
	return resp
}

// raw hands msg to the connection and decodes the answer.
func (tc *testConn) raw(msg []byte) ua.Body {
	tc.t.Helper()
	out := tc.c.handle(msg, tc.received)
	resp, err := ua.DecodeMessage(ua.NewDecoder(out))
	if err != nil {
		tc.t.Fatalf("response does not decode: %v", err)
	}
	return resp
}

// openSession creates and activates an anonymous session on tc.
func (tc *testConn) openSession() *ua.CreateSessionResponse {
	tc.t.Helper()
	return subtest.OpenSession(tc.t, tc.call, func(tok ua.NodeID) { tc.token = tok })
}

// requestHeader returns the RequestHeader of a request.
func requestHeader(b ua.Body) *ua.RequestHeader { return headerField(b) }

// headerField finds the RequestHeader field of a request.
func headerField(b ua.Body) *ua.RequestHeader {
	v := reflect.ValueOf(b)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("RequestHeader")
	if !f.IsValid() {
		return nil
	}
	h, _ := f.Addr().Interface().(*ua.RequestHeader)
	return h
}

// responseHeader finds the ResponseHeader field of a response.
func responseHeader(b ua.Body) *ua.ResponseHeader {
	v := reflect.ValueOf(b)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("ResponseHeader")
	if !f.IsValid() {
		return nil
	}
	h, _ := f.Addr().Interface().(*ua.ResponseHeader)
	return h
}

// subFixture is a server with the test variables of subtest (ext, slow,
// static) and an activated session on channel 1, for the tests that
// subscribe through the server (the engine's own tests are in
// internal/subs).
type subFixture struct {
	t    *testing.T
	s    *Server
	tc   *testConn
	vars *subtest.Vars
	src  addrspace.SourceID
}

func newSubFixture(t *testing.T, cfg Config) *subFixture {
	f := &subFixture{t: t, s: newTestServer(t, cfg)}
	f.vars = subtest.AddVars(t, f.s.AddressSpace())
	f.src = f.vars.Src
	f.tc = newTestConn(t, f.s, 1)
	f.tc.openSession()
	return f
}

func (f *subFixture) createSub(interval float64, keepAlive, lifetime uint32) uint32 {
	f.t.Helper()
	return subtest.CreateSub(f.t, f.tc.call, interval, keepAlive, lifetime)
}

func (f *subFixture) createItems(sub uint32, items ...ua.MonitoredItemCreateRequest) []ua.MonitoredItemCreateResult {
	f.t.Helper()
	return subtest.CreateItems(f.t, f.tc.call, sub, items...)
}

// async waits (up to 10 s) for the next response written to tc's channel
// after its request: a Publish, a Write waiting for a device, a Call.
func (tc *testConn) async() ua.Body {
	tc.t.Helper()
	return tc.c.ch.(*fakeChannel).Next(tc.t)
}

// The helpers shared with the engine's tests.
var (
	item   = subtest.Item
	values = subtest.Values
)
