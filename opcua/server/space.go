package server

import (
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// browseState is a browse in progress, kept as a continuation point: the
// address space's cursor and the client's RequestedMaxReferencesPerNode.
type browseState struct {
	cursor addrspace.BrowseCursor
	max    uint32
}

// scratch holds a connection's per-request values for the address space:
// the read context (one image per source per request) and the pending
// results of a Write's operations.
type scratch struct {
	rc      addrspace.ReadContext
	pending []addrspace.Pending
}

// space adapts the address space to the services.
type space struct {
	as *addrspace.Space
}

// initAddressSpace creates the address space with namespace 0, the
// Server object and the Gateway folder.
func (s *Server) initAddressSpace() error {
	s.as = addrspace.New()
	s.as.SetClock(s.clock)
	s.space.as = s.as
	s.events = events.NewTypes()
	s.subs = subs.New(subs.Deps{Space: s.as, Limits: s.cfg.Subscriptions, Clock: s.clock, Go: s.goTracked, Done: s.ctx.Done(), Events: s.events, Receives: s.receives})
	return s.initServerObject()
}

// user returns the address space's view of the session's user: the
// rights of its roles (roleUser). It does not allocate.
func (s *session) user() addrspace.User { return userOf(Roles(s.roles.Load())) }

// read reads the operations of req into out with one read context, the
// server timestamp now.
func (sp *space) read(scr *scratch, s *session, req *ua.ReadRequest, out []ua.DataValue, now time.Time) {
	scr.rc.User = s.user()
	scr.rc.Reset()
	scr.rc.SetServerTime(now)
	sp.as.ReadMany(&scr.rc, req.NodesToRead, req.TimestampsToReturn, out)
	scr.rc.Done()
}

// writeStart starts the operations with the session user's rights: out
// gets the result of each operation answered at once, and scr.pending the
// Pending result of each one that went to a device (write-through), nil
// for the others. It reports whether any went to a device; the caller
// then awaits them (awaitWrites) and clears scr.pending. All of a
// request's operations are queued before any is awaited, so ten writes to
// one device take about one cycle, not ten.
func (sp *space) writeStart(scr *scratch, s *session, nodes []ua.WriteValue, out []ua.StatusCode) (waiting bool) {
	u := s.user()
	scr.pending = ua.Resize(scr.pending, len(nodes))
	for i := range nodes {
		out[i], scr.pending[i] = sp.as.WriteStart(&nodes[i], u)
		waiting = waiting || scr.pending[i] != nil
	}
	return waiting
}

// awaitWrites sets out[i] to the result of each pending[i] that is not
// nil, or to Bad_Timeout for those without a result after timeout. The
// wait holds no lock of the address space.
func awaitWrites(pending []addrspace.Pending, out []ua.StatusCode, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	expired := false
	for i, p := range pending {
		if p == nil {
			continue
		}
		if expired {
			select {
			case out[i] = <-p:
			default:
				out[i] = status.BadTimeout
			}
			continue
		}
		select {
		case out[i] = <-p:
		case <-t.C:
			expired = true
			select {
			case out[i] = <-p:
			default:
				out[i] = status.BadTimeout
			}
		}
	}
}

// browse starts the browse of st.desc into res and reports whether
// references remain (st.cursor then continues it).
func (sp *space) browse(d *ua.BrowseDescription, st *browseState, res *ua.BrowseResult) (more bool) {
	sp.as.Browse(d, st.max, res, &st.cursor)
	return st.cursor.More()
}

// browseNext continues st into res.
func (sp *space) browseNext(st *browseState, res *ua.BrowseResult) (more bool) {
	sp.as.BrowseNext(&st.cursor, st.max, res)
	return st.cursor.More()
}

func (sp *space) translate(bp *ua.BrowsePath, res *ua.BrowsePathResult) {
	sp.as.TranslateBrowsePath(bp, res)
}
