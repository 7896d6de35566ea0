package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readConfig(t *testing.T, path string) *Config {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f, filepath.Base(path))
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return c
}

func TestWriteTOMLGolden(t *testing.T) {
	c := readConfig(t, "testdata/full.toml")
	err := c.ResolveSecrets(
		env(map[string]string{"OPENAI_API_KEY": "sk-golden-secret", "CREDENTIALS_DIRECTORY": "/run/credentials/vigil.service"}),
		files(map[string]string{"/run/credentials/vigil.service/telegram.token": "123:golden-token\n"}))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := c.WriteTOML(&got); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-golden-secret", "golden-token"} {
		if strings.Contains(got.String(), secret) {
			t.Errorf("WriteTOML output contains the secret %q", secret)
		}
	}
	golden := "testdata/full.golden"
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("WriteTOML mismatch (-%s +got), UPDATE_GOLDEN=1 rewrites it:\n%s", golden, diff)
	}
}

// TestWriteTOMLRoundTrip parses what WriteTOML wrote and expects the same
// config back.
func TestWriteTOMLRoundTrip(t *testing.T) {
	for _, src := range []string{
		"",
		"[device]\ntags = [\"north\", \"gh-2\"]\n",
		"[heartbeat]\ninterval = \"0\"\nenabled = false\n[llm]\nprovider = \"anthropic\"\napi_key_file = \"k\"\n",
		"[llm]\napi_key_env = \"\"\nbase_url = \"http://127.0.0.1:11434/v1\"\n",
		"[[sensor]]\nname = \"q\"\ndriver = \"sim\"\ndeadband = { x_y = 1e-9, big = 1e300 }\n[[rule]]\nname = \"r\"\nwhen = \"q.x > 1\"\nmessage = \"tab\\there \\\"quoted\\\" \\\\ \\n é\"\n",
		"[mqtt]\nbroker = \"ssl://h:8883\"\nca_file = \"ca.pem\"\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\n[telegram]\ntoken_env = \"T\"\nchat_id = -1001\nallowed_chats = [1, -1001]\n",
		"[mqtt]\nbrokers = [\"ssl://a:8883\", \"wss://b:443/mqtt\"]\nca_file = \"ca.pem\"\n",
		"[telegram]\ntoken_env = \"T\"\nchat_id = 7\nquiet_hours = \"23:30-24:00\"\nquiet_min_severity = \"warning\"\nmax_per_hour = 0\n",
	} {
		c := mustParse(t, src)
		back := roundTrip(t, c)
		sameLines(c, back)
		if diff := cmp.Diff(c, back, cmpConfig...); diff != "" {
			t.Errorf("Parse(WriteTOML(Parse(%q))) mismatch (-want +got):\n%s", src, diff)
		}
	}
	c := readConfig(t, "testdata/full.toml")
	back := roundTrip(t, c)
	sameLines(c, back)
	if diff := cmp.Diff(c, back, cmpConfig...); diff != "" {
		t.Errorf("full.toml round trip mismatch (-want +got):\n%s", diff)
	}
}

// TestWriteTOMLSchedule: with a schedule in force, the resolved config
// shows the schedule and no interval (which does not apply), and still
// reads back as the same config.
func TestWriteTOMLSchedule(t *testing.T) {
	c := mustParse(t, "[heartbeat]\nschedule = [\"07:30\", \"19:00\"]\n")
	out := writeString(t, c)
	if strings.Contains(out, "\ninterval = ") {
		t.Errorf("WriteTOML with a schedule prints an interval:\n%s", out)
	}
	for _, want := range []string{"\nschedule = [\"07:30\", \"19:00\"]\n", "\n# interval: not used: heartbeat.schedule is in force\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("WriteTOML with a schedule lacks %q:\n%s", want, out)
		}
	}
	back := roundTrip(t, c)
	if diff := cmp.Diff(c, back, cmpConfig...); diff != "" {
		t.Errorf("round trip with a schedule (-want +got):\n%s", diff)
	}
	if out := writeString(t, mustParse(t, "")); !strings.Contains(out, "\ninterval = \"30m\"\n") {
		t.Errorf("WriteTOML without a schedule lacks the interval:\n%s", out)
	}
}

func writeString(t *testing.T, c *Config) string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteTOML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// sameLines copies the header lines of c into back: they differ (WriteTOML
// drops comments), everything else must not.
func sameLines(c, back *Config) {
	for i := range min(len(back.Sensors), len(c.Sensors)) {
		back.Sensors[i].Line = c.Sensors[i].Line
	}
	for i := range min(len(back.Rules), len(c.Rules)) {
		back.Rules[i].Line = c.Rules[i].Line
	}
}

func roundTrip(t *testing.T, c *Config) *Config {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteTOML(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(&buf, "written.toml")
	if err != nil {
		t.Fatalf("Parse(WriteTOML()) = %v\n%s", err, buf.String())
	}
	return back
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteTOMLError(t *testing.T) {
	c := mustParse(t, "")
	if err := c.WriteTOML(failWriter{}); err == nil {
		t.Error("WriteTOML to a failing writer = nil, want error")
	}
}

// TestWriteTOMLHeartbeatsOff: interval = "0" turns heartbeats off, and the
// resolved config says so: enabled = false, with the key that did it,
// never enabled = true beside interval = "0".
func TestWriteTOMLHeartbeatsOff(t *testing.T) {
	for src, reason := range map[string]string{
		"[heartbeat]\ninterval = \"0s\"\n":                 `# heartbeats are off: heartbeat.interval = "0"`,
		"[heartbeat]\nenabled = false\n":                   `# heartbeats are off: heartbeat.enabled = false`,
		"[heartbeat]\nenabled = false\ninterval = \"0\"\n": `# heartbeats are off: heartbeat.enabled = false`,
	} {
		c := mustParse(t, src)
		var buf strings.Builder
		if err := c.WriteTOML(&buf); err != nil {
			t.Fatal(err)
		}
		if want := reason + "\nenabled = false\n"; !strings.Contains(buf.String(), want) {
			t.Errorf("WriteTOML of %q has no %q:\n%s", src, want, buf.String())
		}
		if c.HeartbeatEnabled() {
			t.Errorf("HeartbeatEnabled() for %q = true", src)
		}
	}
}
