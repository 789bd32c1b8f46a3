package server

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// fakeChannel is a secure channel without a network: tests hand its
// connection service messages directly (conn.handle), or queue them for
// conn.serve.
type fakeChannel struct {
	id uint32

	mu     sync.Mutex
	in     [][]byte
	out    [][]byte
	closed ua.StatusCode
}

func (f *fakeChannel) ID() uint32 { return f.id }

func (f *fakeChannel) ReadRequest() (uasc.Request, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.in) == 0 {
		return uasc.Request{}, uasc.ErrClosed
	}
	m := f.in[0]
	f.in = f.in[1:]
	return uasc.Request{RequestID: uint32(len(f.out) + 1), Message: m}, nil
}

func (f *fakeChannel) Buffered() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.in) > 0
}

func (f *fakeChannel) QueueResponse(id uint32, msg []byte) error { return f.WriteResponse(id, msg) }

func (f *fakeChannel) PostResponse(id uint32, msg []byte) error { return f.WriteResponse(id, msg) }

func (f *fakeChannel) WriteResponse(_ uint32, msg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out = append(f.out, append([]byte(nil), msg...))
	return nil
}

func (f *fakeChannel) Close(status ua.StatusCode, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = status
	return nil
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
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
}

func newTestConn(t testing.TB, s *Server, channelID uint32) *testConn {
	return &testConn{t: t, c: newConn(s, &fakeChannel{id: channelID})}
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
	out := tc.c.handle(msg)
	resp, err := ua.DecodeMessage(ua.NewDecoder(out))
	if err != nil {
		tc.t.Fatalf("response does not decode: %v", err)
	}
	return resp
}

// faultOf returns the ServiceResult of a ServiceFault, 0 (Good) if resp
// is no fault.
func faultOf(resp ua.Body) ua.StatusCode {
	if f, ok := resp.(*ua.ServiceFault); ok {
		return f.ResponseHeader.ServiceResult
	}
	return status.Good
}

func wantFault(t testing.TB, resp ua.Body, want ua.StatusCode) {
	t.Helper()
	if got := faultOf(resp); got != want {
		t.Fatalf("got %T with %v, want a ServiceFault %v", resp, got, want)
	}
}

func wantOK[T any](t testing.TB, resp ua.Body) *T {
	t.Helper()
	r, ok := any(resp).(*T)
	if !ok {
		t.Fatalf("got %T (%v), want %T", resp, faultOf(resp), r)
	}
	return r
}

// openSession creates and activates an anonymous session on tc.
func (tc *testConn) openSession() *ua.CreateSessionResponse {
	tc.t.Helper()
	cs := wantOK[ua.CreateSessionResponse](tc.t, tc.call(&ua.CreateSessionRequest{SessionName: "test", RequestedSessionTimeout: 60000}))
	tc.token = cs.AuthenticationToken
	wantOK[ua.ActivateSessionResponse](tc.t, tc.call(anonymousActivate()))
	return cs
}

func anonymousActivate() *ua.ActivateSessionRequest {
	return &ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{
		TypeID:   (&ua.AnonymousIdentityToken{}).BinaryEncodingID(),
		Encoding: ua.ExtensionObjectBinary,
		Body:     &ua.AnonymousIdentityToken{PolicyID: AnonymousPolicyID},
	}}
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
