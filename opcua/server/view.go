package server

import (
	"encoding/binary"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// A contPoint is a continuation point held by a session: the id the
// client got and where its Browse or HistoryRead stopped.
type contPoint[T any] struct {
	id    uint64
	state T
}

// contPoints are a session's continuation points of one service, at most
// max of them. Guarded by the session's mu.
type contPoints[T any] struct {
	max  int
	next uint64
	list []contPoint[T]
}

// add stores state and returns its id, or false when all are taken.
func (p *contPoints[T]) add(state T) ([]byte, bool) {
	if len(p.list) >= p.max {
		return nil, false
	}
	p.next++
	p.list = append(p.list, contPoint[T]{id: p.next, state: state})
	return binary.LittleEndian.AppendUint64(make([]byte, 0, 8), p.next), true
}

// take removes the continuation point with the given bytes and returns
// its state; false when there is none.
func (p *contPoints[T]) take(b []byte) (T, bool) {
	var zero T
	if len(b) != 8 {
		return zero, false
	}
	id := binary.LittleEndian.Uint64(b)
	for i, cp := range p.list {
		if cp.id == id {
			p.list = append(p.list[:i], p.list[i+1:]...)
			return cp.state, true
		}
	}
	return zero, false
}

func (p *contPoints[T]) releaseAll() {
	clear(p.list)
	p.list = p.list[:0]
}

// browse answers Browse (§5.9.2). Views are not supported: a non-null
// View is Bad_ViewIdUnknown. A node with more references than
// RequestedMaxReferencesPerNode (0: no limit) gets a continuation point
// for the rest, or Bad_NoContinuationPoints when the session holds
// MaxBrowseContinuationPoints already.
func (c *conn) browse(s *session, req *ua.BrowseRequest, resp *ua.BrowseResponse) error {
	if !req.View.ViewID.IsNull() {
		return status.BadViewIDUnknown
	}
	if err := ua.CheckOperations(len(req.NodesToBrowse), c.srv.cfg.Limits.MaxNodesPerBrowse); err != nil {
		return err
	}
	resp.Results = ua.Resize(resp.Results, len(req.NodesToBrowse))
	resp.DiagnosticInfos = nil
	for i := range req.NodesToBrowse {
		res := &resp.Results[i]
		st := browseState{max: req.RequestedMaxReferencesPerNode}
		res.ContinuationPoint = nil
		more := c.srv.space.browse(&req.NodesToBrowse[i], &st, res)
		c.keep(s, &st, more, res)
	}
	return nil
}

// keep stores st as a continuation point of s if references remain.
func (c *conn) keep(s *session, st *browseState, more bool, res *ua.BrowseResult) {
	if res.StatusCode.IsBad() || !more {
		return
	}
	s.mu.Lock()
	cp, ok := s.cps.add(*st)
	s.mu.Unlock()
	if !ok {
		res.StatusCode = status.BadNoContinuationPoints
		res.References = res.References[:0]
		return
	}
	res.ContinuationPoint = cp
}

// browseNext answers BrowseNext (§5.9.3): continues the browses of the
// continuation points, or releases them. An unknown point is
// Bad_ContinuationPointInvalid.
func (c *conn) browseNext(s *session, req *ua.BrowseNextRequest, resp *ua.BrowseNextResponse) error {
	if err := ua.CheckOperations(len(req.ContinuationPoints), c.srv.cfg.Limits.MaxNodesPerBrowse); err != nil {
		return err
	}
	resp.Results = ua.Resize(resp.Results, len(req.ContinuationPoints))
	resp.DiagnosticInfos = nil
	for i, cp := range req.ContinuationPoints {
		res := &resp.Results[i]
		s.mu.Lock()
		st, ok := s.cps.take(cp)
		s.mu.Unlock()
		if !ok {
			*res = ua.BrowseResult{StatusCode: status.BadContinuationPointInvalid}
			continue
		}
		if req.ReleaseContinuationPoints {
			*res = ua.BrowseResult{StatusCode: status.Good}
			continue
		}
		res.ContinuationPoint = nil
		more := c.srv.space.browseNext(&st, res)
		c.keep(s, &st, more, res)
	}
	return nil
}

// translate answers TranslateBrowsePathsToNodeIds (§5.9.4).
func (c *conn) translate(s *session, req *ua.TranslateBrowsePathsToNodeIDsRequest, resp *ua.TranslateBrowsePathsToNodeIDsResponse) error {
	if err := ua.CheckOperations(len(req.BrowsePaths), c.srv.cfg.Limits.MaxNodesPerTranslateBrowsePathsToNodeIDs); err != nil {
		return err
	}
	resp.Results = ua.Resize(resp.Results, len(req.BrowsePaths))
	resp.DiagnosticInfos = nil
	for i := range req.BrowsePaths {
		c.srv.space.translate(&req.BrowsePaths[i], &resp.Results[i])
	}
	return nil
}

// registerNodes answers RegisterNodes (§5.9.5). Registration is an alias:
// every node id is returned as it is, and a registered id is as fast as
// any other because every lookup is a map access. Unknown ids are not
// checked here (the spec leaves that to the later use of the id).
func (c *conn) registerNodes(_ *session, req *ua.RegisterNodesRequest, resp *ua.RegisterNodesResponse) error {
	if err := ua.CheckOperations(len(req.NodesToRegister), c.srv.cfg.Limits.MaxNodesPerRegisterNodes); err != nil {
		return err
	}
	resp.RegisteredNodeIDs = append(resp.RegisteredNodeIDs[:0], req.NodesToRegister...)
	return nil
}

// unregisterNodes answers UnregisterNodes (§5.9.6): registration being an
// alias, there is nothing to undo.
func (c *conn) unregisterNodes(_ *session, req *ua.UnregisterNodesRequest, resp *ua.UnregisterNodesResponse) error {
	if err := ua.CheckOperations(len(req.NodesToUnregister), c.srv.cfg.Limits.MaxNodesPerRegisterNodes); err != nil {
		return err
	}
	return nil
}
