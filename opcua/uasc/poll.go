package uasc

import (
	"encoding/binary"
	"errors"
	"syscall"
	"time"
	"unsafe"
)

// What a server needs to serve a channel from a poller of its own: one
// goroutine that waits for many connections at once and, when some are
// readable, reads and answers their requests in the same pass, where a
// goroutine per connection would be woken (and the runtime's threads
// with it) for each request. The poller serves only the plain case — a
// channel between messages, whose next request arrives whole in one
// chunk — and gives the channel back to a goroutine of its own for
// anything else (a partial or multi-chunk message, a renewal, an error,
// the end of the stream): the blocking path, with its deadlines.

// ErrNotPollable is returned by Control for a connection that is not a
// TCP socket.
var ErrNotPollable = errors.New("uasc: connection cannot be polled")

// Control runs f with the connection's socket, which stays open (and its
// number not reused) while f runs: for the poller's epoll_ctl.
func (c *Channel) Control(f func(fd uintptr)) error {
	if c.raw == nil {
		return ErrNotPollable
	}
	return c.raw.rc.Control(f)
}

// errWouldBlock is what TryReadRequest returns where ReadRequest would
// wait for the connection.
var errWouldBlock = errors.New("uasc: the next request has not arrived whole")

// TryReadRequest is ReadRequest that never waits for the connection:
// after NextSimple it returns the request; where ReadRequest would wait
// it returns ok false and leaves the channel as it was for the next
// ReadRequest.
func (c *Channel) TryReadRequest() (r Request, ok bool, err error) {
	c.noWait = true
	r, err = c.ReadRequest()
	c.noWait = false
	if err == errWouldBlock {
		return Request{}, false, nil
	}
	return r, err == nil, err
}

// Idle reports whether the channel is between messages with nothing
// received that it has not handled: what a poller may wait for. Only the
// reading goroutine (or the poller that took its place) may call it.
func (c *Channel) Idle() bool {
	return c.rerr == nil && c.cur != nil && c.r == c.w && !c.inMsg && c.opnChunks == 0 && !c.closed.Load()
}

// IdleDeadline is when the channel fails if nothing comes: the expiry
// of its newest security token.
func (c *Channel) IdleDeadline() time.Time {
	if c.cur == nil {
		return c.hsEnd
	}
	return c.cur.expires
}

// ReadAvailable reads what the connection has, without waiting: 0 when
// nothing has come. An error (the end of the stream, a deadline that has
// passed, a closed connection) is left for ReadRequest to report: the
// caller hands the channel to its goroutine, whose next read sees it
// again.
func (c *Channel) ReadAvailable() (int, error) {
	if c.raw == nil {
		return 0, ErrNotPollable
	}
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	c.drained = false
	if c.w == len(c.rbuf) {
		return 0, nil
	}
	n, err := c.raw.tryRead(c.rbuf[c.w:], &c.w)
	if n > 0 {
		c.readAt = time.Now()
	}
	if c.w == len(c.rbuf) {
		c.growRecv() // a read filled it: the client sends more at a time
	} else {
		c.drained = err == nil
	}
	return n, err
}

// Drained reports whether the last ReadAvailable read all the socket
// held: it had room for more than came. Data that arrives later is a
// new event for an edge-triggered epoll set.
func (c *Channel) Drained() bool { return c.drained }

// ReadWaits returns how many of the channel's reads found the
// connection empty and waited for it, the calling goroutine parked: a
// server that sees it change knows its goroutine let the others run. It
// stays 0 for a connection read without raw system calls (a pipe).
func (c *Channel) ReadWaits() uint64 {
	if c.raw == nil {
		return 0
	}
	return c.raw.waits
}

// LastRead returns when the last read from the connection returned
// bytes: the Received of every request read since, or still buffered,
// is at or before it.
func (c *Channel) LastRead() time.Time { return c.readAt }

// NextSimple reports whether the receive buffer begins with the whole
// final chunk of a one-chunk request, which ReadRequest returns without
// waiting, sleeping or asymmetric cryptography.
func (c *Channel) NextSimple() bool {
	if c.rerr != nil || c.cur == nil || c.inMsg || c.opnChunks > 0 {
		return false
	}
	b := c.rbuf[c.r:c.w]
	if len(b) < hdrLen || string(b[:4]) != "MSGF" {
		return false
	}
	size := binary.LittleEndian.Uint32(b[4:8])
	return size >= hdrLen && size <= uint32(c.recvBufSize) && uint64(size) <= uint64(len(b))
}

