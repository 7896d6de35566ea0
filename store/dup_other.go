//go:build !unix

package store

import "os"

// dupFile opens f's file again where a descriptor cannot be duplicated.
func dupFile(f *os.File) (*os.File, error) {
	if d, err := os.OpenFile(f.Name(), os.O_RDWR, 0); err == nil {
		return d, nil
	}
	return os.Open(f.Name())
}
