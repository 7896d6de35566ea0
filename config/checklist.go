package config

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxChecklistSize caps HEARTBEAT.md: it goes into every LLM prompt.
const MaxChecklistSize = 16 << 10

// ChecklistTemplate is written to heartbeat.checklist when the file is
// missing. Everything in it is a heading or an HTML comment, so it counts as
// empty: a fresh device spends no LLM tokens until someone writes a check.
const ChecklistTemplate = `# Heartbeat checklist

<!--
Every heartbeat (heartbeat.interval), vigil shows this list to the LLM
together with the latest sensor readings, their recent history and the
state of your [[rule]]s, and asks: is anything here worth telling a human?

Write plain sentences, one check per line. Keep it short: this text goes
into every prompt. Hard limits that must alert within seconds belong in
[[rule]] entries in config.toml, which run locally without the LLM.

While this file holds only headings and comments like this one, the LLM
is never called. Uncomment or write a line below to start.
-->

## Checks

<!-- - Greenhouse air should stay between 10 and 32 °C during the day (air.temperature). -->
<!-- - Humidity above 90 % for more than an hour means the vent is stuck (air.humidity). -->
<!-- - Warn if the board is throttled or under-voltage, or the disk is over 90 % full. -->
<!-- - Freezer (freezer.temperature) must stay below -15 °C; a slow upward trend over
       a few hours is worth a warning even before a rule fires. -->
<!-- - If the soil sensor keeps failing, say so once, not every run. -->
`

// ParseChecklist reads a HEARTBEAT.md. text is the checklist with HTML
// comments removed and blank runs collapsed; empty reports that it holds
// nothing to check: only blank lines, markdown headings, HTML comments
// (possibly spanning lines) and lines with nothing but list markers.
//
// Every way a checklist arrives (the file at each run, vigil checklist
// set, MQTT's cmd/checklist, Telegram, the page) comes through here, so
// this is where a checklist with a control character other than a tab or
// a newline (a CR of a CRLF line end is one) is refused, naming its line:
// it is shown on terminals and pages, and goes into every prompt.
func ParseChecklist(r io.Reader) (text string, empty bool, err error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxChecklistSize+1))
	if err != nil {
		return "", false, fmt.Errorf("read checklist: %w", err)
	}
	if len(b) > MaxChecklistSize {
		return "", false, fmt.Errorf("checklist is larger than %d KiB: it goes into every LLM prompt, keep it short", MaxChecklistSize>>10)
	}
	if !utf8.Valid(b) {
		line := 1 + strings.Count(string(b[:invalidAt(b)]), "\n")
		return "", false, fmt.Errorf("checklist line %d: not valid UTF-8", line)
	}
	s := strings.ReplaceAll(string(b), "\ufeff", "") // byte order marks, anywhere
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if r, at, ok := ControlChar(s, "\t\n"); ok {
		line := 1 + strings.Count(s[:at], "\n")
		return "", false, fmt.Errorf("checklist line %d: must not contain %s, a control character: only tabs and newlines may be in a checklist; remove it", line, DescribeRune(r))
	}
	for { // removing "<!--x-->" from "<!<!--x-->--y-->" makes a new comment
		t := stripComments(s)
		if t == s {
			break
		}
		s = t
	}

	var out []string
	empty = true
	blank := true // the previous output line was blank
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if strings.TrimSpace(line) == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, line)
		blank = false
		if hasContent(line) {
			empty = false
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n")), empty, nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// stripComments removes <!-- ... --> comments; an unterminated comment runs
// to the end, as in CommonMark. A comment spanning lines leaves one newline
// so the lines around it stay apart.
func stripComments(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+4:]
		j := strings.Index(rest, "-->")
		if j < 0 {
			return b.String()
		}
		if strings.Contains(rest[:j], "\n") {
			b.WriteByte('\n')
		}
		s = rest[j+3:]
	}
}

// hasContent reports whether a line says something: it is not a heading,
// and after list markers ("-", "*", "+", "1.", "[ ]", ">") something with a
// letter or digit remains.
func hasContent(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "#") {
		return false
	}
	for {
		prev := t
		t = strings.TrimLeft(t, "-*+> \t")
		if d := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }); d > 0 && d < len(t) && (t[d] == '.' || t[d] == ')') {
			if d+1 == len(t) || t[d+1] == ' ' || t[d+1] == '\t' {
				t = t[d+1:]
			}
		}
		for _, box := range []string{"[ ]", "[x]", "[X]"} {
			t = strings.TrimPrefix(t, box)
		}
		if t == prev {
			break
		}
	}
	return strings.ContainsFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}
