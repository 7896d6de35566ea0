package status

import (
	"os"

	"github.com/vigil-iot/vigil/device"
)

// ClockSynced reports whether the clock is known to be synchronised:
// systemd-timesyncd's flag file, else the kernel (adjtimex(2) with
// STA_UNSYNC clear: chrony, ntpd).
func ClockSynced() bool {
	if _, err := os.Stat("/run/systemd/timesync/synchronized"); err == nil {
		return true
	}
	ok, err := device.KernelClockSynced()
	return err == nil && ok
}

// clockWord describes the clock for `vigil status`. "synced" only when the
// system says so; a clock that is merely not earlier than the build date
// (what heartbeats require) is "plausible".
func clockWord(plausible, synced bool) string {
	switch {
	case !plausible:
		return "NOT plausible (earlier than the build date)"
	case synced:
		return "synced"
	default:
		return "plausible (not synchronised by NTP as far as the kernel knows)"
	}
}
