package main

import (
	"net"
	"syscall"
)

// setRcvLowat sets SO_RCVLOWAT on a TCP connection: readiness (and so the
// reader's wake-up) waits for n bytes.
func setRcvLowat(nc net.Conn, n int) error {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	}); err != nil {
		return err
	}
	return serr
}
