package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// The bench report's section on what is usual (issue 30): the scripted
// week on the fake clock (TestSimWeek), the baseline's size
// (TestSizePerQuantity) and the sample loop's CPU with and without
// baselines (BenchmarkSample). `bench -only usual` measures only this and
// splices it into an existing report.

const usualHeading = "What is usual: baselines, the unusual rule and the unusual gate"

// usualFigures are the section's measurements.
type usualFigures struct {
	week      []map[string]string // TestSimWeek's WEEK lines
	size      map[string]string   // TestSizePerQuantity's BASELINE line
	sample    map[string]map[string]float64
	sizeBench map[string]map[string]float64
}

func measureUsual(ctx context.Context) (usualFigures, error) {
	var f usualFigures
	out, err := exec.CommandContext(ctx, "go", "test", "-run", "^TestSimWeek$", "-count", "1", "-v", "./heartbeat").CombinedOutput()
	if err != nil {
		return f, fmt.Errorf("go test -run TestSimWeek: %w\n%s", err, out)
	}
	f.week = markerLines(string(out), "WEEK")
	out, err = exec.CommandContext(ctx, "go", "test", "-run", "^TestSizePerQuantity$", "-count", "1", "-v", "./baseline").CombinedOutput()
	if err != nil {
		return f, fmt.Errorf("go test -run TestSizePerQuantity: %w\n%s", err, out)
	}
	if sz := markerLines(string(out), "BASELINE"); len(sz) == 1 {
		f.size = sz[0]
	} else {
		return f, fmt.Errorf("TestSizePerQuantity printed %d BASELINE lines, want 1:\n%s", len(sz), out)
	}
	if f.sample, err = goBench(ctx, "./heartbeat", "BenchmarkSample$", "20000x"); err != nil {
		return f, err
	}
	if f.sizeBench, err = goBench(ctx, "./baseline", "BenchmarkSetSize$", "2000x"); err != nil {
		return f, err
	}
	return f, nil
}

// weekLine returns the WEEK line that has key (and, when value is not
// empty, key=value).
func (f usualFigures) weekLine(key, value string) map[string]string {
	for _, kv := range f.week {
		if v, ok := kv[key]; ok && (value == "" || v == value) {
			return kv
		}
	}
	return map[string]string{}
}

// usualSummary is the section's rows of the summary table.
func (f usualFigures) usualSummary() [][]string {
	un, db := f.weekLine("gate", "unusual"), f.weekLine("gate", "deadband")
	calls, _ := strconv.Atoi(un["llm_calls"])
	ram, _ := strconv.ParseFloat(f.size["ram_bytes_per_quantity"], 64)
	file, _ := strconv.ParseFloat(f.size["file_bytes_per_quantity"], 64)
	off, on := f.sample["BenchmarkSample/baselines=off"], f.sample["BenchmarkSample/baselines=on"]
	return [][]string{
		{"LLM calls on the scripted week's event day, `gate = \"unusual\"` / `\"deadband\"` (`TestSimWeek`)",
			fmt.Sprintf("%s / %s (the event reached the LLM: %s)", un["llm_calls"], db["llm_calls"], orNone(un["event_calls"])), "unusual ≤ 4 (issue 30)", verdict(calls > 0 && calls <= 4 && un["event_calls"] != "")},
		{"a baseline's size per quantity, RAM / state file (`TestSizePerQuantity`)", fmt.Sprintf("%.0f B / %.0f B", ram, file), "≤ 2 KB each (issue 30)", verdict(ram > 0 && ram <= 2048 && file > 0 && file <= 2048)},
		{"CPU per sample, 16 readings, without / with baselines (`BenchmarkSample`, cpu-ns/op)",
			fmt.Sprintf("%s / %s", us(off["cpu-ns/op"]), us(on["cpu-ns/op"])), "", ""},
	}
}

func orNone(s string) string {
	if s == "" {
		return "no"
	}
	return s
}

func us(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1e3) }

