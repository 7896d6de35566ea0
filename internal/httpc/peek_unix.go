//go:build linux || darwin || freebsd || netbsd || openbsd

package httpc

import (
	"net"
	"syscall"
)

// peekClosed reports whether the peer closed c or sent data, without
// blocking and without consuming anything: a read with a deadline in the
// past would not even reach the socket.
func peekClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false // not a socket (a test's net.Pipe): let the retry cover it
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var (
		buf  [1]byte
		rerr error
	)
	if err := rc.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait
	}); err != nil {
		return true
	}
	// EAGAIN: nothing to read, open and silent. No error: EOF (0 bytes)
	// or data nobody asked for.
	return rerr != syscall.EAGAIN && rerr != syscall.EINTR
}
