package sched

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Yielder is the eventfd of one goroutine's Yield; not for concurrent use.
// The zero Yielder, and one where eventfd(2) failed, calls runtime.Gosched.
type Yielder struct {
	f    *os.File
	rc   syscall.RawConn
	read func(fd uintptr) bool
	// parked: read was called once in this Yield, wrote the eventfd
	// and returned false, to wait for the poller.
	parked bool
	one    uint64
	buf    [8]byte
}

// New returns a Yielder; Close releases it.
func New() *Yielder {
	y := &Yielder{one: 1}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return y
	}
	f := os.NewFile(uintptr(fd), "eventfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return y
	}
	y.f, y.rc = f, rc
	y.read = func(fd uintptr) bool {
		if !y.parked {
			// Written here, after rc.Read reset the poller's state of
			// the fd: a write before it could be reported and then
			// forgotten, and the wait would never end.
			y.parked = true
			_, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&y.one)), 8)
			return e != 0 // not written: do not wait
		}
		syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&y.buf[0])), 8)
		return true
	}
	return y
}

// Yield lets the other goroutines run, and the network poller report what
// is ready, before the caller goes on. Its system calls are raw: neither
// blocks, and a runtime one would wake the monitor thread.
func (y *Yielder) Yield() {
	if y == nil || y.rc == nil {
		runtime.Gosched()
		return
	}
	y.parked = false
	if err := y.rc.Read(y.read); err != nil {
		runtime.Gosched()
	}
}

// Close releases the eventfd.
func (y *Yielder) Close() {
	if y != nil && y.f != nil {
		y.f.Close()
		y.f, y.rc = nil, nil
	}
}
