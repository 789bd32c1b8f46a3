package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/server/internal/subs"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Server is an OPC UA server. Create it with New, then call Serve (or
// ListenAndServe) and finally Shutdown.
type Server struct {
	hist       histories
	stash      stash // large buffers of HistoryRead responses (stash.go)
	cfg        Config
	clock      func() time.Time
	realClock  bool // clock is time.Now: a request's time is when its channel took it
	limits     ua.Limits
	diag       diagnostics
	sessions   *sessionTable
	space      space
	as         *addrspace.Space
	ns         uint16    // index of the application namespace
	gateway    ua.NodeID // the Gateway folder
	app        ua.ApplicationDescription
	endpoints  []ua.EndpointDescription
	startTime  time.Time
	nextCh     atomic.Uint32
	subs       *subs.Manager              // the subscription engine
	events     *events.Types              // the event types event filters know
	auditLimit auditLimiter               // paces failure audit events
	evHist     atomic.Pointer[EventStore] // event history (SetEventHistory)
	evPaths    *eventPaths                // its records' field names, set before evHist
	evBufMu    sync.Mutex                 // keepEvent's buffer
	evBuf      []byte
	backoff    backoff    // of failed logins, per client address
	trust      trustFiles // the open handles of ServerConfiguration's TrustList
	userTrust  trustFiles // those of the DefaultUserTokenGroup's TrustList

	// Shutdown state, read by the Server object's variables.
	state          atomic.Int32 // ua.ServerState
	shutdownAt     atomic.Int64 // UnixNano when connections close, 0 if not shutting down
	shutdownReason atomic.Pointer[string]

	ctx    context.Context // cancelled when Shutdown closes the connections
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]*connEntry // see connEntry
	closing   bool
	nconns    atomic.Int32 // connections being served, against MaxConnections
	rejecting atomic.Int32 // goroutines answering connections over the limit

	revMu     sync.Mutex
	reverse   []*reverseTarget // SetReverseConnect
	wg        sync.WaitGroup
	sweeper   sync.Once
	sweepDone chan struct{}
	pollr     atomic.Pointer[poller] // see startPoller
	pollOnce  sync.Once
}

// poller is the server's poller, nil if none.
func (s *Server) poller() *poller { return s.pollr.Load() }

// startPoller starts the poller, if Config.Poller asks for it and
// ReadSpin does not forbid it, at the first connection it can serve (a
// TCP socket), and returns it (nil: none).
func (s *Server) startPoller() *poller {
	s.pollOnce.Do(func() {
		if s.cfg.Poller && s.cfg.Channel.ReadSpin == 0 {
			if p := newPoller(s); p != nil {
				s.pollr.Store(p)
			}
		}
	})
	return s.poller()
}

// New returns a server configured by cfg (see Config for the defaults).
func New(cfg Config) (*Server, error) {
	realClock := cfg.Clock == nil
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		stash:     newStash(),
		cfg:       cfg,
		clock:     cfg.Clock,
		realClock: realClock,
		limits:    cfg.Channel.Limits,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[net.Conn]*connEntry),
		sweepDone: make(chan struct{}),
		trust:     newTrustFiles(),
		userTrust: newTrustFiles(),
	}
	s.startTime = s.clock()
	s.sessions = newSessionTable(cfg.MaxSessions, cfg.MaxBrowseContinuationPoints, cfg.MaxHistoryContinuationPoints, &s.diag)
	s.app = ua.ApplicationDescription{
		ApplicationURI:  cfg.ApplicationURI,
		ProductURI:      cfg.ProductURI,
		ApplicationName: ua.LocalizedText{Text: cfg.ApplicationName},
		ApplicationType: ua.ApplicationTypeServer,
		DiscoveryURLs:   []string{cfg.EndpointURL},
	}
	s.endpoints = []ua.EndpointDescription{{
		EndpointURL:       cfg.EndpointURL,
		Server:            s.app,
		SecurityMode:      ua.MessageSecurityModeNone,
		SecurityPolicyURI: SecurityPolicyNone,
		UserIdentityTokens: []ua.UserTokenPolicy{{
			PolicyID:  AnonymousPolicyID,
			TokenType: ua.UserTokenTypeAnonymous,
		}},
		TransportProfileURI: TransportProfileUATCP,
		SecurityLevel:       0,
	}}
	s.setupSecurity()
	if cfg.Channel.NextChannelID == nil {
		cfg.Channel.NextChannelID = func() uint32 {
			for {
				if id := s.nextCh.Add(1); id != 0 {
					return id
				}
			}
		}
	}
	s.state.Store(int32(ua.ServerStateRunning))
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.initAddressSpace(); err != nil {
		return nil, err
	}
	return s, nil
}

