package stack

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// edged's runtime policy, whole: what the process does with GOMAXPROCS,
// the garbage collector and the memory it returns to the system. The
// libraries (opcua/, plc/, drivers/, binding, configsvc) change none of
// it; they say what they do through Runtime's hooks, which Policy fills.
// cmd/edged runs with it, and so do the benchmark commands that run the
// stack, so that they measure what edged runs. Why each choice: see
// docs/performance.md (Memory, One P).

// defaultMemoryLimit is the Go runtime's soft memory limit when the
// environment sets no GOMEMLIMIT: the garbage collector works harder as
// the heap nears it, so that a flood of large requests (bounded by the
// server's RequestMemory) stays well below a small gateway's memory.
const defaultMemoryLimit = 96 << 20

// gcHeadroom is how far the heap may grow beyond what is live before a
// collection, when the environment sets no GOGC: 15 % of the live heap,
// at least minGCHeadroom, at most what Go's default (GOGC 100) allows.
// edged allocates little once running (nothing per Read or notification),
// and the start runs with GOGC gcHeadroom too, so that the heap it builds
// stays dense.
const (
	gcHeadroom    = 15 // percent of the live heap
	minGCHeadroom = 1 << 20
)

// RealTimeProcs is the fewest Ps with a real-time scan thread. The scan
// gives its P back while it sleeps and needs one again when it wakes; with
// as many Ps as busy threads, one may be held by a thread of normal or
// lowest priority (a configuration change) that the kernel does not run
// while the scan's is runnable: a priority inversion.
const RealTimeProcs = 4

// ProcessStart sets the runtime for edged as its process starts: the soft
// memory limit and the collector's headroom, each unless the environment
// sets it.
func ProcessStart() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcHeadroom) // until tuneGC, after the start
	}
}

// Policy is edged's runtime policy as the hooks of Config.Runtime:
//   - heavy work gets a second P while the process has one (GOMAXPROCS 1,
//     Go's default on one core): with one P a goroutine computing for
//     milliseconds holds it until the runtime preempts it, up to 10 ms,
//     while the scan's wake-up waits; with two the kernel decides;
//   - a configuration change gets the spare P too, and the collector
//     Go's default headroom while it runs: it allocates megabytes, which
//     with the heap's usual headroom would be a collection every few
//     hundred kilobytes, each one taking the P from the scan (bench-scan
//     with -applies); after it, the memory goes back and GOGC follows the
//     live heap again;
//   - released memory goes back to the system at once (the runtime's
//     scavenger would take minutes), and GOGC follows the live heap;
//   - a real-time scan thread runs with at least RealTimeProcs Ps;
//   - while the process allocates little, what it no longer uses goes
//     back to the system once a minute (trimWhenIdle).
func Policy() Runtime {
	return Runtime{HeavyWork: spareP, ChangeWork: changeWork, MemoryReleased: releaseMemory, RealTimeScan: realTimeProcs,
		Housekeeping: trimWhenIdle}
}

// changeWork is spareP with Go's default GOGC until the change ends,
// unless the environment sets GOGC.
func changeWork() (done func()) {
	release := spareP()
	if os.Getenv("GOGC") != "" {
		return release
	}
	old := debug.SetGCPercent(100)
	return func() {
		debug.SetGCPercent(old)
		release()
	}
}

var spare struct {
	mu     sync.Mutex
	users  int  // callers between spareP and its release
	raised bool // spareP raised GOMAXPROCS from 1 to 2
}

// spareP gives the process a second P if it has one, until the returned
// function is called (once); calls may overlap, and the last release sets
// GOMAXPROCS back to 1 unless something else changed it meanwhile. Each
// change of GOMAXPROCS stops the world for a moment: it marks work of
// milliseconds, not a request.
func spareP() (release func()) {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.users == 0 && runtime.GOMAXPROCS(0) == 1 {
		runtime.GOMAXPROCS(2)
		spare.raised = true
	}
	spare.users++
	return unspareP
}

func unspareP() {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.users--; spare.users > 0 {
		return
	}
	if spare.raised && runtime.GOMAXPROCS(0) == 2 {
		runtime.GOMAXPROCS(1)
	}
	spare.raised = false
}

// releaseMemory returns what is garbage to the system and sets GOGC from
// the live heap that is left.
func releaseMemory() {
	debug.FreeOSMemory()
	tuneGC()
}

// An idle process allocates a few kilobytes a second (the history's
// head filling, timers, the periodic checks): the collector runs about
// every two minutes, and the runtime keeps the pages it frees, a tenth of
// the heap and more, for allocations that seldom come. At the end of a
// period in which the process allocated at most trimIdleBytes, its
// garbage and those pages go back (a collection: milliseconds of one
// core) when together they are at least trimMinBytes. A busy process is
// left to the collector's pacing and the runtime's scavenger.
const (
	trimPeriod    = time.Minute
	trimIdleBytes = 1 << 20
	trimMinBytes  = 128 << 10
)

// trimWhenIdle returns an idle process's unused memory once every
// trimPeriod until stop is closed.
func trimWhenIdle(stop <-chan struct{}) {
	t := time.NewTicker(trimPeriod)
	defer t.Stop()
	s := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},              // allocated since the start
		{Name: "/memory/classes/heap/objects:bytes"}, // live and garbage
		{Name: "/gc/heap/live:bytes"},                // live at the last collection
		{Name: "/memory/classes/heap/free:bytes"},    // free pages kept
	}
	metrics.Read(s)
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return // a runtime without these metrics: its scavenger alone
		}
	}
	last := s[0].Value.Uint64()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(s)
		allocs, objects, live, free := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
		if trimDue(allocs-last, objects-min(objects, live)+free) {
			releaseMemory()
		}
		last = allocs
	}
}

// trimDue reports whether a period in which the process allocated alloc
// bytes should end by returning memory, spare bytes of it garbage or free
// pages.
func trimDue(alloc, spare uint64) bool {
	return alloc <= trimIdleBytes && spare >= trimMinBytes
}

// realTimeProcs raises GOMAXPROCS to RealTimeProcs.
func realTimeProcs() {
	if runtime.GOMAXPROCS(0) < RealTimeProcs {
		runtime.GOMAXPROCS(RealTimeProcs)
	}
}

// tuneGC sets GOGC from the live heap (gcHeadroom), unless the
// environment sets it; called after a collection.
func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(gcPercent(s[0].Value.Uint64()))
}

// gcPercent is the GOGC that gives a live heap of live bytes its
// headroom: gcHeadroom, at least minGCHeadroom, at most Go's default.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(100, max(gcHeadroom, minGCHeadroom*100/live)))
}