// Partial reports whether the receive buffer holds the start of a
// one-chunk request and nothing else: a poller may wait for the rest (a
// pipelining client's next batch) instead of handing the channel to a
// goroutine. A header that cannot start such a chunk is not partial.
func (c *Channel) Partial() bool {
	if c.rerr != nil || c.cur == nil || c.inMsg || c.opnChunks > 0 || c.closed.Load() {
		return false
	}
	b := c.rbuf[c.r:c.w]
	if len(b) == 0 {
		return false
	}
	if len(b) < hdrLen {
		return string(b) == "MSGF"[:min(len(b), 4)]
	}
	size := binary.LittleEndian.Uint32(b[4:8])
	return string(b[:4]) == "MSGF" && size >= hdrLen && size <= uint32(c.recvBufSize) && uint64(size) > uint64(len(b))
}

// WriteRoom is how many more bytes a write would now take without
// waiting: the socket's send buffer less what it holds and what
// QueueResponse left to write; 0 while another goroutine is writing (a
// poller must not wait for it). Fresh, it asks the socket (an ioctl);
// otherwise, while the room the socket last reported less what was
// written since is at least minCachedRoom, it answers that without a
// system call: never more than the socket takes, since acknowledgements
// only add room (but for a send buffer the kernel shrinks under memory
// pressure).
func (c *Channel) WriteRoom(fresh bool) int {
	c.s.mu.Lock()
	busy := c.s.flushing || c.s.err != nil
	queued := len(c.s.buf)
	sent := c.s.sent
	c.s.mu.Unlock()
	if busy || c.raw == nil {
		return 0
	}
	if left := c.roomAt - int(sent-c.sentAt); !fresh && left >= minCachedRoom {
		return left - queued
	}
	c.roomAt, c.sentAt = c.raw.room(), sent
	return c.roomAt - queued
}

// minCachedRoom is the least room WriteRoom answers without asking the
// socket: enough for a few responses of a lone client's reads.
const minCachedRoom = 8 << 10

// tryRead reads once into p without waiting and adds what it read to *w.
func (x *rawIO) tryRead(p []byte, w *int) (int, error) {
	x.t.buf, x.t.n, x.t.errno = p, 0, 0
	err := x.rc.Read(x.t.fn)
	x.t.buf = nil
	switch {
	case err != nil:
		return 0, err
	case x.t.errno == syscall.EAGAIN:
		return 0, nil
	case x.t.errno != 0:
		return 0, x.t.errno
	case x.t.n == 0:
		return 0, errEOF
	}
	*w += x.t.n
	return x.t.n, nil
}

var errEOF = errors.New("uasc: end of stream")

// room is SO_SNDBUF less SIOCOUTQ (the bytes queued and not yet
// acknowledged), with raw system calls; 0 when either fails.
func (x *rawIO) room() int {
	x.q.n, x.q.errno = 0, 0
	if err := x.rc.Control(x.q.ctl); err != nil || x.q.errno != 0 {
		return 0
	}
	return x.q.n
}

// siocoutq is SIOCOUTQ (TIOCOUTQ) on Linux.
const siocoutq = 0x5411

// roomOp is the state of room, its function made once.
type roomOp struct {
	sndbuf int32
	n      int
	errno  syscall.Errno
	ctl    func(fd uintptr)
}

func (x *rawIO) initPoll() {
	x.t.fn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(x.t.buf))), uintptr(len(x.t.buf)))
			if e == syscall.EINTR {
				continue
			}
			x.t.n, x.t.errno = int(n), e
			return true // never park
		}
	}
	x.q.ctl = func(fd uintptr) {
		if x.q.sndbuf == 0 {
			l := uint32(4)
			_, _, e := syscall.RawSyscall6(syscall.SYS_GETSOCKOPT, fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF,
				uintptr(unsafe.Pointer(&x.q.sndbuf)), uintptr(unsafe.Pointer(&l)), 0)
			if e != 0 {
				x.q.errno = e
				return
			}
		}
		var queued int32
		if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, fd, siocoutq, uintptr(unsafe.Pointer(&queued))); e != 0 {
			x.q.errno = e
			return
		}
		x.q.n = max(int(x.q.sndbuf)-int(queued), 0)
	}
}
