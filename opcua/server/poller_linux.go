package server

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller serves the connections that are between requests from one
// goroutine: an epoll set of their sockets, which the goroutine waits for
// through Go's network poller (the epoll descriptor is itself readable
// when a socket in it is). When it wakes, it reads and answers the
// requests of every ready connection in the same pass, with raw system
// calls, as a C server's event loop does: one wake-up of one thread for a
// batch of requests on idle sockets, where a goroutine per connection
// costs a goroutine hand-off and, with an idle P, a thread wake-up for
// each. A connection goes back to a goroutine of its own (conn.run)
// whenever its next step may wait: a request that is not a plain read of
// the address space (session services, writes to devices, calls), a
// partial or multi-chunk message, a response larger than its socket's
// free send buffer, an error or the end of the stream. See
// docs/performance.md, "One wake-up per batch".
type poller struct {
	srv  *Server
	epfd int
	f    *os.File // epfd, in Go's poller
	rc   syscall.RawConn

	mu     sync.Mutex
	slots  []*conn // by slot: a connection's place while it is served
	free   []uint32
	closed bool

	events [64]unix.EpollEvent
	serve  func(fd uintptr) bool
}

// pollState is a connection's part in the poller, guarded by poller.mu
// but ctl, which the owner of the connection runs.
//
// A socket stays in the epoll set, edge-triggered, while the poller
// serves it: after a read that left nothing in the socket, the next
// request's arrival is an event, so the poller re-arms it without a
// system call (rearm). Handed to its goroutine, it is disarmed (no
// EPOLLIN: a pipelining client's batches wake the goroutine only);
// given back, it is modified to EPOLLIN again, which reports it at once
// if it has data.
type pollState struct {
	slot    uint32 // in poller.slots, +1; 0: none yet
	gen     uint32 // of the current registration, in the event's data
	armed   bool   // the poller's, waiting
	inEpoll bool   // added once: later changes modify
	reading bool   // the registration has EPOLLIN
	ctl     func(fd uintptr)
	ev      unix.EpollEvent
	op      int
	errno   syscall.Errno
}

// newPoller starts s's poller; nil when the kernel has no epoll.
func newPoller(s *Server) *poller {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil
	}
	p := &poller{srv: s, epfd: fd, f: os.NewFile(uintptr(fd), "epoll")}
	if p.rc, err = p.f.SyscallConn(); err != nil {
		p.f.Close()
		return nil
	}
	p.serve = func(uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), 0, 0, 0)
			if e == syscall.EINTR {
				continue
			}
			if e != 0 {
				return false // wait, as for nothing ready; close ends the read
			}
			for i := range int(n) {
				if c := p.take(&p.events[i]); c != nil {
					c.step()
				}
			}
			if int(n) < len(p.events) {
				// The set held no more: what becomes ready from now on
				// makes it readable, so wait for that without asking.
				return false
			}
		}
	}
	if !s.goTracked(p.loop) {
		p.f.Close()
		return nil
	}
	return p
}

// add puts c, between requests, in the epoll set and reports whether it
// did; c's goroutine then returns and the poller owns c. The epoll_ctl
// runs inside the socket's Control, so the socket cannot be closed (and
// its number taken by another) meanwhile; a closed one fails.
func (p *poller) add(c *conn) bool {
	ps := &c.ps
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if ps.slot == 0 {
		if n := len(p.free); n > 0 {
			ps.slot = p.free[n-1] + 1
			p.free = p.free[:n-1]
		} else {
			p.slots = append(p.slots, nil)
			ps.slot = uint32(len(p.slots))
		}
		p.slots[ps.slot-1] = c
		ps.ctl = func(fd uintptr) {
			_, _, ps.errno = syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(p.epfd), uintptr(ps.op), fd, uintptr(unsafe.Pointer(&ps.ev)), 0, 0)
		}
	}
	ps.gen++
	if !p.register(c, unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLET) {
		return false
	}
	ps.armed, ps.reading = true, true
	return true
}

