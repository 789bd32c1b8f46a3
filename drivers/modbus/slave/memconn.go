package slave

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Conn returns a connection to s that lives in memory: each request ADU
// written to it is handled in the Write call itself, and its response
// waits for the next Read. A Modbus TCP client in the same process talks
// to s through it as through a TCP connection, with the same framing and
// the same answers, but without system calls, loopback packets or a
// goroutine of s's waking for every request: what edged's simulator costs
// its own process. A malformed header closes it, as it would a TCP
// connection. Close on s closes it.
func (s *Server) Conn() (net.Conn, error) {
	c := &memConn{s: s, ready: make(chan struct{}, 1)}
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.done {
		return nil, ErrServerClosed
	}
	s.mems[c] = struct{}{}
	return c, nil
}

// memConn is the connection of Server.Conn.
type memConn struct {
	s     *Server
	ready chan struct{} // a token when out gained bytes or the connection closed

	mu       sync.Mutex
	in       []byte // the start of a request not yet whole
	out      []byte // responses not yet read
	closed   bool
	deadline time.Time // of Read
}

var errMemClosed = errors.New("slave: connection closed")

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errMemClosed
	}
	c.in = append(c.in, p...)
	in := c.in
	for len(in) >= 7 {
		n := int(binary.BigEndian.Uint16(in[4:]))
		if binary.BigEndian.Uint16(in[2:]) != 0 || n < 2 || n > 254 {
			c.closeLocked() // not Modbus: drop the connection
			return len(p), nil
		}
		size := 6 + n
		if len(in) < size {
			break
		}
		head := len(c.out)
		c.out = append(c.out, in[:7]...)
		c.out = c.s.Handle(in[7:size], c.out)
		binary.BigEndian.PutUint16(c.out[head+4:], uint16(len(c.out)-head-6))
		in = in[size:]
	}
	c.in = append(c.in[:0], in...)
	c.signal()
	return len(p), nil
}

func (c *memConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.out) > 0 {
			n := copy(p, c.out)
			c.out = c.out[:copy(c.out, c.out[n:])]
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, io.EOF
		}
		dl := c.deadline
		c.mu.Unlock()
		if dl.IsZero() {
			<-c.ready
			continue
		}
		d := time.Until(dl)
		if d <= 0 {
			return 0, os.ErrDeadlineExceeded
		}
		// Nothing to read: a client that reads before it wrote a whole
		// request. Rare; the timer is made here only.
		t := time.NewTimer(d)
		select {
		case <-c.ready:
		case <-t.C:
		}
		t.Stop()
	}
}

// signal leaves a token for a Read that waits.
func (c *memConn) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

func (c *memConn) closeLocked() {
	c.closed = true
	c.signal()
}

// shut closes c for Server.Close.
func (c *memConn) shut() {
	c.mu.Lock()
	c.closeLocked()
	c.mu.Unlock()
}

func (c *memConn) Close() error {
	c.shut()
	c.s.lmu.Lock()
	delete(c.s.mems, c)
	c.s.lmu.Unlock()
	return nil
}

// SetDeadline sets the deadline of Read (a Write never waits).
func (c *memConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	c.signal() // a waiting Read looks at the new deadline
	return nil
}

func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "slave" }
