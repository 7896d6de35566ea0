package termtext

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	tests := []struct{ in, text, line string }{
		{"", "", ""},
		{"air at 21.4 °C ✓", "air at 21.4 °C ✓", "air at 21.4 °C ✓"},
		{"\x1b[2J", `\x1b[2J`, `\x1b[2J`},
		{"a\x00b\x07c\x7f", `a\x00b\x07c\x7f`, `a\x00b\x07c\x7f`},
		{"- one\n\t- two\r\n", "- one\n\t- two\\x0d\n", `- one\n\t- two\x0d\n`},
		{"csi \u009b31m", `csi \u009b31m`, `csi \u009b31m`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`, `bidi \u202egnp.exe`},
		{"bad \xff\xfe utf-8, a real \uFFFD", `bad \xff\xfe utf-8, a real ` + "\uFFFD", `bad \xff\xfe utf-8, a real ` + "\uFFFD"},
		{`C:\path\x1b`, `C:\path\x1b`, `C:\path\x1b`},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
	}
}

func TestPrint(t *testing.T) {
	var b bytes.Buffer
	err := Print(&b, func(w io.Writer) {
		io.WriteString(w, "summary: \x1b[")
		io.WriteString(w, "2J \xe2\x9c")
		io.WriteString(w, "\x93\n") // ✓ split between two writes
	})
	if got, want := b.String(), "summary: \\x1b[2J ✓\n"; err != nil || got != want {
		t.Errorf("Print() wrote %q, %v; want %q", got, err, want)
	}
}

// FuzzText: whatever comes in, what Text and Line return is valid UTF-8
// with no character a terminal acts on (Text keeps tab and newline), and
// JSON keeps a JSON string's meaning.
func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "a\x00b\x07", "\u009b\u202e", "\xff", "- x\n\t- y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, keep := range []bool{true, false} {
			out := Line(s)
			if keep {
				out = Text(s)
			}
			if !utf8.ValidString(out) {
				t.Fatalf("escape(%q, %v) = %q: not UTF-8", s, keep, out)
			}
			for _, r := range out {
				if (r != '\t' && r != '\n' || !keep) && unsafe(r, keep) {
					t.Fatalf("escape(%q, %v) = %q keeps %U", s, keep, out, r)
				}
			}
			if firstUnsafe(s, keep) < 0 && utf8.ValidString(s) && out != s {
				t.Fatalf("escape(%q, %v) = %q changed safe text", s, keep, out)
			}
		}
		// JSON: the same text once decoded, with nothing unsafe raw.
		doc, _ := json.Marshal(s)
		var before, after string
		esc := JSON(doc)
		if err := json.Unmarshal(doc, &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(esc, &after); err != nil || after != before {
			t.Fatalf("JSON(%s) = %s decodes to %q, %v; want %q", doc, esc, after, err, before)
		}
		for _, r := range string(esc) {
			if unsafe(r, false) {
				t.Fatalf("JSON(%s) = %s keeps %U", doc, esc, r)
			}
		}
	})
}

func TestJSON(t *testing.T) {
	in := []byte(`{"a":"x\u001b` + "\u009b\u007f\u202e" + `✓"}`)
	want := `{"a":"x\u001b\u009b\u007f\u202e✓"}`
	if got := string(JSON(in)); got != want {
		t.Errorf("JSON(%q) = %q, want %q", in, got, want)
	}
}
