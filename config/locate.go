package config

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// BurntSushi/toml keeps the position of each key only by its dotted name, so
// every [[sensor]] shares one "sensor.address" entry. locate re-scans the
// (already validated) TOML text and records where each key is defined, with
// the index of each array-of-tables element on the way.

// seg is one key segment; idx is the array element, or -1.
type seg struct {
	name string
	idx  int
}

// keyPos is where one key (or table header) is defined.
type keyPos struct {
	path []seg
	line int
}

// plain returns the path without indices, spelled like toml.Key.String.
func (k keyPos) plain() string { return plainKey(k.path) }

func plainKey(path []seg) string {
	names := make(toml.Key, len(path))
	for i, s := range path {
		names[i] = s.name
	}
	return names.String()
}

// indexed returns the path with indices: sensor[1].address.
func indexedKey(path []seg) string {
	var b strings.Builder
	for i, s := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(toml.Key{s.name}.String())
		if s.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
		}
	}
	return b.String()
}

type locator struct {
	src    string
	pos    int
	line   int
	table  []seg
	counts map[string]int // indexed path of an array of tables -> elements so far
	out    []keyPos
}

// locate returns every key and table header of src in file order. src must
// be valid TOML; on anything else it returns what it found without panicking.
func locate(src string) []keyPos {
	l := &locator{src: strings.TrimPrefix(src, "\ufeff"), line: 1, counts: map[string]int{}}
	for l.pos < len(l.src) {
		start := l.pos
		l.statement()
		if l.pos == start {
			l.pos++ // never loop on input the scanner does not understand
		}
	}
	return l.out
}

func (l *locator) peek() byte {
	if l.pos < len(l.src) {
		return l.src[l.pos]
	}
	return 0
}

func (l *locator) hasPrefix(s string) bool { return strings.HasPrefix(l.src[l.pos:], s) }

func (l *locator) skipSpace() {
	for l.pos < len(l.src) && (l.src[l.pos] == ' ' || l.src[l.pos] == '\t') {
		l.pos++
	}
}

// skipBlank skips spaces, newlines and comments.
func (l *locator) skipBlank() {
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case ' ', '\t', '\r':
			l.pos++
		case '\n':
			l.pos++
			l.line++
		case '#':
			l.skipComment()
		default:
			return
		}
	}
}

func (l *locator) skipComment() {
	for l.pos < len(l.src) && l.src[l.pos] != '\n' {
		l.pos++
	}
}

func (l *locator) statement() {
	l.skipBlank()
	if l.pos >= len(l.src) {
		return
	}
	if l.peek() == '[' {
		l.header()
		return
	}
	line := l.line
	key := l.key()
	if len(key) == 0 {
		return
	}
	path := append(append([]seg(nil), l.table...), key...)
	l.out = append(l.out, keyPos{path: path, line: line})
	l.skipSpace()
	if l.peek() == '=' {
		l.pos++
		l.skipSpace()
		l.value(path)
	}
}

func (l *locator) header() {
	line := l.line
	array := l.hasPrefix("[[")
	if array {
		l.pos += 2
	} else {
		l.pos++
	}
	key := l.key()
	l.skipSpace()
	if array && l.hasPrefix("]]") {
		l.pos += 2
	} else if !array && l.peek() == ']' {
		l.pos++
	}
	if len(key) == 0 {
		return
	}
	var path []seg
	for i, s := range key {
		path = append(path, seg{name: s.name, idx: -1})
		id := indexedKey(path)
		n, isArray := l.counts[id]
		if array && i == len(key)-1 {
			l.counts[id] = n + 1
			path[i].idx = n
		} else if isArray && n > 0 {
			path[i].idx = n - 1
		}
	}
	l.table = path
	l.out = append(l.out, keyPos{path: append([]seg(nil), path...), line: line})
}

