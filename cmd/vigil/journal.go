package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
)

// journalHandler prefixes every log line with its sd-daemon(3) priority,
// "<3>" error, "<4>" warning, "<6>" info, "<7>" debug, so journald files
// each line at its level and `journalctl -u vigil -p warning` shows vigil's
// warnings. It wraps a handler that writes exactly one line per record
// (slog's TextHandler does) to the journalOut it shares with its children.
type journalHandler struct {
	inner slog.Handler
	out   *journalOut
}

// journalOut is the writer under the inner handler: it puts the priority of
// the record being handled in front of the line.
type journalOut struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func (o *journalOut) Write(p []byte) (int, error) {
	o.buf = append(append(o.buf[:0], o.prefix...), p...)
	if _, err := o.w.Write(o.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// newJournalHandler returns a text handler with options opts whose lines
// go to w with their journal priority in front.
func newJournalHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	out := &journalOut{w: w}
	return &journalHandler{inner: slog.NewTextHandler(out, opts), out: out}
}

// journalPriority maps a slog level to a syslog priority prefix.
func journalPriority(l slog.Level) string {
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

func (h *journalHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.prefix = append(h.out.prefix[:0], journalPriority(r.Level)...)
	return h.inner.Handle(ctx, r)
}

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &journalHandler{inner: h.inner.WithAttrs(as), out: h.out}
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	return &journalHandler{inner: h.inner.WithGroup(name), out: h.out}
}

// toJournal reports whether w is the journal's stream: systemd sets
// $JOURNAL_STREAM to "DEV:INODE" of the stream it connected to stderr, and a
// stderr redirected elsewhere (`vigil run 2>log` in a unit) has another.
func toJournal(w io.Writer) bool {
	js := os.Getenv("JOURNAL_STREAM")
	f, ok := w.(*os.File)
	if js == "" || !ok {
		return false
	}
	ds, is, ok := strings.Cut(js, ":")
	if !ok {
		return false
	}
	dev, err1 := strconv.ParseUint(ds, 10, 64)
	ino, err2 := strconv.ParseUint(is, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	d, i, err := devIno(f)
	return err == nil && d == dev && i == ino
}
