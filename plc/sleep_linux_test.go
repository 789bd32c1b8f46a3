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

// processCPU counts the CPU time this process spends, not the time that
// passes while it sleeps.
func TestProcessCPU(t *testing.T) {
	c0 := processCPU()
	if c0 <= 0 {
		t.Fatalf("processCPU() = %v, want > 0", c0)
	}
	time.Sleep(20 * time.Millisecond)
	slept := processCPU() - c0
	spin := time.Now().Add(20 * time.Millisecond)
	c1 := processCPU()
	for time.Now().Before(spin) {
	}
	spun := processCPU() - c1
	if spun < 10*time.Millisecond {
		t.Errorf("20 ms of spinning: processCPU grew by %v, want ≥ 10 ms", spun)
	}
	if slept >= 10*time.Millisecond {
		t.Errorf("20 ms of sleep: processCPU grew by %v, want < 10 ms", slept)
	}
}

// A late wake-up counts as the process's own lateness only if the
// process ran for at least half as long while the engine waited.
func TestLoaded(t *testing.T) {
	for _, c := range []struct {
		cpu, late time.Duration
		want      bool
	}{
		{3 * time.Microsecond, 400 * time.Microsecond, false}, // idle, the host ran it late
		{100 * time.Microsecond, 2 * time.Millisecond, false},
		{time.Millisecond, 2 * time.Millisecond, true},
		{2 * time.Millisecond, 1500 * time.Microsecond, true}, // serving a load
		{0, 0, true},
	} {
		if got := loaded(c.cpu, c.late); got != c.want {
			t.Errorf("loaded(%v, %v) = %v, want %v", c.cpu, c.late, got, c.want)
		}
	}
}
