package redact

// Cutting policy: text from outside (the model, a provider's error body, a
// chat, another device) that vigil shortens before it keeps or shows it is
// cut here and nowhere else, with Clip or ClipUTF16. Both redact the whole
// text first and cut after, so a secret that straddles the cut is replaced
// whole rather than left in part. Then, in case the text reached them cut
// already (a bounded read, a record from before a secret was known), a
// trailing piece of at least MinPrefix characters that starts a configured
// secret (in any of the forms String replaces) is replaced by Mark too.

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MinPrefix is the length in characters of the shortest start of a
// configured secret that Clip replaces at the end of the text it returns.
const MinPrefix = 6

// The lengths, in characters, at which vigil cuts outside text; ClipUTF16
// counts UTF-16 code units, as Telegram does. FuzzClip and TestClipCuts
// place secrets across each of them (CutLengths).
const (
	CutSummary  = 500 // a decision's summary, a text answer, the scout's reason
	CutNote     = 280 // a note the model keeps (remember)
	CutPrompt   = 200 // the last alert or a sensor error in the prompt
	CutToolCall = 500 // a tool call's arguments as the run records them
	CutError    = 300 // a provider's error message, refusal or reason
	CutArgs     = 200 // tool arguments quoted back to the model in an error
	CutName     = 100 // a tool or sensor name quoted back to the model
	CutValue    = 50  // a tool argument's value quoted back to the model
	CutType     = 40  // a response's type quoted in an error

	CutTelegramText     = 4096 // one Telegram message (UTF-16 code units)
	CutTelegramLine     = 300  // an alert's summary in a Telegram digest line
	CutTelegramCallback = 200  // the answer to a Telegram button
	CutTelegramCommand  = 32   // an unknown Telegram command quoted back
)

// CutLengths lists every length above, for the tests.
var CutLengths = []int{CutSummary, CutNote, CutPrompt, CutToolCall, CutError, CutArgs, CutName, CutValue, CutType,
	CutTelegramText, CutTelegramLine, CutTelegramCallback, CutTelegramCommand}

// Ellipsis is what Clip puts where it cut.
const Ellipsis = "…"

// Clip returns s redacted (String), then shortened to at most n
// characters, the last of them Ellipsis when it was cut; invalid UTF-8
// becomes U+FFFD. A start of a configured secret (MinPrefix characters
// or more) left at the end is replaced by Mark. Below len(Mark)+2
// characters, n may be exceeded by what Mark needs.
func (r *Redactor) Clip(s string, n int) string {
	return r.clip(s, n, Ellipsis, func(rune) int { return 1 })
}

// ClipUTF16 is Clip counting UTF-16 code units, as Telegram does, with
// mark for the cut.
func (r *Redactor) ClipUTF16(s string, n int, mark string) string {
	return r.clip(s, n, mark, utf16.RuneLen)
}

// Tail returns s with a trailing start of a configured secret (MinPrefix
// characters or more) replaced by Mark: for a piece of text that someone
// else cut.
func (r *Redactor) Tail(s string) string {
	if p := r.secretTail(s); p > 0 {
		return s[:len(s)-p] + Mark
	}
	return s
}

func (r *Redactor) clip(s string, n int, mark string, width func(rune) int) string {
	s = strings.ToValidUTF8(r.String(s), "\uFFFD")
	if measure(s, width) <= n {
		if t := r.Tail(s); measure(t, width) <= n {
			return t
		}
	}
	budget := max(n-measure(mark, width), 0)
	head := s[:prefix(s, budget, width)]
	tail := ""
	for {
		p := r.secretTail(head)
		if p == 0 {
			return head + tail + mark
		}
		head, tail = head[:len(head)-p], Mark
		if room := budget - measure(Mark, width); measure(head, width) > room {
			head = head[:prefix(head, max(room, 0), width)]
		}
	}
}

// measure returns the width of s.
func measure(s string, width func(rune) int) int {
	n := 0
	for _, c := range s {
		n += width(c)
	}
	return n
}

// prefix returns the byte length of the longest prefix of s at most n
// wide that ends on a rune boundary.
func prefix(s string, n int, width func(rune) int) int {
	used := 0
	for i, c := range s {
		if used+width(c) > n {
			return i
		}
		used += width(c)
	}
	return len(s)
}

// secretTail returns the byte length of the longest end of s that is a
// start, at least MinPrefix characters long, of a form of a configured
// secret; 0 if there is none.
func (r *Redactor) secretTail(s string) int {
	if r == nil || len(s) == 0 {
		return 0
	}
	rep := r.rep.Load()
	if rep == nil {
		return 0
	}
	best := 0
	for _, f := range rep.needles {
		// Every i where s[i:] could start f: the start of f is in the
		// last len(f) bytes of s.
		for i := max(len(s)-len(f), 0); i < len(s)-best; i++ {
			if s[i] != f[0] || !strings.HasPrefix(f, s[i:]) {
				continue
			}
			if utf8.RuneCountInString(s[i:]) >= MinPrefix {
				best = len(s) - i
			}
			break // the longest for this form
		}
	}
	return best
}
