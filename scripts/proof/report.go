package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// report is a Markdown document built section by section.
type report struct {
	b strings.Builder
}

func (r *report) p(format string, args ...any) {
	fmt.Fprintf(&r.b, format, args...)
	r.b.WriteString("\n\n")
}

func (r *report) h(level int, title string) {
	r.b.WriteString(strings.Repeat("#", level) + " " + title + "\n\n")
}

// table writes a Markdown table; cells are written as given.
func (r *report) table(head []string, rows [][]string) {
	r.b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---"
	}
	r.b.WriteString("| " + strings.Join(sep, " | ") + " |\n")
	for _, row := range rows {
		r.b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	r.b.WriteString("\n")
}

func (r *report) write(path string) error {
	if path == "-" {
		_, err := os.Stdout.WriteString(r.b.String())
		return err
	}
	return os.WriteFile(path, []byte(r.b.String()), 0o644)
}

// environment describes the machine and the tree the figures came from.
func environment() [][]string {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "unknown"
	if kb, err := parseStatusKBFile("/proc/meminfo", "MemTotal"); err == nil {
		mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	kernel := strings.TrimSpace(run("uname", "-sr"))
	goVer := strings.TrimSpace(run("go", "env", "GOVERSION"))
	commit := strings.TrimSpace(run("git", "rev-parse", "--short=12", "HEAD"))
	if strings.TrimSpace(run("git", "status", "--porcelain", "--untracked-files=no")) != "" {
		commit += " (with uncommitted changes)"
	}
	return [][]string{
		{"date", time.Now().UTC().Format("2006-01-02 15:04 UTC")},
		{"commit", commit},
		{"Go", goVer},
		{"machine", fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s RAM", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), mem)},
		{"kernel", kernel},
	}
}

func parseStatusKBFile(path, field string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseStatusKB(string(b), field)
}

func run(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	return string(out)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func pass(ok bool) string {
	if ok {
		return "pass"
	}
	return "**FAIL**"
}

func mb(bytes int64) string { return fmt.Sprintf("%.2f MB", float64(bytes)/1e6) }

func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }
