package server

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
)

// service is one row of the service table, as open62541's
// serviceDescriptions[]: the DefaultBinary encoding ids of the request and
// the response (taken from the types), what the service needs of the
// session, how to make the connection's reused request and response
// values, and the handler. Rows are built by row; conn.handle dispatches.
type service struct {
	name     string
	index    int // in services: the connection's reused values are at this index
	request  uint32
	response uint32
	session  sessionNeed
	// neverBlocks: the service never waits (for a device, a lock held
	// long, the client): the poller answers it on its own goroutine, the
	// others go to the connection's.
	neverBlocks bool
	// setup: the service sets subscriptions or their items up; the
	// connection keeps none of its values for the next request.
	setup bool
	// sameAgain: the handler leaves its request as decoded, so that a
	// request whose bytes are those of the connection's last one but for
	// the RequestHeader's Timestamp and RequestHandle decodes to the
	// values kept (decodeBody).
	sameAgain bool
	values    func() (ua.Request, ua.Response)
	handle    func(c *conn, s *session, req ua.Request, resp ua.Response) error
}

// requestPtr and responsePtr are the constraints of row: a pointer to a
// generated service message.
type requestPtr[T any] interface {
	*T
	ua.Request
}

type responsePtr[T any] interface {
	*T
	ua.Response
}

// row builds the service row of a handler. The handler gets the decoded
// request and the response value, whose ResponseHeader the dispatcher has
// filled already (time, request handle, Good); it fills the rest, or
// returns a ua.StatusCode error, which makes the answer a ServiceFault
// with that code, or errAsync when it answers later. The type assertions
// in the closure are to concrete types: they neither reflect nor allocate.
func row[Q, P any, PQ requestPtr[Q], PP responsePtr[P]](need sessionNeed, handle func(c *conn, s *session, req PQ, resp PP) error) service {
	reqID := PQ(new(Q)).BinaryEncodingID().Numeric
	return service{
		name:     strings.TrimSuffix(id.Name(reqID), "Request_Encoding_DefaultBinary"),
		request:  reqID,
		response: PP(new(P)).BinaryEncodingID().Numeric,
		session:  need,
		values:   func() (ua.Request, ua.Response) { return PQ(new(Q)), PP(new(P)) },
		handle: func(c *conn, s *session, req ua.Request, resp ua.Response) error {
			return handle(c, s, req.(PQ), resp.(PP))
		},
	}
}

// nonBlocking marks a row whose service never waits.
func (s service) nonBlocking() service {
	s.neverBlocks = true
	return s
}

// kept marks a row whose handler never changes its decoded request.
func (s service) kept() service {
	s.sameAgain = true
	return s
}

// subRows are the rows of the subscription engine's services (all but
// Publish), which need an activated session.
func subRows() []service {
	var out []service
	for _, sv := range subs.Services {
		values, handle := sv.Values, sv.Handle
		_, resp := values()
		out = append(out, service{
			name:        strings.TrimSuffix(id.Name(sv.Request), "Request_Encoding_DefaultBinary"),
			request:     sv.Request,
			response:    resp.BinaryEncodingID().Numeric,
			session:     activatedSession,
			neverBlocks: sv.NeverBlocks,
			setup:       true,
			values:      values,
			handle: func(c *conn, s *session, req ua.Request, resp ua.Response) error {
				return handle(c.srv.subs, s, req, resp)
			},
		})
	}
	return out
}

// publish hands the Publish request to the engine with the channel that
// gets its answer (subs.Manager.Publish).
func (c *conn) publish(s *session, req *ua.PublishRequest, _ *ua.PublishResponse) error {
	return c.srv.subs.Publish(s, c.ch, c.reqID, req)
}

// errAsync is returned by a handler whose response is sent later: the
// connection writes nothing for the request.
var errAsync = subs.ErrAsync

// services is the service table: the server's own rows and the
// subscription engine's. Every request type not listed is answered with a
// ServiceFault of Bad_ServiceUnsupported.
var services = append([]service{
	// Discovery Service Set (OPC 10000-4 §5.4).
	row(noSession, (*conn).findServers),
	row(noSession, (*conn).getEndpoints),

	// Session Service Set (§5.7).
	row(noSession, (*conn).createSession),
	row(createdSession, (*conn).activateSession),
	row(createdSession, (*conn).closeSession),
	row(activatedSession, (*conn).cancel),

	// View Service Set (§5.9): reads of the address space, which never
	// wait.
	row(activatedSession, (*conn).browse).nonBlocking(),
	row(activatedSession, (*conn).browseNext).nonBlocking(),
	row(activatedSession, (*conn).translate).nonBlocking(),
	row(activatedSession, (*conn).registerNodes).nonBlocking(),
	row(activatedSession, (*conn).unregisterNodes).nonBlocking(),

	// Attribute Service Set (§5.11): a Write waits for the devices.
	row(activatedSession, (*conn).read).nonBlocking().kept(),
	row(activatedSession, (*conn).write),

	// Method Service Set (§5.12).
	row(activatedSession, (*conn).call),

	// Attribute Service Set, history (§5.10.3, §5.10.5): a read waits
	// for the flash.
	row(activatedSession, (*conn).historyRead),
	row(activatedSession, (*conn).historyUpdate),

	// Subscription Service Set (§5.13): Publish is queued for the
	// engine; the MonitoredItem and other Subscription services are the
	// engine's rows (subRows).
	row(activatedSession, (*conn).publish).nonBlocking(),
}, subRows()...)

