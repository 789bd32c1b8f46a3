package uasc

import (
	"syscall"
	"testing"
	"unsafe"
)

// BenchmarkSyscallFloor measures what a system call costs on this host
// before any work of its own: the floor under every read, write and
// epoll wait that a request on an idle socket pays (docs/performance.md,
// "Where the open loop's time goes"). getpid does nothing; the read finds
// an empty socket (EAGAIN), as a goroutine's read does after it answered
// a lone request; epoll_pwait with a zero timeout finds nothing, as the
// runtime's look at its poller does before it sleeps.
func BenchmarkSyscallFloor(b *testing.B) {
	b.Run("getpid", func(b *testing.B) {
		for b.Loop() {
			syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
		}
	})
	b.Run("read-empty-socket", func(b *testing.B) {
		a, _ := tcpPair(b)
		rc, err := a.(syscall.Conn).SyscallConn()
		if err != nil {
			b.Fatal(err)
		}
		var fd uintptr
		if err := rc.Control(func(f uintptr) { fd = f }); err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 8192)
		if _, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); e != syscall.EAGAIN {
			b.Fatalf("read of an empty socket: %v, want EAGAIN", e)
		}
		for b.Loop() {
			syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		}
	})
	b.Run("epoll-pwait-none", func(b *testing.B) {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		defer syscall.Close(ep)
		var ev [8]syscall.EpollEvent
		for b.Loop() {
			syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), 0, 0, 0)
		}
	})
}
