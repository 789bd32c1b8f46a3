package plc

import (
	"context"
	"time"
)

// waiter waits for the start of each cycle. Run chooses one at its start
// (newWaiter) and uses it alone:
//   - ownThreadWaiter: nanosleep on the scan's own thread (a real-time
//     thread, Config.OwnThreadWait);
//   - polledWaiter: a timerfd in Go's poller (Config.PreciseWake, Linux);
//   - timerWaiter: Go's timer, serving results and writes meanwhile, then
//     nanosleep for the last PreciseWake.
//
// With the first two the results, writes and changes that come during the
// wait are taken at the cycle's start.
type waiter interface {
	// wait returns at due, or false when ctx ended.
	wait(ctx context.Context, due time.Time) bool
	// woke says how late the wait returned.
	woke(late time.Duration)
	// cycled says that the cycle ended at end; next is the next one's
	// start.
	cycled(next, end time.Time)
	close()
}

func (e *Engine) newWaiter() waiter {
	switch {
	case e.ownThreadWait:
		return &ownThreadWaiter{e: e}
	case e.preciseWake > 0:
		if p := newPolledTimer(); p != nil {
			return &polledWaiter{e: e, p: p}
		}
	}
	return &timerWaiter{e: e, timer: time.NewTimer(0)}
}

// ownThreadWaiter sleeps with nanosleep on the goroutine's thread.
type ownThreadWaiter struct{ e *Engine }

func (w *ownThreadWaiter) wait(ctx context.Context, due time.Time) bool {
	sleepUntil(due)
	if ctx.Err() != nil {
		return false
	}
	w.e.takeReconf(ctx)
	return true
}

func (w *ownThreadWaiter) woke(time.Duration)          {}
func (w *ownThreadWaiter) cycled(time.Time, time.Time) {}
func (w *ownThreadWaiter) close()                      {}

// polledWaiter parks on a timerfd; after a late wake-up in a loaded
// process (busyLate) it waits as timerWaiter does for busyCycles cycles,
// and after quietCycles on time its read goes without a deadline (see
// busyLate).
type polledWaiter struct {
	e     *Engine
	p     *polledTimer
	busy  int // cycles left to wait as without a timerfd
	quiet int // wake-ups on time in a row
	// waitCPU is the process's CPU time when the wait began: a late
	// wake-up counts only if the process ran while it waited.
	waitCPU time.Duration
}

func (w *polledWaiter) wait(ctx context.Context, due time.Time) bool {
	w.waitCPU = processCPU()
	if w.busy == 0 {
		w.p.sleepUntil(due, w.quiet < quietCycles)
	} else {
		// Busy (a wake-up came late lately): the runtime's timer, which a
		// busy scheduler runs on time, to PreciseWake before the cycle,
		// then nanosleep, as without a timerfd.
		w.busy--
		time.Sleep(time.Until(due) - w.e.preciseWake)
		sleepUntil(due)
	}
	if ctx.Err() != nil {
		return false
	}
	w.e.takeReconf(ctx)
	return true
}

func (w *polledWaiter) woke(late time.Duration) {
	switch {
	case late > quietLate && !loaded(processCPU()-w.waitCPU, late):
		// Late while the process was idle: the host, not Go's
		// scheduler, held the wake-up, and neither the read's deadline
		// nor waiting as when busy would have woken it sooner.
		if w.busy == 0 {
			w.quiet++
		}
	case late > busyLate:
		w.busy, w.quiet = busyCycles, 0
	case late > quietLate || w.busy > 0:
		w.quiet = 0
	default:
		w.quiet++
	}
}

func (w *polledWaiter) cycled(time.Time, time.Time) {}
func (w *polledWaiter) close()                      { w.p.close() }

// timerWaiter serves results and writes (idle) until Go's timer fires,
// PreciseWake before the cycle, and sleeps the rest with nanosleep.
type timerWaiter struct {
	e     *Engine
	timer *time.Timer
}

func (w *timerWaiter) wait(ctx context.Context, due time.Time) bool {
	if !w.e.idle(ctx, w.timer.C) {
		return false
	}
	if w.e.preciseWake > 0 {
		sleepUntil(due)
	}
	return true
}

func (w *timerWaiter) woke(time.Duration) {}

func (w *timerWaiter) cycled(next, end time.Time) {
	w.timer.Reset(next.Sub(end) - w.e.preciseWake)
}

func (w *timerWaiter) close() { w.timer.Stop() }
