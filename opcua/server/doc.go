// Package server is edged's OPC UA server: it accepts UA-TCP connections,
// runs the secure channel handshake through opcua/uasc, and answers the
// services of its service table (services.go: Discovery, Session, View,
// Attribute, Method, MonitoredItem and Subscription sets) over the address
// space of opcua/addrspace. Each connection is one goroutine that reuses
// its request and response values, so the Read path allocates nothing;
// one goroutine, the subscription manager, owns every subscription.
//
//	srv, err := server.New(server.Config{EndpointURL: url})
//	go srv.Serve(ln)
//	srv.SourceValuesChanged(src, changed, values) // from the binding, per image
//	srv.Shutdown(ctx)
//
// How connections, services, sessions and subscriptions work, and why, is
// in docs/server.md.
package server
