// Package procs lends a process that runs with one P (GOMAXPROCS 1, Go's
// default on one core) a second one while some goroutine computes for
// long: a configuration change, a secure channel's or a session's
// asymmetric cryptography. With one P such a goroutine holds it until the
// runtime preempts it, up to 10 ms, while the scan's wake-up waits; with
// two the kernel decides who gets the core. See docs/performance.md.
package procs

import (
	"runtime"
	"sync"
)

var (
	mu     sync.Mutex
	users  int  // callers between Spare and its release
	raised bool // Spare raised GOMAXPROCS from 1 to 2
)

// Spare gives the process a second P if it has one, until the returned
// function is called (once); calls may overlap, and the last release
// sets GOMAXPROCS back to 1 unless something else changed it meanwhile.
// Each change of GOMAXPROCS stops the world for a moment: call it around
// work of milliseconds, not per request.
func Spare() (release func()) {
	mu.Lock()
	defer mu.Unlock()
	if users == 0 && runtime.GOMAXPROCS(0) == 1 {
		runtime.GOMAXPROCS(2)
		raised = true
	}
	users++
	return unspare
}

func unspare() {
	mu.Lock()
	defer mu.Unlock()
	if users--; users > 0 {
		return
	}
	if raised && runtime.GOMAXPROCS(0) == 2 {
		runtime.GOMAXPROCS(1)
	}
	raised = false
}
