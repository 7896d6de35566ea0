package setup

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// HiddenReader returns a function that reads one line from in (a
// terminal) with echo off, restoring the terminal after. It reads through
// r, the reader the other answers come from, so typed-ahead input is not
// lost.
func HiddenReader(f *os.File, r *bufio.Reader) func() (string, error) {
	return func() (string, error) {
		fd := int(f.Fd())
		old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return "", fmt.Errorf("read secret: stdin is not a terminal: %w", err)
		}
		noEcho := *old
		noEcho.Lflag &^= unix.ECHO
		noEcho.Lflag |= unix.ICANON
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &noEcho); err != nil {
			return "", fmt.Errorf("read secret: turn echo off: %w", err)
		}
		// Echo comes back however the read ends: a Ctrl-C or SIGTERM ends
		// the process (cmd/vigil's stop deadline) before a defer would run.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			select {
			case <-sigs:
				_ = unix.IoctlSetTermios(fd, unix.TCSETS, old)
			case <-done:
			}
		}()
		defer func() {
			signal.Stop(sigs)
			close(done)
			_ = unix.IoctlSetTermios(fd, unix.TCSETS, old)
		}()
		s, err := r.ReadString('\n')
		if err != nil && s == "" {
			return "", errEOF
		}
		return s, nil
	}
}
