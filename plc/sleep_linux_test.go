package plc

import (
	"testing"
	"time"
)

// The timerfd sleep never returns before its time, and returns for a
// time that has passed, with and without the read's deadline.
func TestPolledTimer(t *testing.T) {
	p := newPolledTimer()
	if p == nil {
		t.Fatal("no timerfd")
	}
	defer p.close()
	for _, deadline := range []bool{true, false, true} {
		for _, d := range []time.Duration{-time.Millisecond, 0, 100 * time.Microsecond, 2 * time.Millisecond, 7 * time.Millisecond} {
			at := time.Now().Add(d)
			p.sleepUntil(at, deadline)
			if now := time.Now(); now.Before(at) {
				t.Errorf("sleepUntil(now%+v, deadline %v) returned %v early", d, deadline, at.Sub(now))
			}
		}
	}
}
