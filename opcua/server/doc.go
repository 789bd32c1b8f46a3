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
// response bytes allocates nothing once a connection has warmed up. The
// exceptions are the requests that wait: Publish, which the connection
// hands to the session's queue of Publish requests before it reads on, the
// subscription manager answering it later (see Subscriptions); and a Write
// with operations that went to a device, or a Call, whose handlers may
// wait for one: they are answered by a goroutine of their own with copies
// of what they need, up to 32 per connection (beyond that the connection
// waits inline). Their responses may leave out of request order, which
// OPC UA allows (responses are matched by request id).
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
//
// # Subscriptions
//
// The Subscription and MonitoredItem service sets (subscription.go,
// monitored.go, subsvc.go) are run by one goroutine, the subscription
// manager, which owns every subscription, monitored item and queued
// Publish request; the connections hand it their requests as closures and
// wait, except for Publish, which is queued (at most
// SubscriptionLimits.MaxPublishRequestsPerSession, else
// Bad_TooManyPublishRequests) and answered by the manager with the
// channel's PostResponse, which frames the response and leaves its write
// to the background: a client that stops reading stalls only its own
// channel (until the channel's write timeout kills it; the notifications
// stay in the retransmission queue for Republish), never the manager.
//
// Sampling follows the scan cycle: the binding calls Server.SourceChanged
// with the handles that changed in each image the engine publishes
// (binding.Binding.Notify); the items on those handles that are due are
// sampled in that image (one Read per variable, shared by its items), and
// a subscription that has notifications and is due answers a
// waiting Publish at once. Items are indexed by source and handle, so the
// work per image is proportional to what changed. Items without a source
// (namespace 0, static variables) and items on attributes other than Value
// are sampled on their own interval, from a heap ordered by due time; the
// manager's one timer runs these samples and the publishing cycles
// (keep-alives, lifetimes). Publishing intervals are revised to multiples
// of SubscriptionLimits.MinPublishingInterval (the 5 ms base cycle),
// sampling intervals to multiples of the tag's MinimumSamplingInterval
// (its scan class) or of the base cycle (0 is the fastest, -1 the
// publishing interval, also after ModifySubscription changes it).
//
// A session's subscriptions outlive it unless CloseSession asks for
// DeleteSubscriptions: they expire with their own lifetime or are taken
// over with TransferSubscriptions. Publish requests queued over a channel
// that closed, or that the session left for another one, never carry
// notifications.
//
// Not done yet: sampling a static variable when it is written (it is
// sampled on its interval); deadbands on arrays (compared for equality);
// the MonitoredItem and Subscription diagnostics.
package server
