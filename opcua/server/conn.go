package server

import (
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/history"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// channel is what a connection needs of its secure channel; *uasc.Channel
// is one, and tests drive a connection with a fake.
type channel interface {
	ID() uint32
	ReadRequest() (uasc.Request, error)
	Buffered() bool
	WriteResponse(requestID uint32, msg []byte) error
	QueueResponse(requestID uint32, msg []byte) error
	PostResponse(requestID uint32, msg []byte) error
	Close(status ua.StatusCode, reason string) error
	SetMessageLimit(n uint32)
	TrimSendBuffers()
	SecurityPolicyURI() string
	SecurityMode() ua.MessageSecurityMode
	PeerCertificate() []byte
	ChannelThumbprint() []byte
	ReadWaits() uint64
}

var _ channel = (*uasc.Channel)(nil)

// polledChannel is what the poller needs of a channel besides (see
// uasc's poll.go); *uasc.Channel on a TCP socket is one.
type polledChannel interface {
	channel
	Idle() bool
	Flush() error
	ReadAvailable() (int, error)
	Drained() bool
	NextSimple() bool
	TryReadRequest() (uasc.Request, bool, error)
	WriteRoom(fresh bool) int
	Partial() bool
	Control(f func(fd uintptr)) error
	Closed() bool
	IdleDeadline() time.Time
	LastRead() time.Time
}

var _ polledChannel = (*uasc.Channel)(nil)

// conn is the state of one connection: its channel, and the values reused
// from one request to the next (requests, responses, decoder, encode
// buffer, per-request scratch). Only the connection's goroutine touches it.
type conn struct {
	histVals []history.Value // a HistoryRead's values, reused
	histHeld []*histData     // the HistoryData of the response being made (historyread.go)
	srv      *Server
	ch       channel
	remote   string // the client's IP address, for the login backoff

	d      ua.Decoder
	typeID ua.NodeID
	out    []byte
	trim   bool      // the last response was a session service's: see handle
	now    time.Time // the time of the request being handled, see handle
	// received is the uasc.Request.Received of the request being
	// handled; requests the channel took at or before staleUpTo are
	// stamped with a fresh reading of the clock, as the connection waited
	// or changed goroutines since.
	received, staleUpTo time.Time
	sess                *session // the session of the previous request, to skip the table lookup
	reqID               uint32   // the secure channel request id of the request being handled

	batch   int       // responses queued in the current batch
	yielded time.Time // when the goroutine last yielded (see answer)
	waits   uint64    // the channel's ReadWaits then

	vals []serviceValues // reused request and response values by service index, see values
	sf   ua.ServiceFault // the reused ServiceFault, see fault
	scr  scratch         // per-service scratch values, see attribute.go and view.go

	async atomic.Int32 // requests being answered by goroutines (later)

	nc        net.Conn      // the connection, closed by end
	onEnd     func()        // called by end, last; nil: nothing
	readFirst bool          // serve reads before it offers c to the poller again
	stay      int           // times serve keeps c although between requests, see pipelineStay
	poll      *poller       // the server's, nil when this channel is not polled
	pch       polledChannel // ch, when poll is set
	ps        pollState     // the poller's, see poller
}

// maxAsync bounds the requests of one connection that are answered by
// goroutines of their own (Writes waiting for devices, Calls); beyond it
// a connection waits for the next one inline, as it would without them,
// which bounds the goroutines and memory a client can tie up.
const maxAsync = 32

// reserveAsync reserves a place for a request answered later (see later)
// and reports whether there was one (fewer than maxAsync in progress).
func (c *conn) reserveAsync() bool {
	if c.async.Load() >= maxAsync {
		return false // only this goroutine adds: no race past the bound
	}
	c.async.Add(1)
	return true
}

// later answers the request being handled from a goroutine, after
// reserveAsync: the goroutine runs answer, which must use none of the
// connection's reused values (c.vals, c.scr, c.out, the decoder:
// the next request overwrites them), encodes the response into a buffer
// of its own and writes it. The handler then returns errAsync. Responses
// may thus leave out of request order; clients match them by request id.
// The goroutine is one Shutdown waits for; when the server is shutting
// down already, answer runs inline.
func (c *conn) later(answer func() ua.Body) {
	reqID := c.reqID
	run := func() {
		defer c.async.Add(-1)
		msg := ua.AppendMessage(nil, answer())
		// A dead channel is the connection goroutine's business.
		c.ch.WriteResponse(reqID, msg)
	}
	if !c.srv.goTracked(run) {
		run()
	}
}

func newConn(s *Server, ch channel) *conn {
	c := &conn{srv: s, ch: ch, out: make([]byte, 0, 4096), vals: make([]serviceValues, len(services))}
	c.d.Limits = s.limits
	return c
}

// errPolled is serve's when it handed the connection to the poller.
var errPolled = errors.New("server: connection handed to the poller")

// run serves the connection on its goroutine until it ends, or until the
// poller takes it, between requests.
func (c *conn) run() {
	if err := c.serve(); err != errPolled {
		c.end(err)
	}
}

// end ends the connection: its channel and what the server keeps of it.
func (c *conn) end(err error) {
	s := c.srv
	if err != nil {
		s.cfg.Logger.Debug("connection ended", "remote", c.nc.RemoteAddr(), "channel", c.ch.ID(), "err", err)
	}
	c.ch.Close(status.Good, "")
	// A session never activated belongs to this channel only (§5.6.3).
	s.sessions.closeUnactivated(c.ch.ID())
	s.sessions.detach(c.ch.ID())
	if c.poll != nil {
		c.poll.release(c)
	}
	s.untrack(c.nc)
	c.nc.Close()
	s.nconns.Add(-1)
	if c.onEnd != nil {
		c.onEnd()
	}
}

// serve reads requests from the channel and answers them until the
// channel fails or is closed, or, when the channel is between requests
// and the poller takes it, returns errPolled.
func (c *conn) serve() error {
	for {
		if c.readFirst {
			// The poller met something the read must report (the end
			// of the stream, an error, an expired token).
			c.readFirst = false
		} else if c.poll != nil && c.pch.Idle() && c.stay > 0 {
			c.stay--
		} else if c.poll != nil && c.pch.Idle() {
			if err := c.pch.Flush(); err != nil {
				return err
			}
			if c.poll.add(c) {
				return errPolled // c is the poller's now: touch nothing
			}
		}
		r, err := c.ch.ReadRequest()
		if err != nil {
			if errors.Is(err, uasc.ErrClosed) {
				return nil
			}
			return err
		}
		if err := c.answer(r); err != nil {
			return err
		}
	}
}

// yieldEvery is how long a connection's goroutine may answer requests
// without yielding (see answer).
const yieldEvery = 500 * time.Microsecond

// answer handles r and sends its response. While the channel's receive
// buffer already holds the next request (the client pipelines), the
// response is queued: the responses to a batch of pipelined requests
// leave in one write, with the response to the batch's last request. A
// lone request is answered at once.
//
// Fairness: a client that keeps its pipeline full has its next batch in
// the socket by the time this one is answered, so the connection's
// goroutine never blocks in a read and, on one core, would keep the CPU
// until the scheduler preempts it (10 ms) while the other connections
// wait. So the goroutine yields at the end of every batch of pipelined
// requests, and at the end of a lone request once yieldEvery has passed
// since it last yielded or waited for the connection (ReadWaits): a
// yield costs a few hundred ns, and with a P idle it wakes a thread that
// takes the goroutine while this one goes to sleep, three context
// switches; noise per batch or per 500 µs, but not for a client that
// sends one request at a time, whose requests each find the goroutine
// waiting.
func (c *conn) answer(r uasc.Request) error {
	c.reqID = r.RequestID
	resp := c.handle(r.Message, r.Received)
	if resp == nil {
		// Answered later (Publish, a Write waiting for a device, a Call);
		// responses queued before it leave with the next response or when
		// ReadRequest waits.
		return nil
	}
	last, err := c.respond(r.RequestID, resp)
	if err != nil {
		return err
	}
	if !last {
		c.batch++
		return nil
	}
	if w := c.ch.ReadWaits(); w != c.waits {
		// The goroutine waited for the connection before this request:
		// the others ran meanwhile.
		c.waits, c.yielded = w, c.now
	}
	if c.batch > 0 || c.now.Sub(c.yielded) >= yieldEvery {
		c.batch, c.yielded = 0, c.now
		runtime.Gosched()
	}
	return nil
}

// respond sends the response to request reqID: queued while the next
// request is buffered already, written otherwise (last).
func (c *conn) respond(reqID uint32, resp []byte) (last bool, err error) {
	last = !c.ch.Buffered()
	if last {
		err = c.ch.WriteResponse(reqID, resp)
	} else {
		err = c.ch.QueueResponse(reqID, resp)
	}
	// A response too large for the client was replaced by a ServiceFault;
	// the channel goes on.
	if err == status.BadResponseTooLarge {
		err = nil
	}
	return last, err
}

// step serves c on the poller's goroutine, its socket readable: it reads
// what has come and answers the whole one-chunk requests of plain
// services in it; then it arms c again, or hands it back to a goroutine
// (resume) for anything that may wait.
func (c *conn) step() {
	if _, err := c.pch.ReadAvailable(); err != nil {
		c.readFirst = true // its ReadRequest meets the error again
		c.resume(nil)
		return
	}
	// The socket's free send buffer less this step's responses: asked
	// once a step, at first from the socket's last answer (no system
	// call while that is ample), then, if it falls short, from the socket.
	room, asked, fresh := 0, false, false
	answered := 0
	for c.pch.NextSimple() {
		r, ok, err := c.pch.TryReadRequest()
		if err != nil {
			c.resume(func() { c.end(err) })
			return
		}
		if !ok {
			break
		}
		if !polledService(r.Message) {
			c.resume(func() {
				if err := c.answer(r); err != nil {
					c.end(err)
				} else {
					c.run()
				}
			})
			return
		}
		c.reqID = r.RequestID
		resp := c.handle(r.Message, r.Received)
		if resp == nil {
			continue // Publish: answered by the subscription manager
		}
		need := len(resp) + respondOverhead
		if !asked {
			room, asked = c.pch.WriteRoom(false), true
		}
		if room < need && !fresh {
			room, fresh = c.pch.WriteRoom(true), true // an ioctl
		}
		if room -= need; room < 0 {
			// The write might wait for the client: not on the poller.
			reqID := r.RequestID
			c.resume(func() {
				if _, err := c.respond(reqID, resp); err != nil {
					c.end(err)
				} else {
					c.run()
				}
			})
			return
		}
		if _, err := c.respond(r.RequestID, resp); err != nil {
			c.resume(func() { c.end(err) })
			return
		}
		answered++
	}
	if answered >= pipelineBatch && c.pch.Idle() {
		// Several requests together: a pipelining client, which its
		// goroutine serves at less cost per request than the poller.
		c.stay = pipelineStay
		c.resume(nil)
		return
	}
	if !c.pch.Idle() {
		if c.pch.Partial() {
			// A pipelining client: its goroutine serves it for a while
			// (pipelineStay), each batch costing no hand-over.
			c.stay = pipelineStay
		}
		c.resume(nil)
		return
	}
	if !c.poll.rearm(c, c.pch.Drained()) {
		c.resume(nil)
	}
}

// pipelineBatch is how many requests answered in one step make a
// connection a pipelining one.
const pipelineBatch = 4

// pipelineStay is how many times a pipelining connection's goroutine
// finds it between requests before it offers it to the poller again.
const pipelineStay = 32

// respondOverhead bounds what a response's chunk headers, padding and
// signature add to it.
const respondOverhead = 1024

// resume hands c from the poller to a goroutine of its own, which runs f
// (nil: run). When the server is shutting down, f runs here.
func (c *conn) resume(f func()) {
	if f == nil {
		f = c.run
	}
	if c.poll != nil {
		c.poll.disarm(c) // its requests wake its goroutine now
	}
	c.stale(c.pch.LastRead()) // the goroutine may start much later
	if !c.srv.goTracked(f) {
		f()
	}
}

// stale makes the requests the channel took at or before t take their
// time from the clock: call it when the connection may have waited (for a
// device, a method, another goroutine) while they were buffered. The
// wait on a full socket inside QueueResponse is not marked: its requests
// keep the time they arrived.
func (c *conn) stale(t time.Time) {
	if t.After(c.staleUpTo) {
		c.staleUpTo = t
	}
}

// polledService reports whether the service of msg (its type id first)
// is one the poller answers: its row never blocks (reads of the address
// space, Publish). The rest (session services, writes to devices, calls,
// subscription changes) is answered on the connection's goroutine.
func polledService(msg []byte) bool {
	// The four-byte NodeId encoding: 0x01, namespace 0, the id.
	if len(msg) < 4 || msg[0] != 0x01 || msg[1] != 0 {
		return false
	}
	svc := serviceByRequest(uint32(binary.LittleEndian.Uint16(msg[2:])))
	return svc != nil && svc.neverBlocks
}

// handle answers one service message (type NodeId and body) and returns
// the encoded response message, valid until the next call, or nil when
// the handler answers later (errAsync): Publish, queued for the
// subscription manager; a Write waiting for a device and a Call, answered
// by a goroutine of their own (see later). received is when the channel
// read the message (uasc.Request.Received): with the default clock it is
// the request's time, one clock reading per read of the connection,
// unless the connection waited since (see stale).
func (c *conn) handle(msg []byte, received time.Time) []byte {
	c.received = received
	if len(c.histHeld) > 0 {
		c.releaseHistData() // a HistoryRead that ended in a fault
	}
	if c.srv.realClock && received.After(c.staleUpTo) {
		c.now = received
	} else {
		c.now = c.srv.clock()
	}
	if cap(c.out) > keepSize || c.trim && cap(c.out) > trimSize {
		if cap(c.out) > keepSize {
			c.srv.stash.put(c.out)
		}
		c.out = make([]byte, 0, trimSize) // the last response was large, or a session service's
	}
	if c.trim {
		c.ch.TrimSendBuffers()
		c.trim = false
	}
	d := &c.d
	d.Reset(msg)
	c.typeID.Decode(d)
	if d.Err() != nil {
		// Not even a type id: nothing to echo.
		return c.fault(0, status.BadDecodingError)
	}
	var svc *service
	if c.typeID.Namespace == 0 && c.typeID.Type == ua.IDNumeric {
		svc = serviceByRequest(c.typeID.Numeric)
	}
	if svc == nil {
		return c.fault(c.peekHandle(), status.BadServiceUnsupported)
	}
	req, resp := c.values(svc)
	if len(msg) > keepSize {
		// A large request: its decoded values are not kept for the next.
		defer c.dropValues(svc)
	}
	if err := c.decodeBody(d, svc, msg); err != nil { // the type id chose req
		code := status.BadDecodingError
		if errors.Is(err, status.BadEncodingLimitsExceeded) {
			code = status.BadEncodingLimitsExceeded // an array beyond the limits, refused at its length
		}
		// The header may have decoded: echo its handle if it did.
		d.Reset(msg)
		c.typeID.Decode(d)
		return c.fault(c.peekHandle(), code)
	}
	h := req.Header()
	var s *session
	if svc.session != noSession {
		var err error
		s, err = c.srv.sessions.lookup(c.sess, h.AuthenticationToken, svc.session, c.ch.ID(), c.now)
		if err != nil {
			c.srv.diag.securityRejectedReqs.Add(1)
			return c.fault(h.RequestHandle, statusOf(err))
		}
		c.sess = s
	}
	*resp.Header() = ua.ResponseHeader{Timestamp: c.now, RequestHandle: h.RequestHandle, ServiceResult: status.Good}
	if svc.session != activatedSession {
		// Discovery and the session services: signatures, decryption,
		// password hashes, milliseconds of work.
		defer c.srv.cfg.Runtime.heavyWork()()
	}
	err := svc.handle(c, s, req, resp)
	if err == errAsync {
		return nil
	}
	if err != nil {
		return c.fault(h.RequestHandle, statusOf(err))
	}
	if len(c.histHeld) > 0 {
		if n := c.histSize() + trimSize; n > keepSize && cap(c.out) < n {
			c.out = c.srv.stash.get(n)
		}
		c.out = ua.AppendMessage(c.out[:0], resp)
		c.releaseHistData()
	} else {
		c.out = ua.AppendMessage(c.out[:0], resp)
	}
	if len(c.out) > keepSize || svc.session != activatedSession || svc.setup {
		// Encoded already: the values are no longer needed. Those of
		// discovery and the session services (certificates, endpoints)
		// are not kept, nor their buffers' size: they come once a session.
		// Nor those of the services that set subscriptions up: they come
		// once an item, and a SCADA's thousand items would hold their
		// decoded request and results for the life of the connection.
		c.dropValues(svc)
		c.trim = svc.session != activatedSession
	}
	return c.out
}

// trimSize is the encode buffer a connection starts again with after a
// large response or one of a session service.
const trimSize = 4 << 10

// keepSize is the largest request or response whose reused values (and
// encode buffer) a connection keeps for the next request; a larger one's
// are released, so that one large request does not hold its memory for
// the life of the connection.
const keepSize = 64 << 10

// dropValues releases the connection's reused values of svc.
func (c *conn) dropValues(svc *service) { c.vals[svc.index] = serviceValues{} }

// peekHandle decodes the RequestHeader that follows the type id (every
// request starts with one) for its RequestHandle, 0 if it is malformed.
func (c *conn) peekHandle() uint32 {
	var h ua.RequestHeader
	h.Decode(&c.d)
	if c.d.Err() != nil {
		return 0
	}
	return h.RequestHandle
}

// fault encodes a ServiceFault with status for the request with handle.
func (c *conn) fault(handle uint32, status ua.StatusCode) []byte {
	c.srv.diag.rejectedRequests.Add(1)
	f := &c.sf
	f.ResponseHeader = ua.ResponseHeader{Timestamp: c.now, RequestHandle: handle, ServiceResult: status}
	c.out = ua.AppendMessage(c.out[:0], f)
	return c.out
}

// statusOf returns the StatusCode in err, Bad_InternalError if it has none.
func statusOf(err error) ua.StatusCode {
	var sc ua.StatusCode
	if errors.As(err, &sc) {
		return sc
	}
	return status.BadInternalError
}
