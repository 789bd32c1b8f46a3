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

// getEndpoints answers GetEndpoints (§5.4.4): the endpoints, unless
// ProfileUris names other transport profiles only. Their URL has the
// host and port the client used in its EndpointUrl when that is an
// opc.tcp URL (§5.4.4.2): a client that reached the gateway through a
// NAT, by an address from DHCP or by a name the gateway does not know
// connects again where it already did. Otherwise it is our configured
// URL.
func (c *conn) getEndpoints(_ *session, req *ua.GetEndpointsRequest, resp *ua.GetEndpointsResponse) error {
	resp.Endpoints = resp.Endpoints[:0]
	host := clientHost(req.EndpointURL)
	for _, e := range c.srv.endpointList() {
		if len(req.ProfileURIs) == 0 || matchesProfile(req.ProfileURIs, e.TransportProfileURI) {
			if host != "" {
				e.EndpointURL = withHost(e.EndpointURL, host)
			}
			resp.Endpoints = append(resp.Endpoints, e)
		}
	}
	return nil
}

// clientHost returns the host:port of an opc.tcp URL a client sent, ""
// when it is not one (or names no host).
func clientHost(u string) string {
	rest, ok := strings.CutPrefix(u, "opc.tcp://")
	if !ok || len(u) > 4096 {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" || strings.ContainsAny(rest, " @\\") {
		return ""
	}
	return rest
}

// withHost is URL u (ours: opc.tcp://host:port[/path]) with the host and
// port of hostPort.
func withHost(u, hostPort string) string {
	rest := strings.TrimPrefix(u, "opc.tcp://")
	path := ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		path = rest[i:]
	}
	return "opc.tcp://" + hostPort + path
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
