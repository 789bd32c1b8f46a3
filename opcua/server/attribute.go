package server

import (
	"github.com/edged/edged/opcua/ua"
)

// grow returns s with length n, reusing its array (and the values in it)
// when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// checkCount is the service result for a request with n operations and a
// limit: Bad_NothingToDo for none, Bad_TooManyOperations above the limit.
func checkCount(n int, limit uint32) error {
	switch {
	case n == 0:
		return ua.StatusBadNothingToDo
	case uint64(n) > uint64(limit):
		return ua.StatusBadTooManyOperations
	}
	return nil
}

// read answers Read (OPC 10000-4 §5.11.2). The request's values all come
// from one image of each value source (one read context per request).
func (c *conn) read(s *session, h *ua.RequestHeader) (ua.Body, error) {
	req, resp := &c.req.read, &c.resp.read
	switch {
	case req.MaxAge < 0:
		return nil, ua.StatusBadMaxAgeInvalid
	case !validTimestamps(req.TimestampsToReturn):
		return nil, ua.StatusBadTimestampsToReturnInvalid
	}
	if err := checkCount(len(req.NodesToRead), c.srv.cfg.Limits.MaxNodesPerRead); err != nil {
		return nil, err
	}
	c.header(&resp.ResponseHeader, h, ua.StatusGood)
	resp.Results = grow(resp.Results, len(req.NodesToRead))
	resp.DiagnosticInfos = nil
	c.srv.space.read(&c.scr, s, req, resp.Results)
	return resp, nil
}

// write answers Write (§5.11.4) with the session user's rights. A write
// to a device variable waits for the device's answer (see space.write), up
// to Config.WriteTimeout.
func (c *conn) write(s *session, h *ua.RequestHeader) (ua.Body, error) {
	req, resp := &c.req.write, &c.resp.write
	if err := checkCount(len(req.NodesToWrite), c.srv.cfg.Limits.MaxNodesPerWrite); err != nil {
		return nil, err
	}
	c.header(&resp.ResponseHeader, h, ua.StatusGood)
	resp.Results = grow(resp.Results, len(req.NodesToWrite))
	resp.DiagnosticInfos = nil
	c.srv.space.write(&c.scr, s, req.NodesToWrite, resp.Results, c.srv.cfg.WriteTimeout)
	return resp, nil
}

// validTimestamps reports whether ttr is one of the four TimestampsToReturn.
func validTimestamps(ttr ua.TimestampsToReturn) bool {
	return ttr >= ua.TimestampsToReturnSource && ttr <= ua.TimestampsToReturnNeither
}
