package main

import (
	"flag"
	"fmt"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vigil-iot/vigil/board"
	"github.com/vigil-iot/vigil/internal/buildinfo"
)

// Stamped by the Makefile with -ldflags "-X main.version=... -X main.commit=... -X main.buildDate=...".
// buildDate is the commit's date, so builds stay reproducible.
var (
	version   = "dev"
	commit    = ""
	buildDate = "" // RFC 3339
)

// buildTime is the earliest plausible wall-clock time for this binary.
func buildTime() time.Time { return buildinfo.Time(buildDate) }

func (e *env) cmdVersion(args []string) error {
	var boards bool
	if _, err := e.flags("version", args, func(fs *flag.FlagSet) { fs.BoolVar(&boards, "boards", false, "list board profiles") }, 0); err != nil {
		return err
	}
	arch := runtime.GOOS + "/" + runtime.GOARCH
	if a := buildinfo.Arm(); a != "" {
		arch += " " + a
	}
	fmt.Fprintf(e.stdout, "vigil %s\ncommit %s\nbuilt %s\n%s %s\n", version, buildinfo.Revision(commit), buildTime().Format(time.RFC3339), runtime.Version(), arch)
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
