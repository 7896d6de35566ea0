package device

import (
	"fmt"
	"syscall"
)

// diskFree returns the space available to unprivileged users on the
// filesystem holding path, in MB.
func diskFree(path string) (float64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return float64(st.Bavail) * float64(st.Bsize) / (1 << 20), nil
}

// Kernel clock states, adjtimex(2).
const (
	timeError = 5      // TIME_ERROR: the clock is not synchronized
	staUnsync = 0x0040 // STA_UNSYNC
)

// KernelClockSynced reports whether the kernel considers its clock
// synchronized by an NTP daemon (adjtimex(2) with no modes: read only).
func KernelClockSynced() (bool, error) {
	var tx syscall.Timex
	state, err := syscall.Adjtimex(&tx)
	if err != nil {
		return false, fmt.Errorf("adjtimex: %w", err)
	}
	return state != timeError && tx.Status&staUnsync == 0, nil
}
