//go:build !linux

package board

import (
	"errors"
	"runtime"
)

// Apply locks the goroutine to its thread if rt asks for real-time
// scheduling, which needs Linux.
func (rt RealTime) Apply() error {
	if !rt.Wanted() {
		return nil
	}
	runtime.LockOSThread()
	return errors.New("board: real-time scheduling needs Linux")
}

// LockMemory needs Linux.
func LockMemory() error { return errors.New("board: mlockall needs Linux") }
