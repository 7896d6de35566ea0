package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestReliabilityReportCells: the committed RELIABILITY.md has a figure in
// every cell of every table (it once showed blanks for "size day 2" and
// "pages day 2", the report reading keys the soak test no longer printed).
func TestReliabilityReportCells(t *testing.T) {
	b, err := os.ReadFile("../../RELIABILITY.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range emptyCells(string(b)) {
		t.Errorf("RELIABILITY.md: %s", c)
	}
}

// TestEmptyCells: the check finds a blank cell, and a blank left inside a
// cell's text by a missing figure (two spaces where it should be).
func TestEmptyCells(t *testing.T) {
	md := "## Soak\n\n| days | size |\n| --- | --- |\n| 3 |  |\n\n## Summary\n\n| check | result |\n| --- | --- |\n| soak | pages in use  → 252 |\n| ok | 1 → 2 |\n"
	got := emptyCells(md)
	if len(got) != 2 || !strings.Contains(got[0], "Soak") || !strings.Contains(got[0], "size") || !strings.Contains(got[1], "result") {
		t.Errorf("emptyCells = %q, want the Soak table's size cell and the Summary's blank in result", got)
	}
}

// TestFigMissing: a key a test's marker line lacks reads as an honest n/a
// naming it, and fails the report's check that every figure was measured.
func TestFigMissing(t *testing.T) {
	e := &relEnv{}
	k := e.figs("SOAK", map[string]string{"size_full": "1048576"})
	if got := k.get("size_full"); got != "1048576" {
		t.Errorf("get(size_full) = %q", got)
	}
	if got := k.get("size_day2"); got != "n/a (no size_day2 in the SOAK line)" {
		t.Errorf("get(size_day2) = %q, want an n/a naming the key and the line", got)
	}
	e.checkFigures()
	last := e.checks[len(e.checks)-1]
	if last.ok || !strings.Contains(last.result, "SOAK size_day2") {
		t.Errorf("the figures check = %+v, want a failure naming SOAK size_day2", last)
	}
}

// TestSoakReport runs the short soak (the real heartbeat test, about 3 s)
// and renders its rows: the report and the test agree on every key.
func TestSoakReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test ./heartbeat")
	}
	t.Chdir("../..")
	e := &relEnv{short: true}
	e.soak(context.Background())
	e.checkFigures()
	r := &report{}
	e.writeChecks(r)
	for _, c := range e.checks {
		if !c.ok {
			t.Errorf("check failed: %+v", c)
		}
	}
	for _, c := range emptyCells(r.b.String()) {
		t.Errorf("soak report: %s", c)
	}
	if !strings.Contains(r.b.String(), "## Soak") {
		t.Errorf("no Soak section in:\n%s", r.b.String())
	}
}

// emptyCells lists the table cells of a Markdown report that hold no
// figure: blank body cells, and cells with a blank inside (two spaces in a
// row, where a formatted figure came out empty). Header rows may be blank.
func emptyCells(md string) []string {
	var out []string
	heading := "(top)"
	var head []string
	row := -1 // -1: no table; 0: the separator next; >0: body rows
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
		if !strings.HasPrefix(line, "|") {
			row = -1
			continue
		}
		cells := tableCells(line)
		switch row {
		case -1:
			head, row = cells, 0
			continue
		case 0:
			row = 1
			continue
		}
		for i, c := range cells {
			col := fmt.Sprint(i + 1)
			if i < len(head) && head[i] != "" {
				col = fmt.Sprintf("%q", head[i])
			}
			switch {
			case c == "":
				out = append(out, fmt.Sprintf("under %q, row %d, column %s: empty", heading, row, col))
			case strings.Contains(c, "  "):
				out = append(out, fmt.Sprintf("under %q, row %d, column %s: a figure is missing in %q", heading, row, col, c))
			}
		}
		row++
	}
	return out
}

// tableCells splits a Markdown table row at its unescaped pipes and trims
// each cell.
func tableCells(line string) []string {
	var cells []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	if len(cells) > 0 {
		cells = cells[1:] // before the first pipe
	}
	return cells
}
