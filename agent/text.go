package agent

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/redact"
)

// The text fallback for models that answer in prose (SPEC §4).
const (
	okToken = "HEARTBEAT_OK"
	okSlack = 300 // characters besides the token that still count as ok
)

// Kinds of text answers.
const (
	textOK = iota
	textAlert
	textOther
)

// ParseText turns a text answer into a decision: HEARTBEAT_OK at the start
// or the end (after stripping markdown, whitespace and punctuation) with at
// most 300 other characters is ok; text starting with "ALERT:" is an alert
// (severity warning, or the one named next: "ALERT: critical: ..."); anything
// else is an alert carrying the text, so nothing is silently dropped. An
// ALERT: prefix wins over a HEARTBEAT_OK at the end.
func ParseText(s string) Decision {
	d, _ := parseText(s, nil)
	return d
}

// parseText is ParseText with the summary cut by red (redacted first).
func parseText(s string, red *redact.Redactor) (Decision, int) {
	t := strings.NewReplacer("**", "", "`", "").Replace(dropFences(s))
	lead := strings.TrimLeftFunc(t, isTokenTrim)
	if len(lead) >= 6 && foldEqual(lead[:6], "ALERT:") {
		rest := trimSummary(lead[6:])
		sev := alert.Warning
		for _, name := range []string{"critical", "warning", "info"} {
			for _, p := range []string{name + ":", "[" + name + "]", "(" + name + ")"} {
				if len(rest) >= len(p) && foldEqual(rest[:len(p)], p) {
					sev, _ = alert.ParseSeverity(name)
					rest = trimSummary(rest[len(p):])
				}
			}
		}
		if rest == "" {
			rest = "the model raised an alert without a summary"
		}
		return Decision{Outcome: OutcomeAlert, Severity: sev, Summary: red.Clip(oneLine(rest), summaryMax)}, textAlert
	}
	core := trimToken(t)
	n := len(okToken)
	if len(core) >= n && foldEqual(core[:n], okToken) && boundary(core[n:], true) {
		if rest := trimToken(core[n:]); utf8.RuneCountInString(rest) <= okSlack {
			return Decision{Outcome: OutcomeOK, Summary: red.Clip(oneLine(rest), summaryMax)}, textOK
		}
	}
	if len(core) >= n && foldEqual(core[len(core)-n:], okToken) && boundary(core[:len(core)-n], false) {
		if rest := trimToken(core[:len(core)-n]); utf8.RuneCountInString(rest) <= okSlack {
			// Keep the sentence's own final period, drop a separator before the token.
			rest = strings.TrimRight(trimSummary(core[:len(core)-n]), ":-—–,; \t\n")
			return Decision{Outcome: OutcomeOK, Summary: red.Clip(oneLine(rest), summaryMax)}, textOK
		}
	}
	summary := red.Clip(oneLine(trimSummary(t)), summaryMax)
	if summary == "" {
		summary = "the model answered with an empty text"
	}
	return Decision{Outcome: OutcomeAlert, Severity: alert.Warning, Summary: summary}, textOther
}

// boundary reports whether the token is not glued to a word: the rest
// (after the token if after, else before it) does not continue the word.
func boundary(rest string, after bool) bool {
	var r rune
	if after {
		r, _ = utf8.DecodeRuneInString(rest)
	} else {
		r, _ = utf8.DecodeLastRuneInString(rest)
	}
	if r == utf8.RuneError {
		return true
	}
	return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}

// dropFences removes markdown code-fence lines (```json ...).
func dropFences(s string) string {
	if !strings.Contains(s, "```") {
		return s
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// trimToken trims whitespace, markup and punctuation around a token.
func trimToken(s string) string {
	return strings.TrimFunc(s, isTokenTrim)
}

func isTokenTrim(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune("*_~#>`\"'“”.!,;:-–—()[]", r)
}

// trimSummary trims whitespace and markup but keeps signs and punctuation.
func trimSummary(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("*_~#>`", r)
	})
}

// foldEqual is strings.EqualFold for ASCII only: the tokens are ASCII, and
// Unicode folding would let "K" (Kelvin sign) spell HEARTBEAT_OK.
func foldEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
