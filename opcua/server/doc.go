// Package server is edged's OPC UA server: it accepts UA-TCP connections,
// runs the secure channel handshake through opcua/uasc, and answers the
// service requests of each channel from a table of services (discovery,
// session, view and attribute service sets) over the address space of
// opcua/addrspace.
//
// # Connections
//
// Serve accepts connections up to Config.MaxConnections; a connection
// beyond the limit is answered with a UA-TCP Error of
// Bad_TcpNotEnoughResources after its Hello and closed. Each accepted
// connection is served by one goroutine that reads a request, handles it
// and writes the response before it reads the next, so a connection's
// request and response values, its decoder and its encode buffer are
// reused from one request to the next: the Read path from request bytes to
// response bytes allocates nothing once a connection has warmed up.
//
// # Services
//
// The service table (services.go) has one row per implemented service:
// the request's and the response's DefaultBinary encoding ids, whether it
// needs an activated session, and its handler. A request of any other
// type is answered with a ServiceFault of Bad_ServiceUnsupported, one that
// cannot be decoded with a ServiceFault of Bad_DecodingError; the
// connection stays open. Broken framing is the secure channel's business:
// uasc answers it with a UA-TCP Error and closes the connection.
//
// # Sessions
//
// CreateSession, ActivateSession and CloseSession manage sessions; every
// service that needs one checks the request's authentication token.
// Sessions are bound to the secure channel that activated them and time
// out after their revised timeout without requests. User identity tokens
// are checked by an Authenticator (AnonymousOnly by default).
package server
