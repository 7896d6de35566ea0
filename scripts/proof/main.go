// Command proof measures and tests vigil from the outside and writes the
// reports BENCHMARKS.md and RELIABILITY.md (issues 7 and 11). Every figure in them
// comes from the run that wrote them.
//
//	go run ./scripts/proof bench       -bin bin/vigil -dist dist -o BENCHMARKS.md
//	go run ./scripts/proof reliability -bin bin/vigil -o RELIABILITY.md [-short]
//	go run ./scripts/proof fuzz        -fuzztime 20s [-o fuzz.md]
//	go run ./scripts/proof fleet       -bin bin/vigil -n 1000 -o FLEET.md [-short]
//
// It is a development tool, not part of vigil: it starts the real daemon,
// a local mosquitto and local LLM servers on 127.0.0.1 only, and runs go
// test for the parts that need vigil's fake clock.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: proof bench|reliability|fuzz|fleet [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "bench":
		err = runBench(ctx, args)
	case "reliability":
		err = runReliability(ctx, args)
	case "fuzz":
		err = runFuzz(ctx, args)
	case "fleet":
		err = runFleet(ctx, args)
	default:
		fmt.Fprintf(os.Stderr, "proof: unknown command %q\n", cmd)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "proof:", err)
		os.Exit(1)
	}
}

// common flags
type opts struct {
	bin, dist, out, work string
	keep                 bool
}

func (o *opts) register(fs *flag.FlagSet, out string) {
	fs.StringVar(&o.bin, "bin", "bin/vigil", "the vigil binary to run (make build)")
	fs.StringVar(&o.dist, "dist", "dist", "directory of the cross-compiled binaries (make cross)")
	fs.StringVar(&o.out, "o", out, "report to write (- for stdout)")
	fs.StringVar(&o.work, "work", "", "scratch directory (default: a new temp dir, removed at the end)")
	fs.BoolVar(&o.keep, "keep", false, "keep the scratch directory")
}

// prepare returns the scratch directory, its cleanup and the absolute path
// of the vigil binary, which must exist.
func (o *opts) prepare() (work, bin string, cleanup func(), err error) {
	work, cleanup, err = o.scratch()
	if err != nil {
		return "", "", nil, err
	}
	if bin, err = filepath.Abs(o.bin); err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		cleanup()
		return "", "", nil, fmt.Errorf("vigil binary: %w (make build)", err)
	}
	return work, bin, cleanup, nil
}

func (o *opts) scratch() (string, func(), error) {
	if o.work != "" {
		return o.work, func() {}, os.MkdirAll(o.work, 0o755)
	}
	dir, err := os.MkdirTemp("", "vigil-proof-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() {
		if !o.keep {
			os.RemoveAll(dir)
		}
	}, nil
}