// URIs of the one endpoint offered.
const (
	SecurityPolicyNone    = "http://opcfoundation.org/UA/SecurityPolicy#None"
	TransportProfileUATCP = "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary"
)

// SourceChanged tells the server that the variables with the handles in
// changed of ValueSource src have new values in the source's current
// snapshot: the binding calls it on every image the scan engine
// publishes, and the monitored items on them sample that image (see
// subs.Manager.SourceChanged). Safe from any goroutine; it does not
// allocate once its buffer has grown.
func (s *Server) SourceChanged(src addrspace.SourceID, changed []uint32) {
	s.subs.SourceChanged(src, changed)
}

// SourceValuesChanged is SourceChanged with values, the handles of
// changed whose value or status changed (not only their source
// timestamp): while no monitored item reports source timestamp changes
// (DataChangeTrigger StatusValueTimestamp), the server looks at those
// only, so that a tag read again with the same value costs the
// subscriptions nothing.
func (s *Server) SourceValuesChanged(src addrspace.SourceID, changed, values []uint32) {
	s.subs.SourceValuesChanged(src, changed, values)
}

// EventTypes are the event types the server's event filters know: those
// of namespace 0, and those a caller adds (before events of them are
// posted).
func (s *Server) EventTypes() *events.Types { return s.events }

// PostEvent hands ev to the event monitored items on the Server object and
// on notifiers (the nodes the event's source reports to), each of which
// queues it if its filter passes it. ev must not change afterwards. Safe
// from any goroutine; it returns once the subscription manager took it.
func (s *Server) PostEvent(ev events.Event, notifiers ...ua.NodeID) {
	notifiers = append(notifiers, ua.NewNumericNodeID(0, id.Server))
	s.keepEvent(ev, notifiers)
	s.subs.PostEvent(ev, notifiers...)
}

// PostedEvent is an event and the notifiers it goes to besides the Server
// object (PostEvents).
type PostedEvent = subs.Posted

// PostEvents is PostEvent for each of evs, handed to the subscriptions at
// once (one hand-over between goroutines for a batch, not one an event).
// evs and their events must not change afterwards.
func (s *Server) PostEvents(evs []PostedEvent) {
	for i := range evs {
		evs[i].Notifiers = append(evs[i].Notifiers, ua.NewNumericNodeID(0, id.Server))
		s.keepEvent(evs[i].Event, evs[i].Notifiers)
	}
	s.subs.PostEvents(evs)
}

// EndpointURL returns the URL the server advertises.
func (s *Server) EndpointURL() string { return s.cfg.EndpointURL }

// Listen listens on the TCP address addr (host:port) for Serve. Its
// connections are plain TCP: Go's listeners offer Multipath TCP by
// default (Go 1.24), and on a kernel that has it every accepted socket is
// an MPTCP socket, which costs time to set up and on every send and
// receive even when the client speaks plain TCP, as OPC UA clients do.
func Listen(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}

// ListenAndServe listens on the TCP port of the endpoint URL on all
// interfaces and serves until ctx is done, then shuts down (waiting up to
// 5 s for connections to close). It returns nil after a shutdown caused by
// ctx, or the error that stopped it.
func (s *Server) ListenAndServe(ctx context.Context) error {
	u, err := url.Parse(s.cfg.EndpointURL)
	if err != nil {
		return err
	}
	ln, err := Listen(net.JoinHostPort("", u.Port()))
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = s.Shutdown(sctx)
	<-errc
	return err
}

