package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

type fuzzTarget struct{ pkg, name string }

type fuzzResult struct {
	fuzzTarget
	execs, interesting string
	ok                 bool
	detail             string
}

// fuzzTargets lists every Fuzz function in the module: go test -list prints
// the names, then an "ok <package>" line for each package.
func fuzzTargets(ctx context.Context) ([]fuzzTarget, error) {
	out, err := exec.CommandContext(ctx, "go", "test", "-list", "^Fuzz", "./...").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test -list: %w\n%s", err, tail(string(out), 10))
	}
	var res []fuzzTarget
	var names []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && strings.HasPrefix(f[0], "Fuzz"):
			names = append(names, f[0])
		case len(f) >= 2 && f[0] == "ok":
			for _, n := range names {
				res = append(res, fuzzTarget{pkg: f[1], name: n})
			}
			names = nil
		}
	}
	return res, nil
}

var fuzzProgress = regexp.MustCompile(`execs: (\d+) .*new interesting: (\d+)`)

func fuzzAll(ctx context.Context, targets []fuzzTarget, d time.Duration) []fuzzResult {
	var res []fuzzResult
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(os.Stderr, "fuzz: %s %s for %s\n", t.pkg, t.name, d)
		cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-fuzz", "^"+t.name+"$", "-fuzztime", d.String(), t.pkg)
		out, err := cmd.CombinedOutput()
		r := fuzzResult{fuzzTarget: t, ok: err == nil}
		if m := fuzzProgress.FindAllStringSubmatch(string(out), -1); len(m) > 0 {
			r.execs, r.interesting = m[len(m)-1][1], m[len(m)-1][2]
		}
		if err != nil {
			r.detail = tail(string(out), 12)
			fmt.Fprintln(os.Stderr, r.detail)
		}
		res = append(res, r)
	}
	return res
}

func fuzzRows(res []fuzzResult) [][]string {
	var rows [][]string
	for _, r := range res {
		result := "no failure"
		if !r.ok {
			result = "**FAIL** (input saved under testdata/fuzz)"
		}
		rows = append(rows, []string{strings.TrimPrefix(r.pkg, "github.com/vigil-iot/vigil/"), r.name, r.execs, r.interesting, result})
	}
	return rows
}

// runFuzz is make fuzz: every target for a fixed time, a table on stdout
// (or -o), non-zero exit if any failed.
func runFuzz(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fuzz", flag.ExitOnError)
	d := fs.Duration("fuzztime", 30*time.Second, "fuzzing time per target")
	out := fs.String("o", "-", "where to write the result table")
	fs.Parse(args)
	targets, err := fuzzTargets(ctx)
	if err != nil {
		return err
	}
	res := fuzzAll(ctx, targets, *d)
	r := &report{}
	r.h(2, fmt.Sprintf("Fuzzing, %s per target", *d))
	r.table([]string{"package", "target", "execs", "new interesting", "result"}, fuzzRows(res))
	if err := r.write(*out); err != nil {
		return err
	}
	for _, x := range res {
		if !x.ok {
			return fmt.Errorf("%s %s failed:\n%s", x.pkg, x.name, x.detail)
		}
	}
	return nil
}
