package uasc

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a connection's socket with raw system calls,
// waiting for it through Go's network poller as net.Conn does. A raw
// call skips the runtime's system-call bookkeeping: its entersyscall
// wakes the runtime's monitor thread when the process was idle, a
// context switch or two for each request that arrives on an idle
// connection, more than the read itself costs. The socket is
// non-blocking (Go made it so), so a raw call never blocks the thread.
// Reads and writes keep their state apart: one goroutine reads while
// another writes.
type rawIO struct {
	rc syscall.RawConn
	r  rawOp
	w  rawOp
	t  rawOp  // ReadAvailable's read, which never waits
	q  roomOp // WriteRoom's
	// waits counts the reads that found nothing and waited for the
	// socket, the goroutine parked.
	waits uint64
}

// rawOp is the state of the one read, or the one write, in progress;
// its function is made once, so that a call does not allocate.
type rawOp struct {
	buf   []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// newRawIO returns the rawIO of nc, nil when nc is not a socket of this
// kind (a pipe in tests, a TLS wrapper): nc's own Read and Write serve.
func newRawIO(nc net.Conn) *rawIO {
	if _, ok := nc.(*net.TCPConn); !ok {
		return nil
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	x := &rawIO{rc: rc}
	x.r.fn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(x.r.buf))), uintptr(len(x.r.buf)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				x.waits++
				return false // wait until readable
			}
			x.r.n, x.r.errno = int(n), e
			return true
		}
	}
	x.w.fn = func(fd uintptr) bool {
		for len(x.w.buf) > 0 {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(x.w.buf))), uintptr(len(x.w.buf)))
			switch e {
			case 0:
				x.w.n += int(n)
				x.w.buf = x.w.buf[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				x.w.errno = e
				return true
			}
		}
		return true
	}
	x.initPoll()
	return x
}

// read is net.Conn's Read: at least one byte, io.EOF at the end of the
// stream, the poller's error (a deadline, a closed connection) as is.
func (x *rawIO) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	x.r.buf, x.r.n, x.r.errno = p, 0, 0
	err := x.rc.Read(x.r.fn)
	x.r.buf = nil
	switch {
	case err != nil:
		return 0, err
	case x.r.errno != 0:
		return 0, os.NewSyscallError("read", x.r.errno)
	case x.r.n == 0:
		return 0, io.EOF
	}
	return x.r.n, nil
}

// write is net.Conn's Write: all of b, or an error.
func (x *rawIO) write(b []byte) (int, error) {
	x.w.buf, x.w.n, x.w.errno = b, 0, 0
	err := x.rc.Write(x.w.fn)
	n := x.w.n
	x.w.buf = nil
	switch {
	case err != nil:
		return n, err
	case x.w.errno != 0:
		return n, os.NewSyscallError("write", x.w.errno)
	}
	return n, nil
}
