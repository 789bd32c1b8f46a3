package server

import (
	"github.com/edged/edged/opcua/ua"
)

// browseState is a browse in progress: what to browse, how many
// references per call, and where the address space stopped.
type browseState struct {
	desc ua.BrowseDescription
	max  uint32
	pos  int
}

// scratch holds a connection's per-request values for the address space.
type scratch struct{}

// space adapts the address space to the services.
type space struct{}

func (s *Server) initAddressSpace() error { return nil }

func (sp *space) read(scr *scratch, s *session, req *ua.ReadRequest, out []ua.DataValue) {
	for i := range out {
		out[i] = ua.DataValue{Status: ua.StatusBadNodeIDUnknown}
	}
}

func (sp *space) write(scr *scratch, s *session, nodes []ua.WriteValue, out []ua.StatusCode) {
	for i := range out {
		out[i] = ua.StatusBadNodeIDUnknown
	}
}

func (sp *space) browse(st *browseState, res *ua.BrowseResult) (more bool) {
	res.StatusCode = ua.StatusBadNodeIDUnknown
	return false
}

func (sp *space) translate(bp *ua.BrowsePath, res *ua.BrowsePathResult) {
	*res = ua.BrowsePathResult{StatusCode: ua.StatusBadNodeIDUnknown}
}
