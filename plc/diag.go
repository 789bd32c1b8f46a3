package plc

import (
	"slices"
	"time"
)

// window is a ring of the last len(buf) durations.
type window struct {
	buf []time.Duration
	i   int // next slot
	n   int // slots filled
}

func (w *window) add(d time.Duration) {
	w.buf[w.i] = d
	w.i++
	if w.i == len(w.buf) {
		w.i = 0
	}
	if w.n < len(w.buf) {
		w.n++
	}
}

// Percentiles summarize the durations of a window of cycles.
type Percentiles struct {
	N   int // cycles in the window
	P50 time.Duration
	P99 time.Duration
	Max time.Duration
}

// percentiles computes p over sorted (nearest rank).
func percentiles(sorted []time.Duration) Percentiles {
	n := len(sorted)
	if n == 0 {
		return Percentiles{}
	}
	rank := func(p int) time.Duration { // p in percent
		r := (p*n + 99) / 100 // ceil(p·n/100)
		if r < 1 {
			r = 1
		}
		return sorted[r-1]
	}
	return Percentiles{N: n, P50: rank(50), P99: rank(99), Max: sorted[n-1]}
}

// Diagnostics is a snapshot of the engine's statistics, for the binding's
// Diagnostics object. Fill one with Engine.Diagnostics; reusing it makes
// later calls allocation-free.
type Diagnostics struct {
	Period   time.Duration
	Cycle    uint64 // the last cycle run
	Cycles   uint64 // cycles run
	Overruns uint64 // cycles skipped because the loop woke too late
	// CycleTime is from a cycle's start to its publish (the wait for
	// the polls included); StartJitter is how late cycles started
	// against their deadline. Both over the last Config.Window cycles.
	CycleTime   Percentiles
	StartJitter Percentiles
	// ImagesReused counts publishes that reused an image nobody kept;
	// ImagesAllocated those that could not, because a reader kept the
	// previous image (see Image).
	ImagesReused    uint64
	ImagesAllocated uint64
	Devices         []DeviceDiagnostics

	scratch []time.Duration
}

// DeviceDiagnostics are one device's statistics.
type DeviceDiagnostics struct {
	Name         string
	Polls        uint64        // polls finished
	PollErrors   uint64        // polls that failed as a whole
	SkippedPolls uint64        // cycles with work due while a poll was still running
	Writes       uint64        // writes finished or expired
	WriteErrors  uint64        // those not status.Good
	PollTime     time.Duration // the last poll's duration
	Busy         bool          // a poll or write is running now
	Failing      bool          // the device is not answering
	Driver       DeviceStats   // the driver's own (Device.Stats)
}

// record adds cycle n's duration and start jitter.
func (e *Engine) record(n uint64, cycle, jitter time.Duration) {
	e.dmu.Lock()
	e.cycleWin.add(cycle)
	e.jitWin.add(jitter)
	e.cycles++
	e.lastN = n
	e.dmu.Unlock()
}

// Diagnostics fills d with the current statistics. The cycle holds a lock
// only to append to the windows; this copies them under that lock and
// sorts the copy outside it. It calls each driver's Stats.
func (e *Engine) Diagnostics(d *Diagnostics) {
	win := len(e.cycleWin.buf)
	if cap(d.scratch) < 2*win {
		d.scratch = make([]time.Duration, 2*win)
	}
	e.dmu.Lock()
	d.Period = e.period
	d.Cycle, d.Cycles, d.Overruns = e.lastN, e.cycles, e.overruns
	c := append(d.scratch[:0], e.cycleWin.buf[:e.cycleWin.n]...)
	j := append(d.scratch[win:win], e.jitWin.buf[:e.jitWin.n]...)
	e.dmu.Unlock()
	d.ImagesReused, d.ImagesAllocated = e.recycled.Load(), e.allocated.Load()
	slices.Sort(c)
	slices.Sort(j)
	d.CycleTime, d.StartJitter = percentiles(c), percentiles(j)

	devs := *e.devList.Load()
	if cap(d.Devices) < len(devs) {
		d.Devices = make([]DeviceDiagnostics, len(devs))
	}
	d.Devices = d.Devices[:len(devs)]
	for i, dev := range devs {
		d.Devices[i] = DeviceDiagnostics{
			Name:         dev.name,
			Polls:        dev.polls.Load(),
			PollErrors:   dev.pollErrors.Load(),
			SkippedPolls: dev.skipped.Load(),
			Writes:       dev.writes.Load(),
			WriteErrors:  dev.writeErrors.Load(),
			PollTime:     time.Duration(dev.pollTime.Load()),
			Busy:         dev.busyNow.Load(),
			Failing:      dev.failingNow.Load(),
			Driver:       dev.dev.Stats(),
		}
	}
}
