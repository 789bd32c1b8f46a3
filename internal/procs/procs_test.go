package procs

import (
	"runtime"
	"testing"
)

// TestSpare: from one P, overlapping Spares keep two until the last
// release; from more, Spare changes nothing.
func TestSpare(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a := Spare()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("after Spare: %d Ps, want 2", n)
	}
	b := Spare()
	a()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("one of two released: %d Ps, want 2", n)
	}
	b()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("both released: %d Ps, want 1", n)
	}
	runtime.GOMAXPROCS(4)
	c := Spare()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Fatalf("Spare with 4 Ps: %d", n)
	}
	c()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Fatalf("released with 4 Ps: %d", n)
	}
}

// BenchmarkSpare: a Spare and its release from one P, two changes of
// GOMAXPROCS.
func BenchmarkSpare(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for b.Loop() {
		Spare()()
	}
}
