package plc

import (
	"syscall"
	"time"
)

// sleepUntil sleeps until t with nanosleep(2), which blocks this goroutine's
// thread and wakes within the thread's timer slack (50 µs by default)
// rather than the millisecond Go's idle runtime waits in. See
// Config.PreciseWake.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err != nil && err != syscall.EINTR {
			time.Sleep(d)
		}
	}
}
