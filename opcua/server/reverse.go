package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// Reverse connect (OPC 10000-6 §7.1.3): the server dials a client that
// listens, sends a ReverseHello, and the client opens its secure channel
// over that socket; from there the connection is served like one the
// server accepted (the same limits, security and roles).
//
// For each target one connection at a time waits for the client's Hello;
// once the client took it, the next is dialled at once (a client opens a
// channel for GetEndpoints and then one for its session), up to the
// target's bound of connections. When a dial or a handshake fails, or a
// connection ends, the next dial waits a back-off that doubles from
// ReverseRetryMin to ReverseRetryMax, with jitter; a client that answers
// the ReverseHello with an Error (Bad_TcpMessageTypeInvalid: it does not
// take reverse connections from this server) is left alone for
// ReverseRefusedWait.
const (
	DefaultReverseMaxConnections = 4
	ReverseRetryMin              = time.Second
	ReverseRetryMax              = 15 * time.Second // UA-.NETStandard's ConnectInterval
	ReverseRefusedWait           = time.Minute      // UA-.NETStandard's RejectTimeout
	reverseDialTimeout           = 10 * time.Second
)

// ReverseTarget is a client that listens for reverse connections.
type ReverseTarget struct {
	// URL is where the client listens: opc.tcp://host:port.
	URL string
	// MaxConnections bounds the connections to it at a time (default
	// DefaultReverseMaxConnections).
	MaxConnections int
}

// ReverseState is what a target's connections do.
type ReverseState struct {
	URL string
	// State: "connecting" (dialling), "waiting" (the ReverseHello sent,
	// waiting for the client's Hello), "full" (MaxConnections served),
	// "retrying" (after a failure), "refused" (the client answered with
	// an Error), "stopped".
	State       string
	Connections int // served, the handshake through
	Opened      uint64
	LastError   string
	RetryAt     time.Time // when the next dial is due, in states retrying and refused
}

// checkReverseURL checks a reverse-connect target's URL.
func checkReverseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "opc.tcp" {
		return fmt.Errorf("%q: not opc.tcp://host:port", raw)
	}
	if u.Hostname() == "" || u.Port() == "" {
		return fmt.Errorf("%q: host and port wanted (opc.tcp://host:port)", raw)
	}
	return nil
}

// reverseTarget is a target's dialling loop and its connections.
type reverseTarget struct {
	s      *Server
	t      ReverseTarget
	addr   string
	ctx    context.Context // cancelled by stop and by Shutdown
	cancel context.CancelFunc
	done   chan struct{}
	ended  chan struct{} // a connection ended (buffered 1)

	mu    sync.Mutex
	st    ReverseState
	conns map[net.Conn]*uasc.Channel
}

// SetReverseConnect makes the server dial targets: new ones start, those
// no longer listed stop and their connections close, the others go on
// (a changed MaxConnections applies to the next dial). It fails without a
// change when a URL is not opc.tcp://host:port or is listed twice.
func (s *Server) SetReverseConnect(targets []ReverseTarget) error {
	seen := map[string]bool{}
	for i, t := range targets {
		if err := checkReverseURL(t.URL); err != nil {
			return fmt.Errorf("reverse connect target %d: %w", i, err)
		}
		if seen[t.URL] {
			return fmt.Errorf("reverse connect target %d: %s listed twice", i, t.URL)
		}
		seen[t.URL] = true
		if t.MaxConnections < 0 {
			return fmt.Errorf("reverse connect target %d: MaxConnections %d", i, t.MaxConnections)
		}
	}
	s.revMu.Lock()
	defer s.revMu.Unlock()
	var stop []*reverseTarget
	keep := s.reverse[:0:0]
	for _, rt := range s.reverse {
		i := slices.IndexFunc(targets, func(t ReverseTarget) bool { return t.URL == rt.t.URL })
		if i < 0 {
			stop = append(stop, rt)
			continue
		}
		rt.mu.Lock()
		rt.t.MaxConnections = targets[i].MaxConnections
		rt.mu.Unlock()
		keep = append(keep, rt)
	}
	for _, t := range targets {
		if slices.ContainsFunc(keep, func(rt *reverseTarget) bool { return rt.t.URL == t.URL }) {
			continue
		}
		rt := s.newReverseTarget(t)
		if !s.goTracked(rt.run) {
			break // shutting down
		}
		keep = append(keep, rt)
	}
	s.reverse = keep
	for _, rt := range stop {
		rt.stop()
	}
	return nil
}

func (s *Server) newReverseTarget(t ReverseTarget) *reverseTarget {
	u, _ := url.Parse(t.URL) // checked
	ctx, cancel := context.WithCancel(s.ctx)
	return &reverseTarget{s: s, t: t, addr: u.Host, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		ended: make(chan struct{}, 1), conns: map[net.Conn]*uasc.Channel{}, st: ReverseState{URL: t.URL, State: "connecting"}}
}

