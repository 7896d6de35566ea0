package config

// This file decides which characters text from a person may hold: no
// control character (C0, DEL, C1), since the text is later shown on a
// terminal, where ESC, CSI or OSC sequences act on the screen and BEL
// rings, or sent where NUL is a protocol error (MQTT). Tabs and newlines
// are allowed only where text is prose: the checklist and a rule's
// message, when and clear. Every config string and every checklist is
// checked by ControlChar, wherever it comes from.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// ControlChar returns the first control character in s (unicode.IsControl:
// U+0000-U+001F, U+007F-U+009F) that allow does not hold, and its byte
// offset in s; ok is false when there is none.
func ControlChar(s, allow string) (r rune, at int, ok bool) {
	for i, c := range s {
		if unicode.IsControl(c) && !strings.ContainsRune(allow, c) {
			return c, i, true
		}
	}
	return 0, 0, false
}

// controlNames are the usual names of the control characters.
var controlNames = map[rune]string{
	0x00: "NUL", 0x01: "SOH", 0x02: "STX", 0x03: "ETX", 0x04: "EOT", 0x05: "ENQ", 0x06: "ACK", 0x07: "BEL",
	0x08: "BS", 0x09: "TAB", 0x0a: "LF", 0x0b: "VT", 0x0c: "FF", 0x0d: "CR", 0x0e: "SO", 0x0f: "SI",
	0x10: "DLE", 0x11: "DC1", 0x12: "DC2", 0x13: "DC3", 0x14: "DC4", 0x15: "NAK", 0x16: "SYN", 0x17: "ETB",
	0x18: "CAN", 0x19: "EM", 0x1a: "SUB", 0x1b: "ESC", 0x1c: "FS", 0x1d: "GS", 0x1e: "RS", 0x1f: "US",
	0x7f: "DEL", 0x84: "IND", 0x85: "NEL", 0x8d: "RI", 0x90: "DCS", 0x9b: "CSI", 0x9c: "ST", 0x9d: "OSC",
}

// DescribeRune names a character for a message: "U+001B (ESC)", "U+0099".
func DescribeRune(r rune) string {
	if n, ok := controlNames[r]; ok {
		return fmt.Sprintf("%U (%s)", r, n)
	}
	return fmt.Sprintf("%U", r)
}

// proseKeys are the keys of a [[rule]] that may hold tabs and newlines: a
// message written over several lines, a condition split across them.
var proseKeys = []string{"message", "when", "clear"}

// validateText refuses a control character in every string of the config,
// from the file or an override: every table's keys, [[sensor]] and
// [[rule]] included, and every element of an array of strings. A key that
// already has an error (a model name, a rule's condition, a sensor's name
// each refuse control characters in their own words) is not reported
// again.
func (p *parser) validateText() {
	p.eachTable(func(sec string, v reflect.Value, prefix []seg) {
		allow := ""
		if sec == "rule" {
			allow = "\t\n"
		}
		p.text(v, prefix, allow)
	})
}

// text checks the strings of the table v at prefix; allow is what the
// prose keys of a rule may hold besides.
func (p *parser) text(v reflect.Value, prefix []seg, prose string) {
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
		if key == "" || key == "-" {
			continue
		}
		path := append(slices.Clone(prefix), seg{name: key, idx: -1})
		allow := ""
		if prose != "" && slices.Contains(proseKeys, key) {
			allow = prose
		}
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.String:
			p.controlChar(path, "", f.String(), allow)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for j := range f.Len() {
				p.controlChar(path, fmt.Sprintf("%s[%d]: ", key, j), f.Index(j).String(), allow)
			}
		}
	}
}

// controlChar reports the first control character of s, the value at path.
func (p *parser) controlChar(path []seg, elem, s, allow string) {
	r, _, ok := ControlChar(s, allow)
	if !ok || p.hasError(p.display(path)) {
		return
	}
	fix := "remove it"
	if allow != "" {
		fix = "only tabs and newlines may be in a rule's message, when and clear; remove it"
	}
	p.bad(path, "%smust not contain %s, a control character (got %q); %s", elem, DescribeRune(r), s, fix)
}

// hasError reports whether an error names key already.
func (p *parser) hasError(key string) bool {
	return slices.ContainsFunc(p.errs, func(e *Error) bool { return e.Key == key })
}
