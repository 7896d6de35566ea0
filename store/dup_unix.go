//go:build unix

package store

import (
	"os"
	"syscall"
)

// dupFile returns a second descriptor of f's open file (one open file
// description: the same offset and flock).
func dupFile(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	if err := rc.Control(func(s uintptr) {
		syscall.ForkLock.RLock()
		fd, derr = syscall.Dup(int(s))
		if derr == nil {
			syscall.CloseOnExec(fd)
		}
		syscall.ForkLock.RUnlock()
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: derr}
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
