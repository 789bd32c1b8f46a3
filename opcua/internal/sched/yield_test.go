package sched

import (
	"net"
	"runtime"
	"testing"
	"time"
)

// TestYieldLetsSocketsIn: with one P and a goroutine that never blocks,
// yielding after every slice of work, a connection's goroutine that waits
// for a socket gets its data while the busy one still works. With
// runtime.Gosched the scheduler finds the yielder on its run queue every
// time and polls the network only every 10 ms; the test counts the busy
// goroutine's yields before the reader ran, which is bounded by the
// slices, not by time.
func TestYieldLetsSocketsIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := make(chan struct{})
	go func() {
		var b [1]byte
		s.Read(b[:])
		close(got)
	}()
	time.Sleep(10 * time.Millisecond) // the reader waits in the poller
	y := New()
	defer y.Close()
	if _, err := c.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	yields := 0
	for {
		select {
		case <-got:
			if yields > 2 {
				t.Errorf("the reader got its byte after %d yields, want at most 2", yields)
			}
			return
		default:
		}
		spin(20 * time.Microsecond)
		y.Yield()
		yields++
		if yields > 100000 {
			t.Fatal("the reader never got its byte")
		}
	}
}

// spin works for d without blocking.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func TestYieldAllocs(t *testing.T) {
	y := New()
	defer y.Close()
	if n := testing.AllocsPerRun(100, y.Yield); n != 0 {
		t.Errorf("%v allocations per Yield", n)
	}
}

// TestYieldReturns: many yields in a row, with Ps to spare whose threads
// wait in the poller and report the eventfd's write at once, each return
// (a write reported before the wait began was once forgotten, and the
// yield never returned).
func TestYieldReturns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	y := New()
	defer y.Close()
	for range 20000 {
		y.Yield()
	}
}
