package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	r := New("hunter2-mqtt", "abc", "s3cr3t-http", "", "q7Zt9wLmN3xK2pR8vB4c", `pa"ss\word-1`, "pa ss/wörd-2", "seven77")
	tests := []struct{ in, want string }{
		{"nothing to hide: air 21.4 °C at 14:05", "nothing to hide: air 21.4 °C at 14:05"},
		{"mqtt password is hunter2-mqtt, remember", "mqtt password is [redacted], remember"},
		{"abc is too short to be a secret", "abc is too short to be a secret"},
		{"seven77 is too, at 7 bytes", "seven77 is too, at 7 bytes"},
		{"login s3cr3t-http", "login [redacted]"},
		// A configured key with no known prefix.
		{"read_sensor {\"name\":\"q7Zt9wLmN3xK2pR8vB4c\"}", "read_sensor {\"name\":\"[redacted]\"}"},
		{"twice q7Zt9wLmN3xK2pR8vB4cq7Zt9wLmN3xK2pR8vB4c", "twice [redacted][redacted]"},
		// As it is, and escaped in a JSON string once and twice.
		{`raw pa"ss\word-1 end`, `raw [redacted] end`},
		{`{"note":"pa\"ss\\word-1"}`, `{"note":"[redacted]"}`},
		{`{"args":"{\"note\":\"pa\\\"ss\\\\word-1\"}"}`, `{"args":"{\"note\":\"[redacted]\"}"}`},
		// URL-encoded, as a query value or a path.
		{"GET /x?pw=pa+ss%2Fw%C3%B6rd-2", "GET /x?pw=[redacted]"},
		{"GET /u/pa%20ss%2Fw%C3%B6rd-2/x", "GET /u/[redacted]/x"},
		// What looks like a credential, configured or not.
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "Authorization: Bearer [redacted]"},
		{"key sk-proj-AbCdEf0123456789xyz works", "key [redacted] works"},
		{"anthropic sk-ant-api03-AbCdEf0123456789_-xyz", "anthropic [redacted]"},
		{"bot 123456789:AAHk-2jD7s9d8f7g6h5j4k3l2m1n0b9v8c7x ok", "bot [redacted] ok"},
		{"url ?password=hunter3&x=1", "url ?password=[redacted]&x=1"},
		{`{"token":"abcdef123"}`, `{"token":"[redacted]"}`},
		{"TOKEN: zzz999 and api_key=k-123", "TOKEN: [redacted] and api_key=[redacted]"},
		{"tokens: 1234 used", "tokens: 1234 used"},
		{"at 12:30 the door opened", "at 12:30 the door opened"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := r.String(r.String(tt.in)); got != tt.want {
			t.Errorf("String(String(%q)) = %q, want %q (redacting twice changes nothing)", tt.in, got, tt.want)
		}
	}
}

// TestLongestFirst: a secret that contains another is replaced whole.
func TestLongestFirst(t *testing.T) {
	r := New("abcdefgh", "abcdefgh-and-more")
	if got, want := r.String("x abcdefgh-and-more y abcdefgh"), "x [redacted] y [redacted]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// TestMinSecret: the floor is MinSecret bytes, and a secret that is part of
// Mark is ignored (redacting twice would grow the text).
func TestMinSecret(t *testing.T) {
	short, long := strings.Repeat("x", MinSecret-1), strings.Repeat("y", MinSecret)
	r := New(short, long, "redacted")
	if got, want := r.String(short+" "+long+" [redacted]"), short+" [redacted] [redacted]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// TestAddLater: a secret added after the Redactor was made (a reload, a
// vigil set) applies from then on, and the earlier ones stay.
func TestAddLater(t *testing.T) {
	r := New("first-secret")
	if got := r.String("second-secret"); got != "second-secret" {
		t.Fatalf("String before Add = %q", got)
	}
	r.Add("second-secret")
	if got, want := r.String("first-secret second-secret"), "[redacted] [redacted]"; got != want {
		t.Errorf("String after Add = %q, want %q", got, want)
	}
}

// TestNil: a nil Redactor replaces what looks like a credential.
func TestNil(t *testing.T) {
	var r *Redactor
	if got, want := r.String("key sk-proj-AbCdEf0123456789xyz, word q7Zt9wLmN3xK2pR8vB4c"), "key [redacted], word q7Zt9wLmN3xK2pR8vB4c"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := r.Strings(nil); got != nil {
		t.Errorf("Strings(nil) = %q, want nil", got)
	}
}

func TestError(t *testing.T) {
	r := New("q7Zt9wLmN3xK2pR8vB4c")
	err := r.Error(fmt.Errorf("open key q7Zt9wLmN3xK2pR8vB4c: %w", fs.ErrNotExist))
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "open key [redacted]: file does not exist" {
		t.Errorf("Error = %q (Is ErrNotExist %t), want the text redacted and the cause kept", err, errors.Is(err, fs.ErrNotExist))
	}
	if r.Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// TestHandler: a log record's message and attributes are redacted, those
// bound with With and in groups too, with the secrets known when the
// record is logged.
func TestHandler(t *testing.T) {
	r := New("q7Zt9wLmN3xK2pR8vB4c")
	var buf bytes.Buffer
	log := slog.New(r.Handler(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})))
	r.Add("4242:e2e-SECRET_token") // after the logger was made
	log.With("bound", "q7Zt9wLmN3xK2pR8vB4c").WithGroup("g").Info("tool q7Zt9wLmN3xK2pR8vB4c",
		"s", "key=q7Zt9wLmN3xK2pR8vB4c", "err", errors.New("bot 4242:e2e-SECRET_token: 401"),
		"str", stringer("token 4242:e2e-SECRET_token"), "n", 42,
		slog.Group("sub", "x", "q7Zt9wLmN3xK2pR8vB4c"))
	want := `level=INFO msg="tool [redacted]" bound=[redacted] g.s="key=[redacted]" g.err="bot [redacted]: 401" g.str="token [redacted]" g.n=42 g.sub.x=[redacted]` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("log line\n got %s\nwant %s", got, want)
	}
}

// TestConcurrent: Add and String from many goroutines (go test -race).
func TestConcurrent(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); r.Add(fmt.Sprintf("secret-number-%d", i)) }()
		go func() { defer wg.Done(); _ = r.String("secret-number-1 secret-number-2") }()
	}
	wg.Wait()
	if got := r.String("secret-number-7"); got != Mark {
		t.Errorf("String = %q, want %q", got, Mark)
	}
}

// FuzzString: a configured secret never survives redaction, wherever it
// sits in the text, and redacting twice changes nothing.
func FuzzString(f *testing.F) {
	f.Add("tool call ", "q7Zt9wLmN3xK2pR8vB4c", " done")
	f.Add(`{"note":"`, `pa"ss\word-1`, `"}`)
	f.Add("", "aaaaaaaaa", "a")
	f.Fuzz(func(t *testing.T, before, secret, after string) {
		r := New(secret)
		out := r.String(before + secret + after)
		if len(secret) >= MinSecret && !strings.Contains(Mark, secret) && strings.Contains(out, secret) {
			t.Errorf("String(%q) = %q still holds %q", before+secret+after, out, secret)
		}
		if again := r.String(out); again != out {
			t.Errorf("String(%q) = %q, but String of that = %q", before+secret+after, out, again)
		}
	})
}
