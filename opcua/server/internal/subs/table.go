package subs

import "github.com/edged/edged/opcua/ua"

// Service is one service of the engine as a row of the server's service
// table: its request's encoding id, its request and response values, the
// handler, and whether it never waits (a poller may answer it). The
// server's table takes these rows; the engine's tests dispatch through
// them too.
type Service struct {
	Request     uint32 // the DefaultBinary encoding id of the request (namespace 0)
	NeverBlocks bool
	Values      func() (ua.Request, ua.Response)
	Handle      func(m *Manager, s Session, req ua.Request, resp ua.Response) error
}

type requestPtr[T any] interface {
	*T
	ua.Request
}

type responsePtr[T any] interface {
	*T
	ua.Response
}

// service builds the row of a handler; the type assertions are to
// concrete types: they neither reflect nor allocate.
func service[Q, P any, PQ requestPtr[Q], PP responsePtr[P]](handle func(m *Manager, s Session, req PQ, resp PP) error) Service {
	return Service{
		Request: PQ(new(Q)).BinaryEncodingID().Numeric,
		Values:  func() (ua.Request, ua.Response) { return PQ(new(Q)), PP(new(P)) },
		Handle: func(m *Manager, s Session, req ua.Request, resp ua.Response) error {
			return handle(m, s, req.(PQ), resp.(PP))
		},
	}
}

// neverBlocks marks a row whose service never waits.
func (s Service) neverBlocks() Service {
	s.NeverBlocks = true
	return s
}

// Services are the engine's services but Publish, which also needs the
// channel that gets its answer (Manager.Publish).
var Services = []Service{
	// MonitoredItem Service Set (OPC 10000-4 §5.12).
	service((*Manager).CreateMonitoredItems),
	service((*Manager).ModifyMonitoredItems),
	service((*Manager).SetMonitoringMode),
	service((*Manager).SetTriggering),
	service((*Manager).DeleteMonitoredItems),
	// Subscription Service Set (§5.13).
	service((*Manager).CreateSubscription),
	service((*Manager).ModifySubscription),
	service((*Manager).SetPublishingMode),
	service((*Manager).Republish).neverBlocks(),
	service((*Manager).TransferSubscriptions),
	service((*Manager).DeleteSubscriptions),
}
