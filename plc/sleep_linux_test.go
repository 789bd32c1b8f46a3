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
	// Spin until the process used 10 ms of CPU: a machine that runs other
	// work meanwhile only makes it take longer (a spin of 20 ms of wall
	// time got 8.6 ms of CPU in one CI run). processCPU that does not
	// count CPU never gets there.
	c1 := processCPU()
	for start := time.Now(); processCPU()-c1 < 10*time.Millisecond; {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("10 s of spinning: processCPU grew by %v, want ≥ 10 ms", processCPU()-c1)
		}
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
