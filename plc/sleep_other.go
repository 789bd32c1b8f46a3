//go:build !linux

package plc

import "time"

// sleepUntil sleeps until t; on systems other than Linux with Go's timer.
// See Config.PreciseWake.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
