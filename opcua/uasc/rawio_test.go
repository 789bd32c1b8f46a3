package uasc

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// The raw reads and writes behave as net.Conn's: data both ways, a write
// larger than the socket buffers (waiting for room), the read deadline,
// the end of the stream; and they allocate nothing.
func TestRawIO(t *testing.T) {
	a, b := tcpPair(t)
	ra, rb := newRawIO(a), newRawIO(b)
	if ra == nil || rb == nil {
		t.Fatal("no raw I/O on a TCP connection")
	}
	if newRawIO(struct{ net.Conn }{a}) != nil {
		t.Error("raw I/O on a wrapped connection")
	}
	buf := make([]byte, 64)
	if n, err := ra.write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("write = %d, %v", n, err)
	}
	if n, err := rb.read(buf); n != 5 || err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read = %q, %v", buf[:n], err)
	}

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		p := make([]byte, 1<<16)
		for len(all) < len(big) {
			n, err := rb.read(p)
			if err != nil {
				break
			}
			all = append(all, p[:n]...)
		}
		got <- all
	}()
	if n, err := ra.write(big); n != len(big) || err != nil {
		t.Fatalf("write of 4 MiB = %d, %v", n, err)
	}
	if all := <-got; !bytes.Equal(all, big) {
		t.Fatalf("read back %d bytes, not the %d written", len(all), len(big))
	}

	b.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := rb.read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	b.SetReadDeadline(time.Time{})

	allocs := testing.AllocsPerRun(100, func() {
		ra.write(buf[:8])
		rb.read(buf)
	})
	if allocs != 0 {
		t.Errorf("a write and a read allocate %v times", allocs)
	}

	a.(*net.TCPConn).CloseWrite()
	if _, err := rb.read(buf); err != io.EOF {
		t.Fatalf("read at the end of the stream: %v, want EOF", err)
	}
	b.Close()
	if _, err := rb.read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v", err)
	}
}

// WriteRoom without fresh answers from the socket's last answer less
// what was written since, with no system call, while that is at least
// minCachedRoom; below it, it asks the socket again.
func TestWriteRoomRemembered(t *testing.T) {
	tc, ch := openTCP(t, &Config{}, defaultHello())
	if err := ch.nc.(*net.TCPConn).SetWriteBuffer(1 << 20); err != nil {
		t.Fatal(err)
	}
	r := ch.WriteRoom(true)
	if r < minCachedRoom+1000 {
		t.Fatalf("room %d after SO_SNDBUF of 1 MiB", r)
	}
	if err := ch.WriteResponse(7, smallRequest()); err != nil {
		t.Fatal(err)
	}
	written := len(tc.mustChunk("MSG"))
	if got := ch.WriteRoom(false); got != r-written {
		t.Errorf("remembered room after a response of %d bytes = %d, want %d", written, got, r-written)
	}
	ch.roomAt = minCachedRoom - 1 + written
	if got := ch.WriteRoom(false); got == minCachedRoom-1 || got < minCachedRoom {
		t.Errorf("room below minCachedRoom = %d: the socket was not asked again", got)
	}
}
