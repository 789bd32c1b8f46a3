//go:build !linux

package server

import "time"

// poller needs Linux's epoll; elsewhere every connection has a goroutine.
type poller struct{}

type pollState struct{}

func newPoller(*Server) *poller          { return nil }
func (p *poller) add(*conn) bool         { return false }
func (p *poller) reap(time.Time)         {}
func (p *poller) close()                 {}
func (p *poller) release(*conn)          {}
func (p *poller) rearm(*conn, bool) bool { return false }
func (p *poller) disarm(*conn)           {}
