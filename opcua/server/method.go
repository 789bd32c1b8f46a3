package server

import (
	"context"
	"encoding/hex"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// call answers Call (OPC 10000-4 §5.12.2) with the session user's rights:
// each method's checks and handler are the address space's (see
// addrspace.Space.Call). The methods of one request run one after
// another, all within Config.WriteTimeout (a handler that waits for a
// device gets a context with that deadline, and its answer then is
// Bad_Timeout). As handlers may wait, a Call is answered later, from a
// goroutine (errAsync), with a copy of the request: the connection goes
// on serving the client's other requests meanwhile. Beyond maxAsync
// requests in progress on the connection, the Call runs inline, blocking
// only this connection's goroutine. Either way the address space is never
// blocked.
func (c *conn) call(s *session, req *ua.CallRequest, resp *ua.CallResponse) error {
	if err := ua.CheckOperations(len(req.MethodsToCall), c.srv.cfg.Limits.MaxNodesPerMethodCall); err != nil {
		return err
	}
	if c.reserveAsync() {
		if methods, ok := c.cloneCalls(req.MethodsToCall); ok {
			handle := req.RequestHeader.RequestHandle
			c.later(func() ua.Body {
				r := &ua.CallResponse{Results: make([]ua.CallMethodResult, len(methods))}
				callMethods(c.srv, s, methods, r.Results)
				r.ResponseHeader = ua.ResponseHeader{Timestamp: c.srv.clock(), RequestHandle: handle, ServiceResult: status.Good}
				return r
			})
			return errAsync
		}
		c.async.Add(-1)
	}
	resp.Results = ua.Resize(resp.Results, len(req.MethodsToCall))
	resp.DiagnosticInfos = nil
	callMethods(c.srv, s, req.MethodsToCall, resp.Results)
	c.stale(c.received)
	return nil
}

// callMethods runs the methods for session s into out (one result each).
// It uses no state of the connection: it runs on a goroutine of its own
// for an asynchronous Call. The handlers' context ends after
// Config.WriteTimeout, or when the server shuts down (Shutdown waits for
// the Calls in progress).
func callMethods(srv *Server, s *session, methods []ua.CallMethodRequest, out []ua.CallMethodResult) {
	ctx, cancel := context.WithTimeout(srv.ctx, srv.cfg.WriteTimeout)
	defer cancel()
	ctx = context.WithValue(ctx, sessionKey{}, s)
	u := s.user()
	for i := range methods {
		srv.as.Call(ctx, &methods[i], u, &out[i])
		if srv.auditing() {
			srv.auditCall(s, &methods[i], &out[i])
		}
	}
}

// cloneCalls returns a deep copy of methods, which the connection's
// decoder reuses for the next request, through their encoding; ok is
// false if it fails to decode (it decoded with the same limits already).
func (c *conn) cloneCalls(methods []ua.CallMethodRequest) ([]ua.CallMethodRequest, bool) {
	b := ua.AppendMessage(nil, &ua.CallRequest{MethodsToCall: methods})
	d := ua.NewDecoder(b)
	d.Limits = c.d.Limits
	var cp ua.CallRequest
	if err := ua.DecodeMessageInto(d, &cp); err != nil || len(cp.MethodsToCall) != len(methods) {
		return nil, false
	}
	return cp.MethodsToCall, true
}

// sessionKey is the context key of the calling session in a method
// handler's context (see sessionFrom).
type sessionKey struct{}

// sessionFrom returns the session whose Call runs the method handler with
// ctx, nil outside a Call of this server (the methods of the Server
// object, such as GetMonitoredItems, act on the caller's subscriptions).
func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// Caller is who calls a method, as a handler added with AddMethod sees
// it through CallerFrom.
type Caller struct {
	SessionID ua.NodeID
	UserName  string // "" for the anonymous user
	Roles     Roles
	Mode      ua.MessageSecurityMode // of the channel the session was last activated over
	// ClientThumbprint is the hex SHA-1 of the client application's
	// certificate, "" without one.
	ClientThumbprint string
	// Closed reports whether the session has ended since.
	Closed func() bool
}

// CallerFrom returns the caller of the method handler that runs with
// ctx; false outside a Call of this server.
func CallerFrom(ctx context.Context) (Caller, bool) {
	s := sessionFrom(ctx)
	if s == nil {
		return Caller{}, false
	}
	s.mu.Lock()
	c := Caller{SessionID: s.id, Roles: Roles(s.roles.Load()), Mode: ua.MessageSecurityMode(s.mode.Load()), Closed: s.closed.Load}
	if !s.identity.Anonymous {
		c.UserName = s.identity.UserName
	}
	if len(s.clientCert) > 0 {
		c.ClientThumbprint = hex.EncodeToString(secpol.Thumbprint(s.clientCert))
	}
	s.mu.Unlock()
	return c, true
}
