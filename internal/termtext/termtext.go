// Package termtext makes text that came from outside (the model, other
// devices, the broker, a remote checklist or chat) safe to print on a
// person's terminal: control characters are shown escaped, never sent to
// the terminal, where ESC, BEL and their kin clear the screen, set the
// window title, or hide what follows.
//
// Policy: escaped are the C0 controls (U+0000–U+001F), DEL (U+007F), the
// C1 controls (U+0080–U+009F, among them CSI), the bidirectional
// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder
// what a person reads, and bytes that are not UTF-8. Text keeps tab and
// newline (a checklist, a multi-line answer); Line escapes them too (one
// field of one line: a rule name, a summary). An escaped character reads
// as Go writes it in a string: \x1b, \u009b, \u202e, \x00, \t, \n; a byte
// that is not UTF-8 as \xff. Everything else, a backslash included, is
// left as it is.
//
// JSON takes JSON instead: encoding/json escapes the C0 controls but
// writes DEL, C1 and the bidi controls raw, and curl or vigil status
// --json prints them to a terminal; JSON writes those as \u escapes too,
// which decode to the same text.
package termtext

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text returns s with every control character but tab and newline
// escaped.
func Text(s string) string { return escape(s, true) }

// Line returns s with every control character escaped, tab and newline
// too.
func Line(s string) string { return escape(s, false) }

// Print calls write with a buffer and writes what it wrote to w as Text:
// a renderer that writes outside text in many pieces is escaped once, as
// a whole, so no character is split between two writes.
func Print(w io.Writer, write func(io.Writer)) error {
	var b strings.Builder
	write(&b)
	_, err := io.WriteString(w, Text(b.String()))
	return err
}

// JSON returns the JSON document doc (as encoding/json writes it: UTF-8)
// with DEL, the C1 controls and the bidi controls written as \u escapes.
// Outside its strings a JSON document is ASCII, so only strings change,
// and each still decodes to what it did.
func JSON(doc []byte) []byte {
	i := firstUnsafe(string(doc), true)
	if i < 0 {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:i]...)
	for i < len(doc) {
		r, n := utf8.DecodeRune(doc[i:])
		if r != utf8.RuneError && unsafe(r, true) && r >= 0x7f {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, doc[i:i+n]...)
		}
		i += n
	}
	return out
}

// WriteJSON writes v to w as one JSON document indented by two spaces and
// ended by a newline, as a json.Encoder with SetIndent("", "  ") does,
// through JSON.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(JSON(b), '\n'))
	return err
}

func escape(s string, keepLines bool) string {
	i := firstUnsafe(s, keepLines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' && !keepLines:
			b.WriteString(`\t`)
		case r == '\n' && !keepLines:
			b.WriteString(`\n`)
		case unsafe(r, keepLines) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r, keepLines):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe returns the index of the first character of s to escape,
// -1 when there is none.
func firstUnsafe(s string, keepLines bool) int {
	for i, r := range s {
		if unsafe(r, keepLines) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return i
		}
	}
	return -1
}

// unsafe reports whether r is escaped.
func unsafe(r rune, keepLines bool) bool {
	switch {
	case r == '\t' || r == '\n':
		return !keepLines
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
