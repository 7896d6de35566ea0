//go:build !linux

package setup

import (
	"bufio"
	"os"
	"os/exec"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// HiddenReader returns a function that reads one line from in with echo
// off (stty -echo), restoring the terminal after.
func HiddenReader(f *os.File, r *bufio.Reader) func() (string, error) {
	return func() (string, error) {
		stty := func(arg string) {
			c := exec.Command("stty", arg)
			c.Stdin = f
			_ = c.Run()
		}
		stty("-echo")
		defer stty("echo")
		s, err := r.ReadString('\n')
		if err != nil && s == "" {
			return "", errEOF
		}
		return s, nil
	}
}