// ReverseStates returns the state of each reverse-connect target, in the
// order they were set.
func (s *Server) ReverseStates() []ReverseState {
	s.revMu.Lock()
	defer s.revMu.Unlock()
	out := make([]ReverseState, 0, len(s.reverse))
	for _, rt := range s.reverse {
		rt.mu.Lock()
		st := rt.st
		st.Connections = len(rt.conns)
		rt.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// stop ends the target's loop and closes its connections; it waits for
// the loop.
func (rt *reverseTarget) stop() {
	rt.cancel()
	<-rt.done
	rt.mu.Lock()
	var vs []evicted
	for nc, ch := range rt.conns {
		vs = append(vs, evicted{nc, ch})
	}
	rt.st.State = "stopped"
	rt.mu.Unlock()
	rt.s.closeEvicted(vs, status.BadShutdown, "the server no longer connects to this client")
}

func (rt *reverseTarget) set(state string, err error, retryAt time.Time) {
	rt.mu.Lock()
	rt.st.State, rt.st.RetryAt = state, retryAt
	if err != nil {
		rt.st.LastError = err.Error()
	}
	rt.mu.Unlock()
}

// run dials the target until it is stopped or the server shuts down.
func (rt *reverseTarget) run() {
	defer close(rt.done)
	ctx := rt.ctx
	var backoff time.Duration
	for ctx.Err() == nil {
		rt.mu.Lock()
		n, limit := len(rt.conns), rt.t.MaxConnections
		rt.mu.Unlock()
		if limit == 0 {
			limit = DefaultReverseMaxConnections
		}
		if n >= limit {
			rt.set("full", nil, time.Time{})
			select {
			case <-rt.ended:
			case <-ctx.Done():
			}
			continue
		}
		rt.set("connecting", nil, time.Time{})
		err := rt.connect(ctx)
		if err == nil {
			backoff = 0
			continue // the client took it: the next one waits for it at once
		}
		if ctx.Err() != nil {
			return
		}
		wait := ReverseRefusedWait
		state := "refused"
		var pe *uasc.PeerError
		if !errors.As(err, &pe) {
			backoff = min(max(2*backoff, ReverseRetryMin), ReverseRetryMax)
			wait, state = jitter(backoff), "retrying"
		}
		rt.s.cfg.Logger.Debug("reverse connect", "target", rt.t.URL, "err", err, "retry_in", wait)
		rt.set(state, err, time.Now().Add(wait))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// jitter is d ± 20 %.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()-0.5)*0.4*float64(d))
}

// connect dials the target, sends the ReverseHello and runs the
// handshake; when it is through, the connection is served on a goroutine
// of its own and connect returns nil.
func (rt *reverseTarget) connect(ctx context.Context) error {
	s := rt.s
	if int(s.nconns.Add(1)) > s.cfg.MaxConnections && !s.evictIdle() {
		s.nconns.Add(-1)
		return errors.New("the server serves its most connections")
	}
	fail := func(nc net.Conn, err error) error {
		if nc != nil {
			nc.Close()
		}
		s.nconns.Add(-1)
		return err
	}
	d := net.Dialer{Timeout: reverseDialTimeout}
	d.SetMultipathTCP(false)
	nc, err := d.DialContext(ctx, "tcp", rt.addr)
	if err != nil {
		return fail(nil, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(!s.cfg.DataEfficient)
	}
	if !s.track(nc, nil) {
		return fail(nc, uasc.ErrClosed)
	}
	rt.set("waiting", nil, time.Time{})
	release := s.cfg.Runtime.heavyWork()
	ch, err := uasc.OpenReverse(ctx, nc, s.cfg.Channel, s.cfg.ApplicationURI, s.cfg.EndpointURL)
	release()
	if err != nil {
		s.untrack(nc)
		return fail(nc, err)
	}
	if !s.track(nc, ch) {
		ch.Close(status.BadShutdown, "server shutting down")
		s.untrack(nc)
		return fail(nc, uasc.ErrClosed)
	}
	rt.mu.Lock()
	rt.conns[nc] = ch
	rt.st.Opened++
	rt.mu.Unlock()
	ok := s.goTracked(func() {
		s.serveChannel(nc, ch, func() {
			rt.mu.Lock()
			delete(rt.conns, nc)
			rt.mu.Unlock()
			select {
			case rt.ended <- struct{}{}:
			default:
			}
		})
	})
	if !ok {
		ch.Close(status.BadShutdown, "server shutting down")
		s.untrack(nc)
		rt.mu.Lock()
		delete(rt.conns, nc)
		rt.mu.Unlock()
		return fail(nc, uasc.ErrClosed)
	}
	return nil
}