// register adds c's socket to the epoll set, or modifies it, with
// events, the slot and generation its data; p.mu is held. Modifying a
// registration to EPOLLIN reports the socket at once if it is readable.
func (p *poller) register(c *conn, events uint32) bool {
	ps := &c.ps
	ps.ev = unix.EpollEvent{Events: events}
	ps.ev.Fd, ps.ev.Pad = int32(ps.slot-1), int32(ps.gen) // the event's 64 bits of data
	ps.op = unix.EPOLL_CTL_MOD
	if !ps.inEpoll {
		ps.op = unix.EPOLL_CTL_ADD
	}
	ps.errno = 0
	if err := c.pch.Control(ps.ctl); err != nil || ps.errno != 0 {
		return false
	}
	ps.inEpoll = true
	return true
}

// rearm makes c, which the poller has just served, the poller's again
// and reports whether it did. When its last read left nothing in the
// socket, the edge-triggered registration reports the next request:
// no system call. Otherwise (a read that filled the buffer) it is
// registered anew, which reports the data left in the socket.
func (p *poller) rearm(c *conn, drained bool) bool {
	ps := &c.ps
	p.mu.Lock()
	if drained && ps.reading && !p.closed && ps.slot != 0 {
		ps.armed = true
		p.mu.Unlock()
		return true
	}
	p.mu.Unlock()
	return p.add(c)
}

// disarm takes EPOLLIN from c's registration as the poller hands c to
// its goroutine, so that its requests no longer wake the poller.
func (p *poller) disarm(c *conn) {
	ps := &c.ps
	p.mu.Lock()
	defer p.mu.Unlock()
	ps.armed = false
	if ps.reading && !p.closed {
		ps.gen++
		ps.reading = false
		p.register(c, unix.EPOLLET)
	}
}

// release gives c's slot back, once c has ended.
func (p *poller) release(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := &c.ps; ps.slot != 0 && p.slots[ps.slot-1] == c {
		p.slots[ps.slot-1] = nil
		p.free = append(p.free, ps.slot-1)
		ps.slot, ps.armed = 0, false
	}
}

// take returns the armed connection of an event, disarmed, or nil (an
// event of an arming that reap or close took back).
func (p *poller) take(ev *unix.EpollEvent) *conn {
	slot, gen := uint32(ev.Fd), uint32(ev.Pad)
	p.mu.Lock()
	defer p.mu.Unlock()
	if int(slot) >= len(p.slots) {
		return nil
	}
	c := p.slots[slot]
	if c == nil || !c.ps.armed || c.ps.gen != gen {
		return nil
	}
	c.ps.armed = false
	return c
}

// loop waits for ready connections and serves them, until close. It is
// one read of the epoll set for the poller's whole life: Go resets a
// descriptor's readiness as each read begins, so a read per pass would
// begin each pass with an epoll_pwait that finds nothing. Its function
// serves what is ready and returns false to wait; closing the set (close)
// ends the read.
func (p *poller) loop() {
	p.rc.Read(p.serve)
}

// reap hands back to their goroutines the armed connections that another
// goroutine closed (eviction, a failed asynchronous write: a closed socket
// leaves the epoll set without an event) or whose security token expired
// without a renewal, so that they end as a goroutine's would.
func (p *poller) reap(now time.Time) {
	var out []*conn
	p.mu.Lock()
	for _, c := range p.slots {
		if c != nil && c.ps.armed && (c.pch.Closed() || !now.Before(c.pch.IdleDeadline())) {
			c.ps.armed = false
			out = append(out, c)
		}
	}
	p.mu.Unlock()
	for _, c := range out {
		c.readFirst = true // the read fails, as it would have on its goroutine
		c.resume(nil)
	}
}

// close stops the poller and hands its connections back to goroutines
// (Shutdown has closed their channels: they end).
func (p *poller) close() {
	p.mu.Lock()
	p.closed = true
	var out []*conn
	for _, c := range p.slots {
		if c != nil && c.ps.armed {
			c.ps.armed = false
			out = append(out, c)
		}
	}
	p.mu.Unlock()
	p.f.Close()
	for _, c := range out {
		c.readFirst = true
		c.resume(nil)
	}
}
