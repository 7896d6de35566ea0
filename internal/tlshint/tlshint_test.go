package tlshint

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Real TLS failures against a real server, as the LLM and Telegram clients
// meet them, each get the hint that names its fix.
func TestX509Hint(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	get := func(cfg *tls.Config) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for _, c := range []struct {
		name string
		cfg  *tls.Config
		want string
	}{
		{"no CA trusts the server (no ca-certificates)", &tls.Config{RootCAs: x509.NewCertPool()}, "apt install ca-certificates"},
		{"the clock is far ahead of the certificate", &tls.Config{RootCAs: pool, Time: func() time.Time { return time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) }}, "check the board's clock"},
		{"the clock is behind the certificate", &tls.Config{RootCAs: pool, Time: func() time.Time { return time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) }}, "check the board's clock"},
		{"another host name", &tls.Config{RootCAs: pool, ServerName: "broker.invalid"}, "does not name the host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := get(c.cfg)
			if err == nil {
				t.Fatal("the TLS handshake succeeded")
			}
			wrapped := fmt.Errorf("llm request: %w", err)
			if h := Hint(wrapped); !strings.Contains(h, c.want) {
				t.Errorf("Hint(%v) = %q, want it to say %q", err, h, c.want)
			}
			// Flattened into a string (an error text in a log attribute).
			if h := Hint(errors.New(wrapped.Error())); !strings.Contains(h, c.want) {
				t.Errorf("Hint(text %q) = %q, want %q", wrapped.Error(), h, c.want)
			}
		})
	}
	if err := get(&tls.Config{RootCAs: pool}); err != nil {
		t.Fatalf("control: a trusted server fails: %v", err)
	}
	if h := Hint(errors.New("dial tcp 127.0.0.1:1: connect: connection refused")); h != "" {
		t.Errorf("a non-TLS error got the hint %q", h)
	}
}

func TestHintHandler(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(Handler{slog.NewTextHandler(&b, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})}).With("transport", "telegram")
	log.Warn("delivery failed", "err", fmt.Errorf("send: %w", x509.UnknownAuthorityError{}))
	log.Warn("delivery failed", "err", errors.New("connection refused"))
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(got) != 2 {
		t.Fatalf("lines:\n%s", b.String())
	}
	if !strings.Contains(got[0], `hint="the system trusts no CA for this server: install the CA bundle (apt install ca-certificates); for a private CA set ca_file"`) ||
		!strings.HasPrefix(got[0], "level=WARN msg=\"delivery failed\" transport=telegram err=") {
		t.Errorf("x509 line: %s", got[0])
	}
	if strings.Contains(got[1], "hint=") {
		t.Errorf("a non-TLS error got a hint: %s", got[1])
	}
}
