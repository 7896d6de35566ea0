package config

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestChecklistTemplateIsEmpty(t *testing.T) {
	text, empty, err := ParseChecklist(strings.NewReader(ChecklistTemplate))
	if err != nil || !empty {
		t.Fatalf("ParseChecklist(ChecklistTemplate) = %q, %v, %v; want empty", text, empty, err)
	}
	// Uncommenting one example makes it count.
	edited := strings.Replace(ChecklistTemplate,
		"<!-- - Humidity above 90 % for more than an hour means the vent is stuck (air.humidity). -->",
		"- Humidity above 90 % for more than an hour means the vent is stuck (air.humidity).", 1)
	if edited == ChecklistTemplate {
		t.Fatal("template example line not found")
	}
	text, empty, err = ParseChecklist(strings.NewReader(edited))
	if err != nil || empty {
		t.Fatalf("ParseChecklist(edited template) = %q, %v, %v; want non-empty", text, empty, err)
	}
	want := "# Heartbeat checklist\n\n## Checks\n\n- Humidity above 90 % for more than an hour means the vent is stuck (air.humidity)."
	if text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
}

func TestParseChecklist(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		text  string
		empty bool
	}{
		{"nothing", "", "", true},
		{"blank lines", "\n  \n\t\n", "", true},
		{"headings", "# Heartbeat\n\n## Checks\n###\n", "# Heartbeat\n\n## Checks\n###", true},
		{"list markers", "- \n* [ ]\n+\n1.\n2)\n- [x]\n> \n---\n", "-\n* [ ]\n+\n1.\n2)\n- [x]\n>\n---", true},
		{"comment", "<!-- check the freezer -->\n", "", true},
		{"multi-line comment", "# H\n<!--\n- freezer\n- air\n-->\n", "# H", true},
		{"unterminated comment", "# H\n<!-- - freezer\n- air\n", "# H", true},
		{"one check", "# H\n\n- Freezer below -15 °C\n", "# H\n\n- Freezer below -15 °C", false},
		{"comment inside a line", "- air ok <!-- note --> please\n", "- air ok  please", false},
		{"text after a comment", "<!-- a\nb --> check disk\n", "check disk", false},
		{"numbered item", "1. disk under 90 %\n", "1. disk under 90 %", false},
		{"a number counts", "- 42\n", "- 42", false},
		{"non-latin", "- 冷凍庫\n", "- 冷凍庫", false},
		{"crlf and bom", "\ufeff# H\r\n\r\n- air\r\n", "# H\n\n- air", false},
		{"blank runs collapse", "- a\n\n\n\n- b   \n", "- a\n\n- b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, empty, err := ParseChecklist(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseChecklist(%q) error: %v", tt.in, err)
			}
			if text != tt.text || empty != tt.empty {
				t.Errorf("ParseChecklist(%q) = %q, %v; want %q, %v", tt.in, text, empty, tt.text, tt.empty)
			}
		})
	}
}

func TestParseChecklistErrors(t *testing.T) {
	big := strings.Repeat("- check\n", MaxChecklistSize/8+1)
	if _, _, err := ParseChecklist(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than 16 KiB") {
		t.Errorf("ParseChecklist(%d bytes) error = %v, want the 16 KiB cap", len(big), err)
	}
	exact := strings.Repeat("x", MaxChecklistSize)
	if _, _, err := ParseChecklist(strings.NewReader(exact)); err != nil {
		t.Errorf("ParseChecklist(exactly 16 KiB) = %v, want nil", err)
	}
	_, _, err := ParseChecklist(strings.NewReader("# H\n- caf\xe9\n"))
	if err == nil || err.Error() != "checklist line 2: not valid UTF-8" {
		t.Errorf("ParseChecklist(latin-1) error = %v", err)
	}
}

// TestChecklistControlCharacters: a checklist with a control character
// other than a tab or a newline (a terminal escape, a bell, a NUL), even
// inside a comment, is refused with its line and the character, whichever
// way it arrives (every path reads it through ParseChecklist). A CRLF file
// is fine: its CRs are line ends.
func TestChecklistControlCharacters(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"- a\x1b[31m red\n", "checklist line 1: must not contain U+001B (ESC), a control character: only tabs and newlines may be in a checklist; remove it"},
		{"# H\n- ok\x00\n", "checklist line 2: must not contain U+0000 (NUL), a control character: only tabs and newlines may be in a checklist; remove it"},
		{"- ring\a\n", "checklist line 1: must not contain U+0007 (BEL), a control character: only tabs and newlines may be in a checklist; remove it"},
		{"# H\n<!--\n\x1b[2J\n-->\n", "checklist line 3: must not contain U+001B (ESC), a control character: only tabs and newlines may be in a checklist; remove it"},
		{"- a\x7f\n", "checklist line 1: must not contain U+007F (DEL), a control character: only tabs and newlines may be in a checklist; remove it"},
		{"- a\n- b\u009b2J\n", "checklist line 2: must not contain U+009B (CSI), a control character: only tabs and newlines may be in a checklist; remove it"},
		{"- a\rb\n", "checklist line 1: must not contain U+000D (CR), a control character: only tabs and newlines may be in a checklist; remove it"},
	} {
		if _, _, err := ParseChecklist(strings.NewReader(tt.in)); err == nil || err.Error() != tt.want {
			t.Errorf("ParseChecklist(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
	text, _, err := ParseChecklist(strings.NewReader("# H\r\n- air\tok\r\n"))
	if err != nil || text != "# H\n- air\tok" {
		t.Errorf("ParseChecklist(CRLF and a tab) = %q, %v; want %q, nil", text, err, "# H\n- air\tok")
	}
}

func FuzzChecklist(f *testing.F) {
	f.Add(ChecklistTemplate)
	f.Add("# H\n- air <!-- x --> ok\n<!--\n")
	f.Add("1.\n- [ ]\n\r\n\ufeff")
	f.Fuzz(func(t *testing.T, in string) {
		text, empty, err := ParseChecklist(strings.NewReader(in))
		if err != nil {
			if len(in) <= MaxChecklistSize && utf8.ValidString(in) && !hasControl(strings.ReplaceAll(in, "\r\n", "\n")) {
				t.Fatalf("ParseChecklist(%q) = %v for a small valid input", in, err)
			}
			return
		}
		if hasControl(text) {
			t.Fatalf("ParseChecklist(%q) = %q, with a control character", in, text)
		}
		if len(text) > len(in) {
			t.Fatalf("text %q longer than input %q", text, in)
		}
		// Parsing the result again changes nothing.
		text2, empty2, err := ParseChecklist(strings.NewReader(text))
		if err != nil || text2 != text || empty2 != empty {
			t.Fatalf("ParseChecklist(ParseChecklist(%q)) = %q, %v, %v; want %q, %v", in, text2, empty2, err, text, empty)
		}
		if !empty && strings.TrimSpace(text) == "" {
			t.Fatalf("ParseChecklist(%q): not empty but no text", in)
		}
	})
}

func hasControl(s string) bool { _, _, ok := ControlChar(s, "\t\n"); return ok }