// writeUsual writes the section.
func (f usualFigures) writeUsual(r *report, env [][]string) {
	r.h(2, usualHeading)
	r.p("`go test ./heartbeat -run '^TestSimWeek$' -v` (measured%s): the sim board's scripted week (`sim = { script = \"week\" }` on air: nights 15 °C, afternoons 30 °C in Europe/Berlin, ±0.25 °C of seeded noise, and on day 4 28 °C from 02:45 to 03:30 with a quarter hour's climb and fall) plus the board's health, on the fake clock at config.toml's defaults (30 s samples, 30 m heartbeats, max_quiet 6 h), through the real sample loop, rules and gate, one engine per row below, all in the same run.", measuredWhen(env))
	rows := [][]string{}
	for _, kv := range f.week {
		switch {
		case kv["unusual_rule"] != "":
			rows = append(rows, []string{"`unusual(air.temperature) > 4` over the week", kv["unusual_rule"]})
		case kv["best_catching"] != "":
			rows = append(rows, []string{"the fixed threshold that catches the event with the fewest false alarms (of `air.temperature > T` and `< T`, T every 0.5 °C from 10 to 35, 1 °C hysteresis)", kv["best_catching"]})
		case kv["best_silent"] != "":
			rows = append(rows, []string{"the lowest fixed threshold that stays silent all week", kv["best_silent"]})
		}
	}
	r.table([]string{"rule", "what it did"}, rows)
	r.p("LLM calls on the event's day (day %s, local midnight to midnight, after the warm-up), by gate; each gate's engine has a counting LLM and no rules, so every call is the gate's or max_quiet's; the last row is the unusual gate with config.toml's `unusual_night` rule, whose firing and resolving are two calls of their own:", f.weekLine("gate", "unusual")["day"])
	var grows [][]string
	for _, g := range []string{"unusual", "deadband", "unusual+rule"} {
		kv := f.weekLine("gate", g)
		grows = append(grows, []string{"`" + g + "`", kv["heartbeats"], kv["llm_calls"], orNone(kv["event_calls"]), kv["reasons"], kv["per_day"]})
	}
	r.table([]string{"gate", "heartbeats", "LLM calls", "calls during the event", "runs by outcome/reason", "LLM calls on days 0–6"}, grows)
	ram, _ := strconv.ParseFloat(f.size["ram_bytes_per_quantity"], 64)
	file, _ := strconv.ParseFloat(f.size["file_bytes_per_quantity"], 64)
	r.p("A baseline's size per quantity (`go test ./baseline -run TestSizePerQuantity`, a full baseline: 24 bins and the 24 h warm-up ring in use): %.0f B in RAM (the bytes its first observation allocates, the map's growth and the key included) and %.0f B in the state file (its share of the encoding the heartbeat commits).", ram, file)
	r.p("The sample loop's CPU per sample (`go test ./heartbeat -bench BenchmarkSample`: the five-sensor sim board plus the board's health, 16 readings, 30 s apart on the fake clock after two days, so the baselines are ready; baselines=off is the same loop with the wall clock before the build time, where the engine feeds no baseline, and without the `unusual()` rule: the sample loop as before issue 30; cpu-ns/op is getrusage of the test process). Encoding a full set of 16 quantities for the heartbeat's commit: `BenchmarkSetSize`.")
	var brows [][]string
	for _, n := range []string{"BenchmarkSample/baselines=off", "BenchmarkSample/baselines=on"} {
		v := f.sample[n]
		brows = append(brows, []string{n, us(v["ns/op"]), us(v["cpu-ns/op"]), fmt.Sprintf("%.0f", v["B/op"]), fmt.Sprintf("%.0f", v["allocs/op"]), fmt.Sprintf("%.0f", v["baselines"])})
	}
	if v, ok := f.sizeBench["BenchmarkSetSize"]; ok {
		brows = append(brows, []string{"BenchmarkSetSize (MarshalBinary of 16 quantities)", us(v["ns/op"]), "", "", "", "16"})
	}
	r.table([]string{"benchmark", "wall/op", "cpu/op", "B/op", "allocs/op", "baselines"}, brows)
}

// spliceUsual measures the section alone and splices it, and its summary
// rows, into the report at path (spliceReport).
func spliceUsual(ctx context.Context, path string) error {
	f, err := measureUsual(ctx)
	if err != nil {
		return err
	}
	r := &report{}
	f.writeUsual(r, environment())
	if err := spliceReport(path, usualHeading, r, f.usualSummary()...); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bench: spliced", usualHeading, "into", path)
	return nil
}

// measuredWhen is ", date D, commit C" from env, for a section that says
// when it was measured.
func measuredWhen(env [][]string) string {
	when := ""
	for _, kv := range env {
		if kv[0] == "date" || kv[0] == "commit" {
			when += ", " + kv[0] + " " + kv[1]
		}
	}
	return when
}

// spliceReport puts section, a measured section under heading, and its
// summary rows into the report at path, replacing those of an earlier run
// or adding them: the section before "What the memory figures mean", the
// rows at the end of the summary table. `bench -only` splices this way.
func spliceReport(path, heading string, section *report, rows ...[]string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := spliceSection(string(doc), "## "+heading+"\n", "## What the memory figures mean\n", section.b.String())
	for _, row := range rows {
		text = spliceRow(text, "## Summary against the targets of issue 11\n", row)
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// spliceSection replaces the section that starts with heading (up to the
// next "## ") by section, or inserts section before the line before.
func spliceSection(doc, heading, before, section string) string {
	if i := strings.Index(doc, heading); i >= 0 {
		end := len(doc)
		if j := strings.Index(doc[i+len(heading):], "\n## "); j >= 0 {
			end = i + len(heading) + j + 1
		}
		return doc[:i] + section + doc[end:]
	}
	if i := strings.Index(doc, before); i >= 0 {
		return doc[:i] + section + doc[i:]
	}
	return doc + "\n" + section
}

// spliceRow replaces the table row of the first table after heading whose
// first cell is row[0], or appends row to that table.
func spliceRow(doc, heading string, row []string) string {
	line := "| " + strings.Join(row, " | ") + " |\n"
	i := strings.Index(doc, heading)
	if i < 0 {
		return doc
	}
	t := i + strings.Index(doc[i:], "\n|") + 1 // the table's first line
	end := t + strings.Index(doc[t:], "\n\n") + 1
	lines := strings.SplitAfter(doc[t:end], "\n")
	for k, l := range lines {
		if strings.HasPrefix(l, "| "+row[0]+" |") {
			lines[k] = line
			return doc[:t] + strings.Join(lines, "") + doc[end:]
		}
	}
	return doc[:end] + line + doc[end:]
}
