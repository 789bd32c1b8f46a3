//go:build !linux

package plc

import "time"

// sleepUntil sleeps until t; on systems other than Linux with Go's timer.
// See Config.PreciseWake.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// polledTimer needs Linux's timerfd; elsewhere the engine uses Go's timer
// and sleepUntil.
type polledTimer struct{}

func newPolledTimer() *polledTimer                           { return nil }
func (p *polledTimer) sleepUntil(t time.Time, deadline bool) { sleepUntil(t) }
func (p *polledTimer) close()                                {}

// processCPU is not needed without a polledTimer.
func processCPU() time.Duration { return 0 }
