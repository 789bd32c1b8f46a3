package stack

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestSpareP: from one P, overlapping spareP calls keep two until the last
// release; from more, spareP changes nothing.
func TestSpareP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a := spareP()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("after spareP: %d Ps, want 2", n)
	}
	b := spareP()
	a()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("one of two released: %d Ps, want 2", n)
	}
	b()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("both released: %d Ps, want 1", n)
	}
	runtime.GOMAXPROCS(4)
	c := spareP()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Fatalf("spareP with 4 Ps: %d", n)
	}
	c()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Fatalf("released with 4 Ps: %d", n)
	}
}

// BenchmarkSpareP: a spareP and its release from one P, two changes of
// GOMAXPROCS.
func BenchmarkSpareP(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for b.Loop() {
		spareP()()
	}
}

// TestGCPercent: 15 % of the live heap as headroom, at least 1 MiB,
// never more than Go's default.
func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{{0, 100}, {1 << 20, 100}, {2 << 20, 50}, {4 << 20, 25}, {8 << 20, 15}, {16 << 20, 15}, {1 << 30, 15}} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestChangeWork: a configuration change runs with Go's default GOGC and
// the spare P, and the GOGC before it comes back after it.
func TestChangeWork(t *testing.T) {
	t.Setenv("GOGC", "") // unset for the policy: it leaves a GOGC of the environment alone
	defer debug.SetGCPercent(debug.SetGCPercent(15))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	done := changeWork()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC %d during a change, want 100", p)
	}
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("%d Ps during a change, want 2", n)
	}
	done()
	if p := debug.SetGCPercent(15); p != 15 {
		t.Errorf("GOGC %d after a change, want the 15 before it", p)
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("%d Ps after a change, want 1", n)
	}
}

// TestTrimDue: memory goes back after a period of at most trimIdleBytes
// allocated, when garbage and free pages come to trimMinBytes; a busy
// period is left to the collector.
func TestTrimDue(t *testing.T) {
	for _, c := range []struct {
		alloc, spare uint64
		want         bool
	}{
		{0, 0, false},
		{4 << 10, 100 << 10, false},
		{240 << 10, 240 << 10, true},
		{0, trimMinBytes, true},
		{trimIdleBytes, trimIdleBytes, true},
		{trimIdleBytes + 1, 8 << 20, false},
		{64 << 20, 64 << 20, false},
	} {
		if got := trimDue(c.alloc, c.spare); got != c.want {
			t.Errorf("trimDue(%d allocated, %d spare) = %v, want %v", c.alloc, c.spare, got, c.want)
		}
	}
}

// TestTrimWhenIdleStops: trimWhenIdle returns when stop is closed.
func TestTrimWhenIdleStops(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		trimWhenIdle(stop)
	}()
	close(stop)
	<-done
}
