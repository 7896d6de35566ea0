package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// The bench report's figure for issue 31: the backtest of a proposed rule
// (BenchmarkBacktest: one rule over 48 h of one-minute history for 20
// quantities), on this machine and as arm64 under qemu-user. `bench -only
// backtest` measures only this and splices it into an existing report.

const backtestHeading = "The backtest of a proposed rule"

// backtestFigures are BenchmarkBacktest's results per GOARCH.
type backtestFigures struct {
	amd64, arm64 map[string]float64
	arm64Err     error
}

// goBenchArch is goBench for another GOARCH, its test binary run by exec
// (qemu-aarch64-static).
func goBenchArch(ctx context.Context, pkg, re, benchtime, goarch, execProg string) (map[string]map[string]float64, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-exec", execProg, "-run", "^$", "-bench", re, "-benchtime", benchtime, "-count", "1", pkg)
	cmd.Env = append(os.Environ(), "GOARCH="+goarch)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("GOARCH=%s go test -exec %s -bench %s %s: %w\n%s", goarch, execProg, re, pkg, err, out)
	}
	return parseBench(string(out)), nil
}

func measureBacktest(ctx context.Context) (backtestFigures, error) {
	var f backtestFigures
	b, err := goBench(ctx, "./heartbeat", "BenchmarkBacktest$", "50x")
	if err != nil {
		return f, err
	}
	f.amd64 = b["BenchmarkBacktest"]
	b, f.arm64Err = goBenchArch(ctx, "./heartbeat", "BenchmarkBacktest$", "10x", "arm64", "qemu-aarch64-static")
	if f.arm64Err == nil {
		f.arm64 = b["BenchmarkBacktest"]
	}
	return f, nil
}

func benchMS(v map[string]float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", v["ns/op"]/1e6)
}

// backtestSummary is the section's row of the summary table.
func (f backtestFigures) backtestSummary() []string {
	return []string{"the backtest of one rule, 48 h of one-minute history × 20 quantities (`BenchmarkBacktest`), amd64 / arm64 under qemu-user",
		benchMS(f.amd64) + " / " + benchMS(f.arm64), "", ""}
}

func (f backtestFigures) writeBacktest(r *report, env [][]string) {
	r.h(2, backtestHeading)
	r.p("`go test ./heartbeat -run '^$' -bench BenchmarkBacktest` (measured%s), and the same as arm64 under qemu-user: `GOARCH=arm64 go test -exec qemu-aarch64-static -run '^$' -bench BenchmarkBacktest ./heartbeat/`. One proposed rule replayed through the sample loop's evaluator over 48 h of one-minute history rows for 20 quantities (2,880 rows), what vigil does once per proposal before a person sees it. Under qemu-user every arm64 instruction is emulated on this machine: the figure shows the arm64 build works and what emulation costs, not what a Pi takes.", measuredWhen(env))
	var rows [][]string
	for _, a := range []struct {
		name string
		v    map[string]float64
	}{{"amd64 (this machine)", f.amd64}, {"arm64 under qemu-aarch64-static", f.arm64}} {
		if a.v == nil {
			rows = append(rows, []string{a.name, "not measurable: " + fmt.Sprint(f.arm64Err), "", ""})
			continue
		}
		rows = append(rows, []string{a.name, benchMS(a.v), fmt.Sprintf("%.0f", a.v["B/op"]), fmt.Sprintf("%.0f", a.v["allocs/op"])})
	}
	r.table([]string{"GOARCH", "time/op", "B/op", "allocs/op"}, rows)
}

// spliceBacktest measures the section alone and splices it, and its
// summary row, into the report at path (spliceReport).
func spliceBacktest(ctx context.Context, path string) error {
	start := time.Now()
	f, err := measureBacktest(ctx)
	if err != nil {
		return err
	}
	r := &report{}
	f.writeBacktest(r, environment())
	if err := spliceReport(path, backtestHeading, r, f.backtestSummary()); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bench: spliced", backtestHeading, "into", path, "in", time.Since(start).Round(time.Second))
	return nil
}
