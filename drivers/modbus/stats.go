package modbus

import (
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// State is the state of a link (TCP connection or serial port).
type State int32

// Link states.
const (
	StateDown       State = iota // not connected; waiting for the reconnect back-off
	StateConnecting              // dialling / opening
	StateConnected               // connected (the last transaction may still have failed)
)

func (s State) String() string {
	switch s {
	case StateDown:
		return "down"
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	}
	return "state(?)"
}

// Stats are the counters of one device (unit id on a link) or one link.
// All fields are atomic types, which are 64-bit aligned on 32-bit ARM too,
// so a Stats may be embedded anywhere. Read them with Snapshot.
type Stats struct {
	Requests   atomic.Uint64 // transactions attempted
	Errors     atomic.Uint64 // transactions failed (including timeouts and exceptions)
	Timeouts   atomic.Uint64 // of Errors: no (complete) response in time
	Exceptions atomic.Uint64 // of Errors: Modbus exception responses
	Reconnects atomic.Uint64 // successful connections after the first (links only)
	LastRTT    atomic.Int64  // round-trip time of the last successful transaction, ns
	state      atomic.Int32
	lastErr    atomic.Pointer[string]
}

// StatsSnapshot is a copy of Stats at one moment.
type StatsSnapshot struct {
	Requests, Errors, Timeouts, Exceptions, Reconnects uint64
	LastRTT                                            time.Duration
	State                                              State
	LastError                                          string // "" when none yet
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	out := StatsSnapshot{
		Requests:   s.Requests.Load(),
		Errors:     s.Errors.Load(),
		Timeouts:   s.Timeouts.Load(),
		Exceptions: s.Exceptions.Load(),
		Reconnects: s.Reconnects.Load(),
		LastRTT:    time.Duration(s.LastRTT.Load()),
		State:      State(s.state.Load()),
	}
	if p := s.lastErr.Load(); p != nil {
		out.LastError = *p
	}
	return out
}

func (s *Stats) setState(st State) { s.state.Store(int32(st)) }

// record counts one finished transaction.
func (s *Stats) record(err error, rtt time.Duration) {
	s.Requests.Add(1)
	if err == nil {
		s.LastRTT.Store(int64(rtt))
		return
	}
	s.Errors.Add(1)
	switch st := StatusOf(err); {
	case st == status.BadTimeout:
		s.Timeouts.Add(1)
	}
	var e *Error
	if asError(err, &e) && e.Exception != 0 {
		s.Exceptions.Add(1)
	}
	msg := err.Error()
	s.lastErr.Store(&msg)
}
