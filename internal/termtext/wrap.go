package termtext

import (
	"strings"
	"unicode/utf8"
)

// Wrap folds s at spaces into lines of at most width characters (a word
// longer than width stands alone on its line), each line after the first
// starting with indent, which counts toward width. Runs of white space
// become one space. vigil's help and vigil fleet's summary fold through
// it.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := utf8.RuneCountInString(w)
		if i > 0 {
			if n+1+l > width {
				b.WriteString("\n" + indent)
				n = utf8.RuneCountInString(indent)
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
