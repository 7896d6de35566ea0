package agent

// Redaction policy: text that leaves vigil's control (a provider's error
// in a log line, a note the model asks to keep in the state file) has
// secrets replaced with "[redacted]" before it is kept or shown. Two
// things are replaced: the configured secret values themselves (the LLM
// API key, the MQTT password, the Telegram token, the HTTP password), and
// strings that look like credentials whoever they belong to: Bearer
// tokens, OpenAI/Anthropic-style keys (sk-..., sk-ant-...), Telegram bot
// tokens (digits:35 characters), and key=value pairs for password, token,
// secret and api_key. It errs towards redacting too much: a note loses a
// word, a secret never reaches the file.

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces what Redact removes.
const Redacted = "[redacted]"

// minSecret is the shortest configured secret that is replaced: shorter
// values would blank out ordinary words and digits.
const minSecret = 4

type credentialPattern struct {
	re   *regexp.Regexp
	repl string
}

// credentialPatterns are compiled on first use, not at start: a daemon
// that never redacts (no LLM, no notes) keeps the 11 KB of heap they take
// (and the work of compiling them) off its start.
var credentialPatterns = sync.OnceValue(func() []credentialPattern {
	return []credentialPattern{
		{regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Redacted},
		{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), Redacted},
		{regexp.MustCompile(`\b\d+:[A-Za-z0-9_-]{30,}`), Redacted},
		{regexp.MustCompile(`(?i)\b(password|passwd|token|secret|api[_-]?key)("?\s*[=:]\s*"?)[^\s"',;&}]+`), "${1}${2}" + Redacted},
	}
})

// Redact returns s with every secret of at least four characters and
// every credential-looking string replaced by "[redacted]". The agent
// uses it for provider errors and notes; cmd for anything else the model
// writes into the state file.
func Redact(s string, secrets ...string) string {
	if len(secrets) > 1 {
		// The longest first, so a secret that contains another is
		// replaced whole.
		secrets = slices.Clone(secrets)
		slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	}
	for _, sec := range secrets {
		if len(sec) >= minSecret {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	for _, p := range credentialPatterns() {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}
