//go:build !unix

package main

import (
	"errors"
	"os"
)

// devIno: there is no journal off Unix.
func devIno(*os.File) (dev, ino uint64, err error) { return 0, 0, errors.ErrUnsupported }
