package server

import (
	"context"

	"github.com/edged/edged/opcua/ua"
)

// call answers Call (OPC 10000-4 §5.12.2) with the session user's rights:
// each method's checks and handler are the address space's (see
// addrspace.Space.Call). The methods of one request run one after
// another, all within Config.WriteTimeout (a handler that waits for a
// device gets a context with that deadline, and its answer then is
// Bad_Timeout). Like a Write, the wait blocks only this connection's
// goroutine, never the address space.
func (c *conn) call(s *session, h *ua.RequestHeader) (ua.Body, error) {
	req, resp := &c.req.call, &c.resp.call
	if err := checkCount(len(req.MethodsToCall), c.srv.cfg.Limits.MaxNodesPerMethodCall); err != nil {
		return nil, err
	}
	c.header(&resp.ResponseHeader, h, ua.StatusGood)
	resp.Results = grow(resp.Results, len(req.MethodsToCall))
	resp.DiagnosticInfos = nil
	ctx, cancel := context.WithTimeout(context.Background(), c.srv.cfg.WriteTimeout)
	defer cancel()
	ctx = context.WithValue(ctx, sessionKey{}, s)
	u := s.user()
	for i := range req.MethodsToCall {
		c.srv.as.Call(ctx, &req.MethodsToCall[i], u, &resp.Results[i])
	}
	return resp, nil
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
