package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
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
	// Nor is the start of one that is ignored.
	if got, want := r.Clip("x "+short[:MinPrefix], 50), "x "+short[:MinPrefix]; got != want {
		t.Errorf("Clip = %q, want %q", got, want)
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
		// Cut at every length vigil cuts at, it still never shows
		// whole, and the cut fits.
		for _, n := range CutLengths {
			c := r.Clip(before+secret+after, n)
			if len(secret) >= MinSecret && utf8.ValidString(secret) && !strings.Contains(Mark, secret) && strings.Contains(c, secret) {
				t.Errorf("Clip(%q, %d) = %q still holds %q", before+secret+after, n, c, secret)
			}
			if utf8.RuneCountInString(c) > n {
				t.Errorf("Clip(%q, %d) = %q: longer than %d", before+secret+after, n, c, n)
			}
		}
	})
}

// TestClip: the text is redacted before it is cut, so a secret across the
// cut goes whole; a start of a secret left at the end goes too.
func TestClip(t *testing.T) {
	key := "sk-vigil-0123456789abcdefgh" // 27 characters, also a credential shape
	pw := "q7Zt9wLmN3xK2pR8vB4c"
	r := New(key, pw)
	pad := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "ok " + pw, 50, "ok " + Mark},
		{"across the cut", pad(473) + key, 500, pad(473) + Mark},
		{"cut in Mark", pad(294) + pw, 300, pad(294) + "[reda" + Ellipsis},
		{"already cut: a start of 6 at the end", pad(10) + pw[:6], 50, pad(10) + Mark},
		{"already cut: a start of 5 stays", pad(10) + pw[:5], 50, pad(10) + pw[:5]},
		{"multibyte", strings.Repeat("ü", 20), 10, strings.Repeat("ü", 9) + Ellipsis},
		{"invalid UTF-8", "a\xffb", 10, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Clip(tt.in, tt.n); got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
	// A secret that JSON escapes: its escaped start at the end goes too.
	r2 := New(`pa"ss\word-1`)
	if got, want := r2.Clip(`{"s":"`+pad(30)+`pa\"ss\\wo`, 100), `{"s":"`+pad(30)+Mark; got != want {
		t.Errorf("Clip(escaped start) = %q, want %q", got, want)
	}
	var nilR *Redactor
	if got, want := nilR.Clip("key sk-proj-AbCdEf0123456789xyz "+pad(20), 20), "key [redacted] xxxx"+Ellipsis; got != want {
		t.Errorf("nil Clip = %q, want %q", got, want)
	}
}

// cutAlphabets are what TestClipCuts and FuzzClip build secrets and text
// from: ASCII, Latin letters, CJK, emoji (four bytes, two UTF-16 units),
// what JSON and URLs escape.
var cutAlphabets = [][]rune{
	[]rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:~"),
	[]rune("äöüßéèñçøåÄÖÜ"),
	[]rune("漢字日本語温度湿度警報"),
	[]rune("😀🔑🌡🚨🧊"),
	[]rune(`"\/%+&=? <>` + "\t"),
}

