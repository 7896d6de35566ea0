// Package redact removes secrets from text before vigil keeps or shows it.
//
// Redaction policy: what the model writes (its tool calls and their
// arguments, its summaries, its notes) and every error or log line that may
// quote it passes one Redactor before it is kept (the run ring, the notes,
// the alerts in the state file) or shown (vigil check, status and notes,
// the status page, Telegram, MQTT, the log). It replaces with "[redacted]":
//
//   - the values of the configured secrets (the LLM API key, the MQTT and
//     status-page passwords, the Telegram token: whatever config resolves
//     from a *_env or *_file key), also as they appear escaped inside a
//     JSON string (once or twice) or URL-encoded. A value shorter than
//     MinSecret bytes is not replaced: it would blank out ordinary words
//     and numbers wherever they occur;
//   - strings that look like credentials whoever they belong to: Bearer
//     tokens, OpenAI/Anthropic-style keys (sk-..., sk-ant-...), Telegram
//     bot tokens (digits:35 characters), and key=value pairs for password,
//     token, secret and api_key.
//
// It errs towards redacting too much: a note loses a word, a secret never
// reaches the file. A secret that a reload or `vigil set` replaces stays
// redacted for the life of the process: text from while it was in force
// may still carry it.
package redact

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Mark replaces what a Redactor removes.
const Mark = "[redacted]"

// MinSecret is the length in bytes of the shortest configured secret that
// is replaced.
const MinSecret = 8

// Redactor replaces secrets in text. Its methods may be called
// concurrently, and on a nil *Redactor, which knows no configured secret
// and replaces only what looks like a credential.
type Redactor struct {
	mu      sync.Mutex // serialises Add
	secrets []string   // what Add was given, unique
	rep     atomic.Pointer[replacer]
}

// replacer is what String and Clip use, swapped whole by Add.
type replacer struct {
	*strings.Replacer
	needles []string // every form of every secret, the longest first
}

// New returns a Redactor that knows secrets.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes r replace secrets as well as those it knows. Values shorter
// than MinSecret, and those that are part of Mark (redacting twice would
// grow the text), are ignored.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.secrets)
	for _, s := range secrets {
		if len(s) >= MinSecret && !strings.Contains(Mark, s) && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	if len(r.secrets) == n {
		return
	}
	var needles []string
	for _, s := range r.secrets {
		for _, f := range forms(s) {
			if !slices.Contains(needles, f) {
				needles = append(needles, f)
			}
		}
	}
	// The longest first: strings.Replacer tries its pairs in order at each
	// position, so a secret that contains another is replaced whole.
	slices.SortStableFunc(needles, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(needles))
	for _, f := range needles {
		pairs = append(pairs, f, Mark)
	}
	r.rep.Store(&replacer{Replacer: strings.NewReplacer(pairs...), needles: needles})
}

// forms returns s as text may carry it: as is, escaped inside a JSON
// string (with and without HTML escaping, and twice: a JSON document in a
// JSON string), and URL-encoded.
func forms(s string) []string {
	esc := func(s string, html bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s) // a string always encodes
		q := strings.TrimSuffix(b.String(), "\n")
		return q[1 : len(q)-1]
	}
	return []string{s, esc(s, false), esc(s, true), esc(esc(s, false), false), url.QueryEscape(s), url.PathEscape(s)}
}

type credentialPattern struct {
	re   *regexp.Regexp
	repl string
}

// credentialPatterns are compiled on first use, not at start: a command
// that never redacts keeps the 11 KB of heap they take (and the work of
// compiling them) off its start.
var credentialPatterns = sync.OnceValue(func() []credentialPattern {
	return []credentialPattern{
		{regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Mark},
		{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), Mark},
		{regexp.MustCompile(`\b\d+:[A-Za-z0-9_-]{30,}`), Mark},
		{regexp.MustCompile(`(?i)\b(password|passwd|token|secret|api[_-]?key)("?\s*[=:]\s*"?)[^\s"',;&}]+`), "${1}${2}" + Mark},
	}
})

// String returns s with every configured secret and every
// credential-looking string replaced by Mark.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		if rep := r.rep.Load(); rep != nil {
			s = rep.Replace(s)
		}
	}
	for _, p := range credentialPatterns() {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// Strings returns a copy of ss with each element redacted; nil stays nil.
func (r *Redactor) Strings(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}

// Error returns err with its text redacted; errors.Is and errors.As still
// see err. nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: r.String(err.Error()), err: err}
}

// redactedError shows a message with secrets removed and unwraps to the
// original error.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
