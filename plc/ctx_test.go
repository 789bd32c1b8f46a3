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
