package plc

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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

// polledTimer is a timerfd(2) that Go's network poller waits on: a
// goroutine that sleeps on it parks like one that waits for a socket,
// holding no thread and handing no P over, and an idle process wakes at
// the precision of the kernel's high-resolution timers, not in the whole
// milliseconds in which the runtime's idle poller counts its own timers.
// A busy process looks at its poller seldom (when a P runs out of work,
// or every 10 ms), but runs its timers on time: unless the process has
// been quiet, the read also has the expiry as its deadline, a runtime
// timer that wakes the sleeper then. Quiet, it has none: the runtime's
// monitor thread sleeps until the next runtime timer, and a deadline
// every cycle would wake it every cycle. The timer is armed and read
// with raw system calls (neither blocks): a runtime system call wakes
// the monitor too. See Config.PreciseWake and Engine.Run.
type polledTimer struct {
	fd int
	f  *os.File // fd, non-blocking, in the poller
	rc syscall.RawConn
	// read is the function rc.Read calls, made once; its result.
	read   func(fd uintptr) bool
	errno  syscall.Errno
	buffer [8]byte
	armed  bool // the read has a deadline
}

// newPolledTimer returns a polledTimer, or nil when the kernel has no
// timerfd.
func newPolledTimer() *polledTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	p := &polledTimer{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
	if p.rc, err = p.f.SyscallConn(); err != nil {
		p.f.Close()
		return nil
	}
	p.read = func(fd uintptr) bool {
		_, _, p.errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p.buffer[0])), uintptr(len(p.buffer)))
		return p.errno != syscall.EAGAIN // false: wait until readable
	}
	return p
}

// sleepUntil parks the calling goroutine until t: the timerfd's expiry,
// or, with deadline, the read's deadline at t.
func (p *polledTimer) sleepUntil(t time.Time, deadline bool) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(p.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); e != 0 {
		sleepUntil(t)
		return
	}
	if deadline {
		p.f.SetReadDeadline(t)
		p.armed = true
	} else if p.armed {
		p.f.SetReadDeadline(time.Time{})
		p.armed = false
	}
	for time.Now().Before(t) {
		if err := p.rc.Read(p.read); err != nil {
			return // the deadline (or a closed timer): late, not early
		}
		// An expiry read (or an error, EINTR say): look at the clock.
	}
}

func (p *polledTimer) close() { p.f.Close() }

// processCPU returns the CPU time the process has used (all its
// threads), read with a raw system call: a runtime one would wake the
// runtime's monitor thread.
func processCPU() time.Duration {
	var ts unix.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_PROCESS_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
