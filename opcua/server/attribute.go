package server

import (
	"slices"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// read answers Read (OPC 10000-4 §5.11.2). The request's values all come
// from one image of each value source (one read context per request).
func (c *conn) read(s *session, req *ua.ReadRequest, resp *ua.ReadResponse) error {
	switch {
	case req.MaxAge < 0:
		return status.BadMaxAgeInvalid
	case !req.TimestampsToReturn.IsValid():
		return status.BadTimestampsToReturnInvalid
	}
	if err := ua.CheckOperations(len(req.NodesToRead), c.srv.cfg.Limits.MaxNodesPerRead); err != nil {
		return err
	}
	resp.Results = ua.Resize(resp.Results, len(req.NodesToRead))
	resp.DiagnosticInfos = nil
	c.srv.space.read(&c.scr, s, req, resp.Results, c.now)
	return nil
}

// write answers Write (§5.11.4) with the session user's rights. A write
// to a device variable waits for the device's answer, up to
// Config.WriteTimeout: when an operation went to a device (see
// space.writeStart), the Write is answered later, from a goroutine
// (errAsync), so that the connection goes on serving the client's other
// requests meanwhile; beyond maxAsync such requests in progress on the
// connection, it waits inline. A Write whose operations are all answered
// at once is answered at once, without allocating.
func (c *conn) write(s *session, req *ua.WriteRequest, resp *ua.WriteResponse) error {
	if err := ua.CheckOperations(len(req.NodesToWrite), c.srv.cfg.Limits.MaxNodesPerWrite); err != nil {
		return err
	}
	resp.Results = ua.Resize(resp.Results, len(req.NodesToWrite))
	resp.DiagnosticInfos = nil
	scr := &c.scr
	if !c.srv.space.writeStart(scr, s, req.NodesToWrite, resp.Results) {
		clear(scr.pending)
		c.srv.auditWrites(s, req.NodesToWrite, resp.Results)
		return nil
	}
	timeout := c.srv.cfg.WriteTimeout
	if !c.reserveAsync() {
		awaitWrites(scr.pending, resp.Results, timeout)
		clear(scr.pending)
		c.srv.auditWrites(s, req.NodesToWrite, resp.Results)
		c.stale(c.received)
		return nil
	}
	var audited []ua.WriteValue
	if c.srv.auditing() {
		audited = cloneWrites(req.NodesToWrite)
	}
	// The results and pending slices are the connection's, reused by the
	// next request: the goroutine gets copies.
	pending := slices.Clone(scr.pending)
	clear(scr.pending)
	results := slices.Clone(resp.Results)
	handle := req.RequestHeader.RequestHandle
	c.later(func() ua.Body {
		awaitWrites(pending, results, timeout)
		c.srv.auditWrites(s, audited, results)
		return &ua.WriteResponse{
			ResponseHeader: ua.ResponseHeader{Timestamp: c.srv.clock(), RequestHandle: handle, ServiceResult: status.Good},
			Results:        results,
		}
	})
	return errAsync
}
