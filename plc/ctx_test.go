package plc

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestCallCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), "k", "v"))
		c := newCallCtx(parent)
		t0 := time.Now()

		c.begin(t0.Add(10 * time.Millisecond))
		if d, ok := c.Deadline(); !ok || !d.Equal(t0.Add(10*time.Millisecond)) {
			t.Errorf("Deadline = %v, %v", d, ok)
		}
		if c.Value("k") != "v" {
			t.Error("Value does not reach the parent")
		}
		child, stopChild := context.WithTimeout(c, time.Hour) // a driver's own derived context
		defer stopChild()
		time.Sleep(9 * time.Millisecond)
		synctest.Wait()
		if closed(c.Done()) || c.Err() != nil || closed(child.Done()) {
			t.Fatal("done before the deadline")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !closed(c.Done()) || !errors.Is(c.Err(), context.DeadlineExceeded) || !closed(child.Done()) {
			t.Fatalf("at the deadline: closed %v, err %v, child closed %v", closed(c.Done()), c.Err(), closed(child.Done()))
		}
		c.end()
		if _, ok := c.Deadline(); ok {
			t.Error("Deadline between calls")
		}

		// The next call gets an open channel; ending it early stops its timer.
		c.begin(time.Now().Add(10 * time.Millisecond))
		if closed(c.Done()) || c.Err() != nil {
			t.Fatal("a new call starts done")
		}
		done := c.Done()
		c.end()
		time.Sleep(time.Second)
		synctest.Wait()
		if closed(done) {
			t.Error("an ended call's deadline closed done")
		}
		c.begin(time.Now().Add(10 * time.Millisecond))
		if c.Done() != done {
			t.Error("the channel was replaced though it never closed")
		}

		// Run ends: done for good.
		cancel()
		synctest.Wait()
		if !closed(c.Done()) || !errors.Is(c.Err(), context.Canceled) {
			t.Errorf("after cancel: %v", c.Err())
		}
		c.end()
		c.begin(time.Now().Add(10 * time.Millisecond))
		if !closed(c.Done()) || !errors.Is(c.Err(), context.Canceled) {
			t.Errorf("a call after cancel: %v", c.Err())
		}
		c.end()
	})
}

// AfterFunc: the first registration of a call takes the slot, runs when
// the deadline closes Done and is stopped by its stop function or by
// end; further ones (context.AfterFunc's) run too; a call neither starts
// a goroutine nor allocates.
func TestCallCtxAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newCallCtx(parent)
		var slot, other int
		f := func() { slot++ }

		c.begin(time.Now().Add(10 * time.Millisecond))
		stop := c.AfterFunc(f)
		context.AfterFunc(c, func() { other++ })
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if slot != 1 || other != 1 {
			t.Fatalf("at the deadline: slot ran %d times, context.AfterFunc's %d, want 1 and 1", slot, other)
		}
		if stop() {
			t.Error("stop after the run reports that it stopped it")
		}
		c.end()

		c.begin(time.Now().Add(10 * time.Millisecond))
		if stop := c.AfterFunc(f); !stop() {
			t.Error("stop before the deadline reports that it did not stop it")
		}
		c.AfterFunc(f) // ended with the call, never run
		c.end()
		time.Sleep(time.Second)
		synctest.Wait()
		if slot != 1 {
			t.Fatalf("a stopped or ended registration ran: %d runs", slot)
		}

		// Run's end runs the registered function too.
		c.begin(time.Now().Add(time.Hour))
		c.AfterFunc(f)
		cancel()
		synctest.Wait()
		if slot != 2 {
			t.Errorf("at the parent's end: %d runs, want 2", slot)
		}
		c.end()
	})
}

func TestCallCtxAllocs(t *testing.T) {
	c := newCallCtx(context.Background())
	f := func() {}
	allocs := testing.AllocsPerRun(100, func() {
		c.begin(time.Now().Add(time.Second))
		stop := c.AfterFunc(f)
		stop()
		c.end()
	})
	if allocs != 0 {
		t.Errorf("a call with AfterFunc allocates %v times", allocs)
	}
}
