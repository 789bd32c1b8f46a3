//go:build !linux

package board

import (
	"errors"
	"runtime"
)

// Apply locks the goroutine to its thread; scheduling needs Linux.
func (rt RealTime) Apply() error {
	runtime.LockOSThread()
	if rt.Priority > 0 || rt.CPU >= 0 {
		return errors.New("board: real-time scheduling needs Linux")
	}
	return nil
}

// LockMemory needs Linux.
func LockMemory() error { return errors.New("board: mlockall needs Linux") }
