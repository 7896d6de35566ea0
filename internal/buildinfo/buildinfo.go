// Package buildinfo reads what the Go toolchain recorded in the binary
// (debug.ReadBuildInfo) when the Makefile stamped nothing: the commit, its
// date and GOARM. The stamped values stay package main's (-ldflags -X).
package buildinfo

import (
	"runtime/debug"
	"time"
)

// fallbackTime is used when the binary carries no build date: any wall
// clock earlier than this is certainly unsynced.
var fallbackTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// setting is the build setting key, or "".
func setting(keys ...string) (key, value string) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			for _, k := range keys {
				if s.Key == k {
					return s.Key, s.Value
				}
			}
		}
	}
	return "", ""
}

// Time is the earliest plausible wall-clock time for this binary: stamped
// (RFC 3339), else the commit's date, else a fixed date in 2026.
func Time(stamped string) time.Time {
	if t, err := time.Parse(time.RFC3339, stamped); err == nil {
		return t
	}
	if _, v := setting("vcs.time"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return fallbackTime
}

// Revision is the commit: stamped, else the toolchain's, else "unknown".
func Revision(stamped string) string {
	if stamped != "" {
		return stamped
	}
	if _, v := setting("vcs.revision"); v != "" {
		return v
	}
	return "unknown"
}

// Arm is "GOARM=7" (or "GORISCV64=rva20u64") when the toolchain recorded
// one, else "".
func Arm() string {
	if k, v := setting("GOARM", "GORISCV64"); k != "" {
		return k + "=" + v
	}
	return ""
}
