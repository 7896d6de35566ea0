package transport

import (
	"context"
	"log/slog"

	"github.com/vigil-iot/vigil/alert"
)

// Log is the transport that writes one structured log line per alert. It
// always acknowledges, so it never holds the outbox back.
type Log struct {
	Logger *slog.Logger
}

// Name identifies the transport's outbox cursor.
func (l *Log) Name() string { return "log" }

// Notify logs the alert.
func (l *Log) Notify(ctx context.Context, a alert.Alert) error {
	level := slog.LevelInfo
	if a.IsProblem() && a.Severity >= alert.Warning { // a notice is INFO, whatever its severity
		level = slog.LevelWarn
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String("id", a.ID),
		slog.String("severity", a.Severity.String()),
		slog.String("source", a.Source))
	if a.Rule != "" { // an LLM alert names no rule
		attrs = append(attrs, slog.String("rule", a.Rule))
	}
	attrs = append(attrs,
		slog.String("state", a.State),
		slog.String("summary", a.Summary))
	l.Logger.LogAttrs(ctx, level, "alert", attrs...)
	return nil
}