// serviceByRequest returns the service whose request has encoding id
// reqID (namespace 0, numeric), or nil.
func serviceByRequest(reqID uint32) *service {
	if i := reqID - serviceBase; i < uint32(len(serviceTable)) {
		return serviceTable[i]
	}
	return nil
}

// serviceTable indexes services by request encoding id less serviceBase,
// the smallest: the ids of the services span a few hundred numbers, so a
// slice costs a few KiB and a lookup no hashing (a map's hashing showed
// in a pipelined Read's profile; docs/performance.md).
var serviceBase, serviceTable = func() (uint32, []*service) {
	lo, hi := services[0].request, services[0].request
	for i := range services {
		lo, hi = min(lo, services[i].request), max(hi, services[i].request)
	}
	t := make([]*service, hi-lo+1)
	for i := range services {
		services[i].index = i
		t[services[i].request-lo] = &services[i]
	}
	return lo, t
}()

// serviceValues are a connection's reused request and response values of
// one service, made at its first request of that service.
type serviceValues struct {
	req  ua.Request
	resp ua.Response
	// For a sameAgain service: body holds the bytes after the type id
	// that req was decoded from, when valid, and tok is the length of
	// their AuthenticationToken; misses counts the requests in a row
	// whose bytes differed, skip the requests left to decode without
	// comparing.
	body         []byte
	tok          int
	valid        bool
	misses, skip uint8
}

// A connection whose requests of a sameAgain service differed sameMisses
// times in a row decodes the next sameSkip without comparing: a client
// that never repeats a request pays for a comparison and a second decode
// of the token in 4 of 64 requests, not in each.
const (
	sameMisses = 4
	sameSkip   = 60
)

// decodeBody decodes the body of msg, whose type id d has read, into the
// connection's values of svc. A SCADA polling the same nodes sends the
// same Read again and again, only the RequestHeader's Timestamp and
// RequestHandle changing: for a sameAgain service a request whose other
// bytes are those of the last one is not decoded beyond those two, the
// values holding the rest still.
func (c *conn) decodeBody(d *ua.Decoder, svc *service, msg []byte) error {
	v := &c.vals[svc.index]
	if !svc.sameAgain || len(msg) > keepSize {
		return ua.DecodeBodyInto(d, v.req)
	}
	if v.skip > 0 {
		v.skip--
		return ua.DecodeBodyInto(d, v.req)
	}
	body := msg[d.Offset():]
	if v.valid {
		if sameBut(body, v.body, v.tok) {
			// The RequestHeader: AuthenticationToken (tok bytes),
			// Timestamp (8), RequestHandle (4), the rest.
			h := v.req.Header()
			h.Timestamp = ua.TimeFromTicks(int64(binary.LittleEndian.Uint64(body[v.tok:])))
			h.RequestHandle = binary.LittleEndian.Uint32(body[v.tok+8:])
			v.misses = 0
			return nil
		}
		if v.misses++; v.misses == sameMisses {
			v.misses, v.skip = 0, sameSkip
		}
	}
	v.valid = false
	h := v.req.Header()
	d.Reset(body)
	h.AuthenticationToken.Decode(d)
	tok := d.Offset()
	d.Reset(body)
	if err := ua.DecodeBodyInto(d, v.req); err != nil {
		return err
	}
	if v.skip == 0 {
		v.body, v.tok, v.valid = append(v.body[:0], body...), tok, true
	}
	return nil
}

// sameBut reports whether the request bytes b are last's but for the 12
// bytes of the Timestamp and RequestHandle after the tok bytes of the
// AuthenticationToken.
func sameBut(b, last []byte, tok int) bool {
	return len(b) == len(last) && len(b) >= tok+12 &&
		bytes.Equal(b[:tok], last[:tok]) && bytes.Equal(b[tok+12:], last[tok+12:])
}

// values returns the connection's reused values of svc.
func (c *conn) values(svc *service) (ua.Request, ua.Response) {
	v := &c.vals[svc.index]
	if v.req == nil {
		v.req, v.resp = svc.values()
	}
	return v.req, v.resp
}
