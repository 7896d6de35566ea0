//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// devIno returns the device and inode numbers of an open file.
func devIno(f *os.File) (dev, ino uint64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("stat %s: no device and inode", f.Name())
	}
	return uint64(st.Dev), uint64(st.Ino), nil
}