// Serve accepts connections on ln and serves each in its own goroutine
// until Shutdown; it then returns ErrServerClosed. Serve closes ln.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	s.sweeper.Do(func() { s.goTracked(s.sweep) })

	var backoff time.Duration
	var paid time.Time // accept pacing: when the connections accepted so far are paid for
	for {
		if s.cfg.AcceptRate > 0 {
			// Clients that connect again and again (each evicted or
			// refused) are taken at AcceptRate, a second's worth ahead
			// at most: the rest wait in the kernel's backlog, costing
			// nothing, and the handshakes cannot take the scan's CPU.
			var wait time.Duration
			if paid, wait = pace(paid, time.Now(), s.cfg.AcceptRate); wait > 0 {
				time.Sleep(wait)
			}
		}
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors, say: back off and go on, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.cfg.Logger.Warn("accept failed", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(!s.cfg.DataEfficient)
		}
		if int(s.nconns.Add(1)) > s.cfg.MaxConnections && !s.evictIdle() {
			s.nconns.Add(-1)
			s.reject(nc, status.BadTcpNotEnoughResources, "too many connections")
			continue
		}
		if !s.goTracked(func() { s.serveConn(nc) }) {
			s.nconns.Add(-1)
			nc.Close()
			return ErrServerClosed
		}
	}
}

// pace accounts for one more connection at now, at rate a second, given
// that those before are paid for until paid; it returns the new paid and
// how long to wait first so as to stay within a second of the rate.
func pace(paid, now time.Time, rate float64) (time.Time, time.Duration) {
	if paid.Before(now) {
		paid = now
	}
	paid = paid.Add(time.Duration(float64(time.Second) / rate))
	return paid, max(0, paid.Sub(now)-time.Second)
}

// goTracked runs f in a goroutine that Shutdown waits for, unless the
// server is shutting down already (it then reports false).
func (s *Server) goTracked(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// serveConn runs the handshake on nc and serves its channel (conn.run,
// which ends it: conn.end).
func (s *Server) serveConn(nc net.Conn) {
	fail := func() {
		nc.Close()
		s.nconns.Add(-1)
	}
	if !s.track(nc, nil) {
		fail()
		return
	}
	release := s.cfg.Runtime.heavyWork() // the handshake's asymmetric cryptography
	ch, err := uasc.Open(s.ctx, nc, s.cfg.Channel)
	release()
	if err != nil {
		s.cfg.Logger.Debug("secure channel handshake failed", "remote", nc.RemoteAddr(), "err", err)
		s.untrack(nc)
		fail()
		return
	}
	if !s.track(nc, ch) {
		ch.Close(status.BadShutdown, "server shutting down")
		s.untrack(nc)
		fail()
		return
	}
	s.serveChannel(nc, ch, nil)
}

// serveChannel serves the channel opened on nc until it ends (conn.run),
// then calls onEnd if not nil.
func (s *Server) serveChannel(nc net.Conn, ch *uasc.Channel, onEnd func()) {
	c := newConn(s, ch)
	c.nc = nc
	c.onEnd = onEnd
	c.remote = nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(c.remote); err == nil {
		c.remote = h
	}
	if ch.Control(func(uintptr) {}) == nil {
		if p := s.startPoller(); p != nil {
			c.poll, c.pch = p, ch
		}
	}
	c.run()
}

// connEntry is a served connection: its channel once the handshake is
// through (nil before), since when it has had no session, and whether it
// is being closed to make room.
type connEntry struct {
	ch        *uasc.Channel
	idleSince time.Time // zero while a session is bound to the channel
	evicted   bool
}

// track records nc (and its channel once open) for Shutdown and for the
// closing of connections without a session; it reports false when the
// server is shutting down.
func (s *Server) track(nc net.Conn, ch *uasc.Channel) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	if e := s.conns[nc]; e != nil {
		e.ch = ch
	} else {
		s.conns[nc] = &connEntry{ch: ch, idleSince: s.clock()}
	}
	return true
}

