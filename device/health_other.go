//go:build !linux

package device

import "errors"

func diskFree(path string) (float64, error) { return 0, errors.ErrUnsupported }

// KernelClockSynced is only implemented on Linux.
func KernelClockSynced() (bool, error) { return false, errors.ErrUnsupported }
