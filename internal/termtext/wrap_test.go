package termtext

import "testing"

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		s      string
		width  int
		indent string
		want   string
	}{
		{"a bb ccc dddd", 6, "", "a bb\nccc\ndddd"},
		{"a bb ccc dddd", 6, "  ", "a bb\n  ccc\n  dddd"},
		{"3 versions: 41 on v1.4.2, 2 on v1.4.1", 20, "  ", "3 versions: 41 on\n  v1.4.2, 2 on\n  v1.4.1"},
		{"°C °C °C", 5, "", "°C °C\n°C"}, // runes, not bytes
		{"averyverylongword x", 4, "", "averyverylongword\nx"},
		{"  spaced   out  ", 80, "", "spaced out"},
	} {
		if got := Wrap(tc.s, tc.width, tc.indent); got != tc.want {
			t.Errorf("Wrap(%q, %d, %q) = %q, want %q", tc.s, tc.width, tc.indent, got, tc.want)
		}
	}
}