// key reads a dotted key; it returns nil when there is none.
func (l *locator) key() []seg {
	var key []seg
	for {
		l.skipSpace()
		var name string
		switch c := l.peek(); {
		case c == '"':
			name = l.basicString()
		case c == '\'':
			name = l.literalString()
		default:
			start := l.pos
			for l.pos < len(l.src) && !strings.ContainsRune(" \t\r\n=.[]\"'#,{}", rune(l.src[l.pos])) {
				l.pos++
			}
			if l.pos == start {
				return key
			}
			name = l.src[start:l.pos]
		}
		key = append(key, seg{name: name, idx: -1})
		l.skipSpace()
		if l.peek() != '.' {
			return key
		}
		l.pos++
	}
}

// value skips one value, recording the keys of inline tables under path.
func (l *locator) value(path []seg) {
	switch {
	case l.hasPrefix(`"""`):
		l.multiline(`"""`, true)
	case l.hasPrefix(`'''`):
		l.multiline(`'''`, false)
	case l.peek() == '"':
		l.basicString()
	case l.peek() == '\'':
		l.literalString()
	case l.peek() == '[':
		l.pos++
		for i := 0; l.pos < len(l.src); i++ {
			l.skipBlank()
			if l.peek() == ']' {
				l.pos++
				return
			}
			start := l.pos
			elem := append([]seg(nil), path...)
			elem[len(elem)-1].idx = i
			l.value(elem)
			l.skipBlank()
			if l.peek() == ',' {
				l.pos++
			} else if l.pos == start {
				return
			}
		}
	case l.peek() == '{':
		if len(path) > 0 && path[len(path)-1].idx >= 0 {
			l.out = append(l.out, keyPos{path: path, line: l.line})
		}
		l.pos++
		for l.pos < len(l.src) {
			l.skipBlank()
			if l.peek() == '}' {
				l.pos++
				return
			}
			line := l.line
			key := l.key()
			if len(key) == 0 {
				return
			}
			sub := append(append([]seg(nil), path...), key...)
			l.out = append(l.out, keyPos{path: sub, line: line})
			l.skipSpace()
			if l.peek() == '=' {
				l.pos++
			}
			l.skipSpace()
			l.value(sub)
			l.skipBlank()
			if l.peek() == ',' {
				l.pos++
			}
		}
	default: // number, bool, date-time (which may contain a space)
		for l.pos < len(l.src) && !strings.ContainsRune(",]}#\r\n", rune(l.src[l.pos])) {
			l.pos++
		}
	}
}

// basicString reads a single-line "..." string and returns its value.
func (l *locator) basicString() string {
	l.pos++ // opening quote
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '"':
			l.pos++
			return b.String()
		case c == '\n':
			return b.String()
		case c == '\\' && l.pos+1 < len(l.src):
			l.pos++
			e := l.src[l.pos]
			l.pos++
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if l.pos+n <= len(l.src) {
					if r, err := strconv.ParseUint(l.src[l.pos:l.pos+n], 16, 32); err == nil {
						b.WriteRune(rune(r))
						l.pos += n
					}
				}
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
	return b.String()
}

// literalString reads a single-line '...' string and returns its value.
func (l *locator) literalString() string {
	l.pos++
	start := l.pos
	for l.pos < len(l.src) && l.src[l.pos] != '\'' && l.src[l.pos] != '\n' {
		l.pos++
	}
	s := l.src[start:l.pos]
	if l.peek() == '\'' {
		l.pos++
	}
	return s
}

// multiline skips a multi-line string (delim is three quotes), counting
// its lines.
func (l *locator) multiline(delim string, escapes bool) {
	l.pos += 3
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == '\n':
			l.line++
			l.pos++
		case escapes && c == '\\':
			l.pos++
			if l.peek() == '\n' {
				l.line++
			}
			l.pos++
		case l.hasPrefix(delim):
			l.pos += 3
			// Up to two quotes may directly precede the closing delimiter.
			for i := 0; i < 2 && l.peek() == delim[0]; i++ {
				l.pos++
			}
			return
		default:
			l.pos++
		}
	}
}
