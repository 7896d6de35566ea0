// Package journal is the log handler for systemd's journal: every line
// carries its sd-daemon(3) priority, so journald files it at its level.
// Whether stderr is the journal's stream is the command line's to say
// (it reads $JOURNAL_STREAM).
package journal

import (
	"context"
	"io"
	"log/slog"
	"sync"
)

// handler prefixes every log line with its sd-daemon(3) priority,
// "<3>" error, "<4>" warning, "<6>" info, "<7>" debug, so journald files
// each line at its level and `journalctl -u vigil -p warning` shows vigil's
// warnings. It wraps a handler that writes exactly one line per record
// (slog's TextHandler does) to the output it shares with its children.
type handler struct {
	inner slog.Handler
	out   *output
}

// output is the writer under the inner handler: it puts the priority of
// the record being handled in front of the line.
type output struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func (o *output) Write(p []byte) (int, error) {
	o.buf = append(append(o.buf[:0], o.prefix...), p...)
	if _, err := o.w.Write(o.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// NewHandler returns a text handler with options opts whose lines
// go to w with their journal priority in front.
func NewHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	out := &output{w: w}
	return &handler{inner: slog.NewTextHandler(out, opts), out: out}
}

// priority maps a slog level to a syslog priority prefix.
func priority(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "<3>"
	case l >= slog.LevelWarn:
		return "<4>"
	case l >= slog.LevelInfo:
		return "<6>"
	default:
		return "<7>"
	}
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.prefix = append(h.out.prefix[:0], priority(r.Level)...)
	return h.inner.Handle(ctx, r)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(as), out: h.out}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), out: h.out}
}