// idleConns updates which connections have a session at now and returns
// those without one, the oldest first by the time they have had none.
// Called with s.mu held.
func (s *Server) idleConns(now time.Time) []net.Conn {
	bound := s.sessions.channels()
	var idle []net.Conn
	for nc, e := range s.conns {
		if e.ch != nil && bound[e.ch.ID()] {
			e.idleSince = time.Time{}
			continue
		}
		if e.idleSince.IsZero() {
			e.idleSince = now // it just lost its last session
		}
		if !e.evicted {
			idle = append(idle, nc)
		}
	}
	slices.SortFunc(idle, func(a, b net.Conn) int { return s.conns[a].idleSince.Compare(s.conns[b].idleSince) })
	return idle
}

// evict marks the connection nc as being closed to make room and returns
// it with its channel (nil during the handshake). Called with s.mu held;
// the caller closes it, after unlocking, with closeEvicted.
func (s *Server) evict(nc net.Conn) evicted {
	e := s.conns[nc]
	e.evicted = true
	return evicted{nc, e.ch}
}

// evicted is a connection to close from another goroutine than its own.
type evicted struct {
	nc net.Conn
	ch *uasc.Channel
}

// closeEvicted closes the connections of vs (their channels with st and
// reason once open) on a goroutine Shutdown waits for: a channel's Close
// may wait up to CloseTimeout for a client that does not read. Their own
// goroutines then end.
func (s *Server) closeEvicted(vs []evicted, st ua.StatusCode, reason string) {
	closeAll := func() {
		for _, v := range vs {
			if v.ch != nil {
				v.ch.Close(st, reason)
			}
			v.nc.Close()
		}
	}
	if len(vs) > 0 && !s.goTracked(closeAll) {
		closeAll()
	}
}

// evictIdle closes the connection that has had no session the longest,
// to admit a new one when every place is taken (OPC 10000-4 §5.5.2), and
// reports whether there was one.
func (s *Server) evictIdle() bool {
	s.mu.Lock()
	idle := s.idleConns(s.clock())
	if len(idle) == 0 {
		s.mu.Unlock()
		return false
	}
	v := s.evict(idle[0])
	s.mu.Unlock()
	s.cfg.Logger.Info("connection closed to admit a new one: no session", "remote", v.nc.RemoteAddr())
	s.closeEvicted([]evicted{v}, status.BadTcpNotEnoughResources, "closed to admit a new connection: no session")
	return true
}

// closeIdle closes the connections that have had no session for
// NoSessionTimeout at now.
func (s *Server) closeIdle(now time.Time) {
	s.mu.Lock()
	var vs []evicted
	for _, nc := range s.idleConns(now) {
		if now.Sub(s.conns[nc].idleSince) < s.cfg.NoSessionTimeout {
			break
		}
		vs = append(vs, s.evict(nc))
	}
	s.mu.Unlock()
	for _, v := range vs {
		s.cfg.Logger.Info("connection closed: no session", "remote", v.nc.RemoteAddr(), "for", s.cfg.NoSessionTimeout)
	}
	s.closeEvicted(vs, status.BadTimeout, "no session")
}

func (s *Server) untrack(nc net.Conn) {
	s.mu.Lock()
	delete(s.conns, nc)
	s.mu.Unlock()
}

// rejectTimeout bounds how long a rejected connection may take to send
// its Hello; maxRejecting bounds the rejections in progress (each is a
// goroutine with a small stack for at most rejectTimeout).
const (
	rejectTimeout = 2 * time.Second
	maxRejecting  = 512
)

