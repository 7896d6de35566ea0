package web

import (
	"html"
	"io"

	"github.com/vigil-iot/vigil/internal/termtext"
)

// writeJSONDoc writes v as one indented JSON document with no control
// character raw (termtext.WriteJSON): curl prints /api/status to a
// terminal, and the model's text and other devices' names are in it.
func writeJSONDoc(w io.Writer, v any) error { return termtext.WriteJSON(w, v) }

// escHTML escapes s for the page: its control characters as termtext
// shows them (a page fetched with curl reaches a terminal, and a browser
// shows them as nothing at all), then HTML.
func escHTML(s string) string { return html.EscapeString(termtext.Text(s)) }
