package config

// Small matchers in place of package-level regexps: they compile nothing
// at start and allocate nothing. (They were written to keep regexp out of
// the binary; the status page's metrics library links it again, so the
// reason now is start-up work, not size.) Each function notes the regexp it
// replaces; match_test.go checks each against that regexp, including by
// fuzzing. All classes are ASCII, so lengths in bytes equal lengths in runes.

import "strings"

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' }

// isWord reports whether c is in [a-z0-9_].
func isWord(c byte) bool { return isLower(c) || isDigit(c) || c == '_' }

// isIDChar reports whether c is in [a-z0-9_-].
func isIDChar(c byte) bool { return isWord(c) || c == '-' }

// isBusChar reports whether c is in [A-Za-z0-9_./-].
func isBusChar(c byte) bool {
	return isLower(c) || isUpper(c) || isDigit(c) || c == '_' || c == '.' || c == '/' || c == '-'
}

// all reports whether s is min to max bytes long and each byte satisfies ok.
func all(s string, minLen, maxLen int, ok func(byte) bool) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// validID matches ^[a-z0-9_-]{1,64}$.
func validID(s string) bool { return all(s, 1, 64, isIDChar) }

// validBoard matches ^[a-z0-9][a-z0-9_-]{0,63}$.
func validBoard(s string) bool {
	return s != "" && (isLower(s[0]) || isDigit(s[0])) && all(s, 1, 64, isIDChar)
}

// validSensorName matches ^[a-z0-9_]{1,32}$.
func validSensorName(s string) bool { return all(s, 1, 32, isWord) }

// validRuleName matches ^[a-z0-9_]{1,64}$.
func validRuleName(s string) bool { return all(s, 1, 64, isWord) }

// validQuantity matches ^[a-z0-9_]{1,32}$.
func validQuantity(s string) bool { return all(s, 1, 32, isWord) }

// validEnvName matches ^[A-Za-z_][A-Za-z0-9_]*$.
func validEnvName(s string) bool {
	if s == "" || !(isLower(s[0]) || isUpper(s[0]) || s[0] == '_') {
		return false
	}
	return all(s, 1, len(s), func(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) || c == '_' })
}

// validBus matches ^[A-Za-z0-9_./-]{1,64}$.
func validBus(s string) bool { return all(s, 1, 64, isBusChar) }

// validSerial matches ^[0-9a-f]{2}-[0-9a-f]{12}$.
func validSerial(s string) bool {
	return len(s) == 15 && s[2] == '-' && all(s[:2], 2, 2, isHex) && all(s[3:], 12, 12, isHex)
}

// spiBus matches ^spi:([0-9]{1,3})\.([0-9]{1,3})$ and returns the two numbers.
func spiBus(s string) (bus, cs int, ok bool) {
	rest, ok := strings.CutPrefix(s, "spi:")
	if !ok {
		return 0, 0, false
	}
	b, c, ok := strings.Cut(rest, ".")
	if !ok || !all(b, 1, 3, isDigit) || !all(c, 1, 3, isDigit) {
		return 0, 0, false
	}
	return atoi(b), atoi(c), true
}

// atoi converts a string of at most a few ASCII digits.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// lastKeyError splits a BurntSushi/toml error string, matching
// ^toml: (?:line \d+ )?\(last key ("(?:[^"\\]|\\.)*")\): (.*)$
// and returning the quoted key (quotes included) and the message.
func lastKeyError(s string) (quoted, msg string, ok bool) {
	rest, ok := strings.CutPrefix(s, "toml: ")
	if !ok {
		return "", "", false
	}
	if r, ok := strings.CutPrefix(rest, "line "); ok {
		n := 0
		for n < len(r) && isDigit(r[n]) {
			n++
		}
		if n == 0 || n == len(r) || r[n] != ' ' {
			return "", "", false
		}
		rest = r[n+1:]
	}
	rest, ok = strings.CutPrefix(rest, `(last key "`)
	if !ok {
		return "", "", false
	}
	// The key ends at the first '"' not escaped by '\'; an escape may not
	// take a newline ('.' does not match one).
	i := 0
	for ; i < len(rest) && rest[i] != '"'; i++ {
		if rest[i] == '\\' {
			if i+1 == len(rest) || rest[i+1] == '\n' {
				return "", "", false
			}
			i++
		}
	}
	if i == len(rest) {
		return "", "", false
	}
	quoted = s[len(s)-len(rest)-1 : len(s)-len(rest)+i+1]
	msg, ok = strings.CutPrefix(rest[i+1:], "): ")
	if !ok || strings.Contains(msg, "\n") {
		return "", "", false
	}
	return quoted, msg, true
}

// badTypeMessage matches
// ^incompatible types: TOML value has type (.+); destination has type (.+)$
// and returns the two types. The first group is greedy, so the last
// separator that leaves a non-empty destination type wins.
func badTypeMessage(s string) (have, want string, ok bool) {
	const sep = "; destination has type "
	rest, ok := strings.CutPrefix(s, "incompatible types: TOML value has type ")
	if !ok || strings.Contains(rest, "\n") {
		return "", "", false
	}
	i := strings.LastIndex(rest, sep)
	if i >= 0 && i+len(sep) == len(rest) { // empty destination: try an earlier one
		i = strings.LastIndex(rest[:i], sep)
	}
	if i < 1 {
		// i == 0 leaves the first group empty; an earlier separator
		// does not exist.
		return "", "", false
	}
	return rest[:i], rest[i+len(sep):], true
}

// mismatchMessage matches
// ^type mismatch for .+: expected table but found (.+)$
// and returns the found type, taking the last separator that leaves both
// sides non-empty.
func mismatchMessage(s string) (found string, ok bool) {
	const sep = ": expected table but found "
	rest, ok := strings.CutPrefix(s, "type mismatch for ")
	if !ok || strings.Contains(rest, "\n") {
		return "", false
	}
	i := strings.LastIndex(rest, sep)
	if i >= 0 && i+len(sep) == len(rest) {
		i = strings.LastIndex(rest[:i], sep)
	}
	if i < 1 {
		return "", false
	}
	return rest[i+len(sep):], true
}
