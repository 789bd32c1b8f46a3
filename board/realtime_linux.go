package board

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Apply gives the calling goroutine's thread the scheduling of rt: it
// locks the goroutine to its thread for good (the thread ends with the
// goroutine, so its priority never passes to another), sets SCHED_FIFO
// with rt.Priority when above 0, and pins the thread to rt.CPU when it
// is 0 or more. It returns what it could not do (not permitted, a CPU
// that is not there); the thread then runs on as it was. A RealTime that
// asks for neither (the sim board's) leaves the goroutine unlocked: a
// locked goroutine's every wake-up hands the runtime's P to its thread
// and back, two context switches, for nothing.
func (rt RealTime) Apply() error {
	if !rt.Wanted() {
		return nil
	}
	runtime.LockOSThread()
	var errs []error
	if rt.Priority > 0 {
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(rt.Priority)}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			errs = append(errs, fmt.Errorf("SCHED_FIFO priority %d: %w", rt.Priority, err))
		}
	}
	if rt.CPU >= 0 {
		var set unix.CPUSet
		set.Set(rt.CPU)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errs = append(errs, fmt.Errorf("CPU %d: %w", rt.CPU, err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("board: real-time scheduling: %v", errs)
}

// LockMemory locks the process's pages in memory as they are touched
// (mlockall MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT), so that the scan never
// waits for a page to come back from swap or a file; pages the runtime
// reserves but does not touch cost nothing.
func LockMemory() error {
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT); err != nil {
		return fmt.Errorf("board: mlockall: %w", err)
	}
	return nil
}