// reject answers a connection the server does not serve: it waits for the
// client's Hello (so that closing does not reset the connection before
// the client has read our answer), sends a UA-TCP Error with status and
// reason, and closes the connection. Under a flood, beyond maxRejecting
// rejections in progress, connections are closed without an answer.
func (s *Server) reject(nc net.Conn, status ua.StatusCode, reason string) {
	if s.rejecting.Add(1) > maxRejecting {
		s.rejecting.Add(-1)
		nc.Close()
		return
	}
	ok := s.goTracked(func() {
		defer s.rejecting.Add(-1)
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(rejectTimeout))
		var hdr [8]byte
		if _, err := io.ReadFull(nc, hdr[:]); err != nil {
			return
		}
		if size := int64(uint32(hdr[4]) | uint32(hdr[5])<<8 | uint32(hdr[6])<<16 | uint32(hdr[7])<<24); string(hdr[:3]) == "HEL" && size > 8 && size <= 8+24+4096 {
			io.CopyN(io.Discard, nc, size-8)
		}
		nc.Write(uasc.AppendError(nil, status, reason))
	})
	if !ok {
		s.rejecting.Add(-1)
		nc.Close()
	}
}

// Shutdown stops the server: it stops accepting connections, sets
// Server/ServerStatus/State to Shutdown with SecondsTillShutdown counting
// down for Config.ShutdownDelay (so that clients can see it coming),
// then closes every connection with a UA-TCP Error of Bad_Shutdown and
// every session, and waits for the connections' goroutines to end. It
// returns ctx's error if ctx ends first (the delay is cut short then).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	already := s.closing
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	s.mu.Unlock()
	if !already {
		reason := "server shutting down"
		s.shutdownReason.Store(&reason)
		s.shutdownAt.Store(s.clock().Add(s.cfg.ShutdownDelay).UnixNano())
		s.state.Store(int32(ua.ServerStateShutdown))
		if s.cfg.ShutdownDelay > 0 {
			t := time.NewTimer(s.cfg.ShutdownDelay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		s.cancel()
		s.mu.Lock()
		for nc, e := range s.conns {
			ch := e.ch
			if ch == nil {
				// Still in its handshake: s.cancel() above ends it, and
				// a handshake that is already through comes back to
				// serveConn, which closes the channel with Bad_Shutdown.
				continue
			}
			ch.Close(status.BadShutdown, reason)
			nc.Close()
		}
		s.mu.Unlock()
		if p := s.poller(); p != nil {
			p.close() // its connections end on goroutines of their own
		}
		close(s.sweepDone)
		s.sessions.closeAll()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// freeOSAfter is how many bytes of released request buffers make the
// sweeper tell Runtime.MemoryReleased.
const freeOSAfter = 8 << 20

// freeOSAfterItems is the number of deleted or created monitored items
// that makes the sweeper tell Runtime.MemoryReleased: some megabytes (the
// items themselves, or the requests that created them).
const freeOSAfterItems = 10000

// sweep closes timed-out sessions and connections without a session, and
// tells Runtime.MemoryReleased of released memory, until Shutdown.
func (s *Server) sweep() {
	every := min(s.cfg.MinSessionTimeout/4, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	returned, removed, created := s.cfg.Channel.Budget.Returned(), s.subs.Removed(), s.subs.Created()
	again := 0 // rounds until the second report; 0: none due
	for {
		select {
		case <-s.sweepDone:
			return
		case <-t.C:
			now := s.clock()
			if n := s.sessions.expire(now); n > 0 {
				s.cfg.Logger.Info("sessions timed out", "count", n)
			}
			s.closeIdle(now)
			if p := s.poller(); p != nil {
				p.reap(now)
			}
			// Tell of memory released: large request buffers since the
			// last round, or many monitored items deleted (a session that
			// held thousands closed) or created (the garbage of their
			// requests and first samples); and once more two rounds later,
			// when what the attackers' connections and goroutines held
			// is garbage too (the collector, whose goal the first
			// collection set, may not run again for long).
			r, d, c := s.cfg.Channel.Budget.Returned(), s.subs.Removed(), s.subs.Created()
			switch {
			case r-returned >= freeOSAfter || d-removed >= freeOSAfterItems || c-created >= freeOSAfterItems:
				returned, removed, created, again = r, d, c, 2
				s.cfg.Runtime.memoryReleased()
			case again > 0:
				if again--; again == 0 {
					s.cfg.Runtime.memoryReleased()
				}
			}
		}
	}
}
