package slave

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// The in-memory connection answers as a TCP connection would: whole
// requests in the Write that completes them, pipelined ones in order,
// a request split over writes once whole; a bad header closes it.
func TestConn(t *testing.T) {
	s := New(NewBank(10))
	s.Update(func(b *Bank) { b.HoldingRegisters[1] = 0x1234 })
	c, err := s.Conn()
	if err != nil {
		t.Fatal(err)
	}
	read := func(id byte) []byte {
		t.Helper()
		var b [11]byte // 7 + fc, count, one register
		if _, err := io.ReadFull(c, b[:]); err != nil {
			t.Fatal(err)
		}
		want := []byte{0, id, 0, 0, 0, 5, 1, 3, 2, 0x12, 0x34}
		if !bytes.Equal(b[:], want) {
			t.Fatalf("response % x, want % x", b, want)
		}
		return b[:]
	}
	req := func(id byte) []byte { return []byte{0, id, 0, 0, 0, 6, 1, 3, 0, 1, 0, 1} }

	if n, err := c.Write(req(1)); n != 12 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	read(1)
	// Two pipelined requests in one write, then one in two parts.
	c.Write(append(req(2), req(3)...))
	read(2)
	read(3)
	r := req(4)
	c.Write(r[:5])
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var one [1]byte
	if _, err := c.Read(one[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read of half a request's answer: %v, want the deadline", err)
	}
	c.SetReadDeadline(time.Time{})
	c.Write(r[5:])
	read(4)

	// An exception is framed like any answer.
	c.Write([]byte{0, 5, 0, 0, 0, 2, 1, 0x2b})
	var ex [9]byte
	if _, err := io.ReadFull(c, ex[:]); err != nil || !bytes.Equal(ex[:], []byte{0, 5, 0, 0, 0, 3, 1, 0xab, 1}) {
		t.Fatalf("exception % x, %v", ex, err)
	}

	// Not Modbus (protocol id 1): closed.
	c.Write([]byte{0, 6, 0, 1, 0, 6, 1, 3, 0, 1, 0, 1})
	if _, err := c.Read(one[:]); err != io.EOF {
		t.Fatalf("Read after a bad header: %v, want EOF", err)
	}
	if _, err := c.Write(req(7)); err == nil {
		t.Fatal("Write after a bad header succeeded")
	}
}

// Server.Close ends a Read that waits on an in-memory connection, and no
// connection is made after it.
func TestConnClose(t *testing.T) {
	s := New(NewBank(10))
	c, err := s.Conn()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := c.Read(b[:])
		got <- err
	}()
	s.Close()
	if err := <-got; err != io.EOF {
		t.Fatalf("Read at Close: %v, want EOF", err)
	}
	if _, err := s.Conn(); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Conn after Close: %v", err)
	}
	c.Close() // and again: no harm
}

// OnRequest runs before each request, under the bank's lock.
func TestOnRequest(t *testing.T) {
	s := New(NewBank(10))
	n := uint16(0)
	s.OnRequest = func(b *Bank) { n++; b.HoldingRegisters[0] = n }
	var dst [8]byte
	for want := uint16(1); want <= 2; want++ {
		out := s.Handle([]byte{3, 0, 0, 0, 1}, dst[:0])
		if len(out) != 4 || out[3] != byte(want) {
			t.Fatalf("request %d: % x", want, out)
		}
	}
}
