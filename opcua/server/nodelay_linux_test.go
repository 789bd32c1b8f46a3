//go:build linux

package server

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// recordingListener hands out the connections it accepts on accepted.
type recordingListener struct {
	net.Listener
	accepted chan net.Conn
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted <- c
	}
	return c, err
}

// TestNoDelay checks TCP_NODELAY on the server's side of a connection: on
// by default, off with DataEfficient.
func TestNoDelay(t *testing.T) {
	for _, efficient := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl := &recordingListener{Listener: ln, accepted: make(chan net.Conn, 1)}
		s := newTestServer(t, Config{DataEfficient: efficient})
		go s.Serve(rl)
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc := <-rl.accepted
		waitUntil(t, func() bool { return s.nconns.Load() == 1 }) // SetNoDelay happens before the count
		raw, err := sc.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var v int
		raw.Control(func(fd uintptr) { v, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY) })
		if err != nil {
			t.Fatal(err)
		}
		if (v != 0) == efficient {
			t.Errorf("DataEfficient %t: TCP_NODELAY %d", efficient, v)
		}
		c.Close()
		s.Shutdown(context.Background())
	}
}
