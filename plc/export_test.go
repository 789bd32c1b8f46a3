package plc

import (
	"context"
	"time"
)

// Test hooks: run the cycle by hand, without Run's timer.

// StartForTest starts the device goroutines as Run does.
func (e *Engine) StartForTest(ctx context.Context) {
	e.state.Store(stateRunning)
	e.start(ctx)
}

// CycleForTest runs cycle n now and records it as Run does.
func (e *Engine) CycleForTest(ctx context.Context, n uint64) {
	now := time.Now()
	e.cycle(ctx, n, now)
	e.record(n, time.Since(now), 0)
}

// StopForTest stops the device goroutines as Run does.
func (e *Engine) StopForTest() { e.stop() }

var Percentile = func(sorted []time.Duration) (n int, p50, p99, max time.Duration) {
	p := percentiles(sorted)
	return p.N, p.P50, p.P99, p.Max
}

// SetAsideForTest returns how many replaced images the engine keeps for
// reuse beside the current one and the one it writes.
func (e *Engine) SetAsideForTest() int { return len(e.held) }

// LastKeptForTest returns how many tags' last usable values the engine
// keeps apart (their state in the image is Bad).
func (e *Engine) LastKeptForTest() int { return len(e.lastGood) }
