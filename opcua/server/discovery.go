package server

import (
	"strings"

	"github.com/edged/edged/opcua/ua"
)

// findServers answers FindServers (OPC 10000-4 §5.4.2): our own
// ApplicationDescription, unless ServerUris names other servers only.
// EndpointUrl and LocaleIds do not change the answer (there is one
// locale-neutral name).
func (c *conn) findServers(_ *session, req *ua.FindServersRequest, resp *ua.FindServersResponse) error {
	resp.Servers = resp.Servers[:0]
	if len(req.ServerURIs) == 0 || contains(req.ServerURIs, c.srv.app.ApplicationURI) {
		resp.Servers = append(resp.Servers, c.srv.app)
	}
	return nil
}

// getEndpoints answers GetEndpoints (§5.4.4): the one endpoint, unless
// ProfileUris names other transport profiles only. The endpoint URL is
// always ours: a client that reached us by another host name (a NAT, an
// IP address) gets our configured URL, the "suitable default" of §5.4.4.2.
func (c *conn) getEndpoints(_ *session, req *ua.GetEndpointsRequest, resp *ua.GetEndpointsResponse) error {
	resp.Endpoints = resp.Endpoints[:0]
	for _, e := range c.srv.endpointList() {
		if len(req.ProfileURIs) == 0 || matchesProfile(req.ProfileURIs, e.TransportProfileURI) {
			resp.Endpoints = append(resp.Endpoints, e)
		}
	}
	return nil
}

// matchesProfile reports whether uris holds profile; a query string
// appended to a URI (§5.4.4.2) is ignored.
func matchesProfile(uris []string, profile string) bool {
	for _, u := range uris {
		if i := strings.IndexByte(u, '?'); i >= 0 {
			u = u[:i]
		}
		if u == profile {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
