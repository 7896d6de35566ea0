package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/board"
)

// Stamped by the Makefile with -ldflags "-X main.version=... -X main.commit=... -X main.buildDate=...".
// buildDate is the commit's date, so builds stay reproducible.
var (
	version   = "dev"
	commit    = ""
	buildDate = "" // RFC 3339
)

// fallbackBuildTime is used when the binary carries no build date: any wall
// clock earlier than this is certainly unsynced.
var fallbackBuildTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// buildTime is the earliest plausible wall-clock time for this binary.
func buildTime() time.Time {
	if t, err := time.Parse(time.RFC3339, buildDate); err == nil {
		return t
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					return t
				}
			}
		}
	}
	return fallbackBuildTime
}

func revision() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func goarm() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOARM" || s.Key == "GORISCV64" {
				return s.Key + "=" + s.Value
			}
		}
	}
	return ""
}

func (e *env) cmdVersion(args []string) error {
	var boards bool
	if _, err := e.flags("version", args, func(fs *flag.FlagSet) { fs.BoolVar(&boards, "boards", false, "list board profiles") }, 0); err != nil {
		return err
	}
	arch := runtime.GOOS + "/" + runtime.GOARCH
	if a := goarm(); a != "" {
		arch += " " + a
	}
	fmt.Fprintf(e.stdout, "vigil %s\ncommit %s\nbuilt %s\n%s %s\n", version, revision(), buildTime().Format(time.RFC3339), runtime.Version(), arch)
	if boards {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "\nBOARD\tI2C BUS\tGOARCH\tDESCRIPTION")
		for _, p := range board.Profiles() {
			a := p.GOARCH
			if p.GOARM != "" {
				a += " GOARM=" + p.GOARM
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.I2CBus, a, p.Description)
		}
		tw.Flush()
	}
	return nil
}
