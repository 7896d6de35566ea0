package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/redact"
)

// TestNewThinkerRetries checks llm.max_retries reaches the agent: a 503
// is asked once with max_retries = 0 and four times with 3.
func TestNewThinkerRetries(t *testing.T) {
	for _, tt := range []struct{ retries, requests int }{{0, 1}, {3, 4}} {
		t.Run(fmt.Sprint(tt.retries), func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				http.Error(w, `{"error":"loading model"}`, http.StatusServiceUnavailable)
			}))
			defer srv.Close()
			src := fmt.Sprintf("[llm]\nbase_url = %q\napi_key_env = \"\"\nmax_retries = %d\nretry_backoff = \"10ms\"\n", srv.URL+"/v1", tt.retries)
			cfg, err := config.Parse(strings.NewReader(src), "config.toml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			th, err := newThinker(cfg, nil, nil, redact.New(), clockwork.NewRealClock(), slog.New(slog.DiscardHandler))
			if err != nil || th == nil {
				t.Fatalf("newThinker = %v, %v", th, err)
			}
			_, err = th.Think(context.Background(), agent.Input{Checklist: "- is it fine?", Now: time.Now()})
			if !errors.Is(err, agent.ErrUnreachable) {
				t.Fatalf("Think error = %v, want ErrUnreachable", err)
			}
			if got := int(n.Load()); got != tt.requests {
				t.Errorf("max_retries = %d: %d requests, want %d", tt.retries, got, tt.requests)
			}
		})
	}
}

// TestNoIntervalToolWithASchedule: with heartbeat.schedule in force the
// interval does not apply, so model_may's "interval" offers no
// set_interval tool (the validator would refuse every call); without a
// schedule it does.
func TestNoIntervalToolWithASchedule(t *testing.T) {
	for _, tt := range []struct {
		timing string
		want   bool
	}{{`schedule = ["07:30", "19:00"]`, false}, {`interval = "30m"`, true}} {
		var tools atomic.Value
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var b strings.Builder
			_, _ = io.Copy(&b, r.Body)
			tools.Store(b.String())
			http.Error(w, `{"error":"no"}`, http.StatusBadRequest)
		}))
		src := fmt.Sprintf("[heartbeat]\n%s\nmodel_may = [\"pause\", \"interval\"]\n\n[llm]\nbase_url = %q\napi_key_env = \"\"\n", tt.timing, srv.URL+"/v1")
		cfg, err := config.Parse(strings.NewReader(src), "config.toml")
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		th, err := newThinker(cfg, nil, nil, redact.New(), clockwork.NewRealClock(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = th.Think(context.Background(), agent.Input{Checklist: "- is it fine?", Now: time.Now()})
		body, _ := tools.Load().(string)
		if got := strings.Contains(body, `"set_interval"`); got != tt.want || !strings.Contains(body, `"pause_heartbeats"`) {
			t.Errorf("%s: set_interval offered = %v, want %v (request: %.300s)", tt.timing, got, tt.want, body)
		}
		srv.Close()
	}
}

// selfSignedPEM returns a self-signed certificate and its key, PEM.
func selfSignedPEM(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vigil-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestMQTTTLSNamesTheBadFile: a CA file that holds no certificate is
// blamed on mqtt.ca_file, a client certificate that does not match its
// key on mqtt.cert_file, each with its line, also when both are set.
func TestMQTTTLSNamesTheBadFile(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSignedPEM(t)
	other, _ := selfSignedPEM(t)
	files := map[string][]byte{"ca.pem": cert, "bad.pem": []byte("not pem"), "cert.pem": cert, "key.pem": key, "other.pem": other}
	for name, b := range files {
		writeFile(t, filepath.Join(dir, name), string(b))
	}
	for _, tt := range []struct{ ca, cert, want string }{
		{"bad.pem", "cert.pem", "config.toml:4: mqtt.ca_file: mqtt: ca: no certificate found in PEM data"},
		{"ca.pem", "other.pem", "config.toml:5: mqtt.cert_file: mqtt: client certificate: "},
		{"ca.pem", "cert.pem", ""},
	} {
		src := fmt.Sprintf("[mqtt]\nbroker = \"ssl://127.0.0.1:8883\"\n\nca_file = %q\ncert_file = %q\nkey_file = %q\n",
			filepath.Join(dir, tt.ca), filepath.Join(dir, tt.cert), filepath.Join(dir, "key.pem"))
		cfg, err := config.Parse(strings.NewReader(src), "config.toml")
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		_, err = mqttTLS(cfg)
		if tt.want == "" {
			if err != nil {
				t.Errorf("mqttTLS(ca %s, cert %s) = %v, want none", tt.ca, tt.cert, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("mqttTLS(ca %s, cert %s) = %v, want %q...", tt.ca, tt.cert, err, tt.want)
		}
	}
}
