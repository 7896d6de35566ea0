// Package tlshint names the fix for a TLS certificate error: Hint for an
// error, Handler for a log line that carries one (the LLM, Telegram,
// mqtts:// and wss:// all meet the same three failures on a board).
package tlshint

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"strings"
)

// Hint names the fix for a TLS certificate error (LLM, Telegram,
// mqtts://, wss://), or returns "".
func Hint(err error) string {
	if err == nil {
		return ""
	}
	var ua x509.UnknownAuthorityError
	var inv x509.CertificateInvalidError
	var host x509.HostnameError
	msg := err.Error() // no typed error: paho.mqtt.golang's connect errors and a log line's string attribute carry the x509 error as text
	switch {
	case errors.As(err, &ua) || strings.Contains(msg, "x509: certificate signed by unknown authority"),
		strings.Contains(msg, "x509: failed to load system roots"):
		return "the system trusts no CA for this server: install the CA bundle (apt install ca-certificates); for a private CA set ca_file"
	case errors.As(err, &inv) && inv.Reason == x509.Expired || strings.Contains(msg, "x509: certificate has expired or is not yet valid"):
		return "check the board's clock (vigil status, timedatectl): a board without an RTC boots in the past until NTP syncs"
	case errors.As(err, &host) || strings.Contains(msg, "x509: certificate is valid for"):
		return "the server's certificate does not name the host in the URL: use a name the certificate lists"
	}
	return ""
}

// Handler adds a hint= attribute naming the fix to a log line that
// carries an x509 error.
type Handler struct{ slog.Handler }

func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	var hint string
	r.Attrs(func(a slog.Attr) bool {
		if hint != "" {
			return false
		}
		switch v := a.Value.Any().(type) {
		case error:
			hint = Hint(v)
		case string:
			if strings.Contains(v, "x509: ") {
				hint = Hint(errors.New(v))
			}
		}
		return true
	})
	if hint != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("hint", hint))
	}
	return h.Handler.Handle(ctx, r)
}

func (h Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return Handler{h.Handler.WithAttrs(as)}
}

func (h Handler) WithGroup(name string) slog.Handler {
	return Handler{h.Handler.WithGroup(name)}
}