// randomSecret returns a valid UTF-8 string of 8 to 64 bytes whose first
// character cannot be mistaken for a piece of Mark or of a cut's mark, nor
// changes when JSON escapes it, so that any start of it found in Clip's
// output can only come from the secret.
func randomSecret(rnd *rand.Rand) string {
	for {
		size := 8 + rnd.IntN(57)
		var b strings.Builder
		for b.Len() < size {
			a := cutAlphabets[rnd.IntN(len(cutAlphabets))]
			c := a[rnd.IntN(len(a))]
			if b.Len()+utf8.RuneLen(c) > 64 {
				break
			}
			b.WriteRune(c)
		}
		s := b.String()
		first, _ := utf8.DecodeRuneInString(s)
		if len(s) >= MinSecret && !strings.ContainsRune(Mark+Ellipsis+telegramMark+`"\`+"\t<>&", first) {
			return s
		}
	}
}

const telegramMark = "… (truncated)"

// filler returns n random characters, none of them avoid.
func filler(rnd *rand.Rand, n int, avoid rune) string {
	var b strings.Builder
	for i := 0; i < n; {
		a := cutAlphabets[rnd.IntN(len(cutAlphabets))]
		if c := a[rnd.IntN(len(a))]; c != avoid {
			b.WriteRune(c)
			i++
		}
	}
	return b.String()
}

// startOf returns the first MinPrefix characters of s.
func startOf(s string) string {
	rs := []rune(s)
	return string(rs[:min(MinPrefix, len(rs))])
}

// jsonForm returns s as a JSON string's content carries it.
func jsonForm(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// checkClip cuts text at n with both Clip and ClipUTF16 and fails if a
// start of secret (as is or JSON-escaped) of MinPrefix characters survives.
func checkClip(t *testing.T, r *Redactor, secret, text string, n int) {
	t.Helper()
	for _, c := range []struct {
		name string
		out  string
	}{{"Clip", r.Clip(text, n)}, {"ClipUTF16", r.ClipUTF16(text, n, telegramMark)}} {
		for _, f := range []string{secret, jsonForm(secret)} {
			if p := startOf(f); utf8.RuneCountInString(p) >= MinPrefix && strings.Contains(c.out, p) {
				t.Fatalf("%s(%q, %d) = %q: holds %q, the start of the secret %q", c.name, text, n, c.out, p, secret)
			}
		}
	}
}

// TestClipCuts: for random secrets (8 to 64 bytes of any alphabet) at
// random offsets around every length vigil cuts at, as they are and
// JSON-escaped, no start of a secret of MinPrefix characters survives.
// Deterministic: the seed is fixed.
func TestClipCuts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(28, 1))
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	for _, n := range CutLengths {
		for range rounds {
			secret := randomSecret(rnd)
			first, _ := utf8.DecodeRuneInString(secret)
			form := secret
			if rnd.IntN(3) == 0 {
				form = jsonForm(secret)
			}
			size := utf8.RuneCountInString(form)
			off := max(n-size-3+rnd.IntN(size+6), 0) // the secret ends within a few characters of the cut
			if rnd.IntN(4) == 0 {
				off = rnd.IntN(n + 10)
			}
			text := filler(rnd, off, first) + form + filler(rnd, rnd.IntN(40), first)
			checkClip(t, New(secret), secret, text, n)
			// Cut by someone else, then given to Clip: its end goes too.
			k := MinPrefix + rnd.IntN(max(utf8.RuneCountInString(form)-MinPrefix, 1))
			cut := filler(rnd, rnd.IntN(n), first) + string([]rune(form)[:min(k, utf8.RuneCountInString(form))])
			checkClip(t, New(secret), secret, cut, n)
		}
	}
}

// FuzzClip: a configured secret placed anywhere in text cut at any
// length leaves no start of MinPrefix characters in Clip's output.
func FuzzClip(f *testing.F) {
	for i, n := range CutLengths {
		f.Add(uint64(i), n, n-10)
	}
	f.Fuzz(func(t *testing.T, seed uint64, n, off int) {
		if n < 12 || n > 5000 || off < 0 || off > 6000 {
			return
		}
		rnd := rand.New(rand.NewPCG(seed, 7))
		secret := randomSecret(rnd)
		first, _ := utf8.DecodeRuneInString(secret)
		text := filler(rnd, off, first) + secret + filler(rnd, rnd.IntN(40), first)
		checkClip(t, New(secret), secret, text, n)
	})
}

// TestClipLength: what Clip returns fits n (for n that holds Mark and the
// cut's mark), whatever it replaced.
func TestClipLength(t *testing.T) {
	rnd := rand.New(rand.NewPCG(6, 28))
	for range 500 {
		secret := randomSecret(rnd)
		n := 12 + rnd.IntN(200)
		text := filler(rnd, rnd.IntN(n+20), 0) + secret + filler(rnd, rnd.IntN(20), 0)
		r := New(secret)
		if out := r.Clip(text, n); utf8.RuneCountInString(out) > n {
			t.Fatalf("Clip(%q, %d) = %q: %d characters", text, n, out, utf8.RuneCountInString(out))
		}
		if out := r.ClipUTF16(text, n+13, telegramMark); len(utf16.Encode([]rune(out))) > n+13 {
			t.Fatalf("ClipUTF16(%q, %d) = %q: too long", text, n+13, out)
		}
	}
}
