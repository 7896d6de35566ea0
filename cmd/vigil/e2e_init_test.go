package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// The sim board's emulated I²C bus for vigil init: a BME280 at 0x76, where
// a BMP280 (same addresses, same registers but humidity) could be, and a
// BMP280 at 0x77. The survey must tell them apart by the ID register.
const initSimI2C = "bme280@0x76,bmp280@0x77"

const initMQTTPassword = "e2e-broker-PASSWORD"

// initRig is what `vigil init` talks to: the fake Bot API (getMe, then a
// /start once the wizard asks for it) and a mosquitto that wants a
// password.
type initRig struct {
	dir    string
	bot    *botAPI
	broker *mosquittotest.Broker
	alerts *mosquittotest.Subscriber // vigil/+/alert
	token  string                    // file holding botToken
	pw     string                    // file holding initMQTTPassword
}

const initChat = 5151

func newInitRig(t *testing.T) *initRig {
	t.Helper()
	mosquittotest.Bin(t)
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		t.Skip("mosquitto_passwd not found (make test-deps installs mosquitto)")
	}
	r := &initRig{dir: t.TempDir(), bot: newBotAPI(t)}
	pwdb := filepath.Join(r.dir, "passwd")
	if out, err := exec.Command(passwd, "-c", "-b", pwdb, "vigil", initMQTTPassword).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	r.broker = mosquittotest.Start(t, mosquittotest.Options{Config: "user " + me.Username + "\nlistener %d 127.0.0.1\nallow_anonymous false\npassword_file " + pwdb + "\n"})
	r.alerts = mosquittotest.SubscribeWith(t, r.broker.URL(), mosquittotest.SubscriberOptions{Configure: func(o *paho.ClientOptions) {
		o.SetUsername("vigil").SetPassword(initMQTTPassword)
	}}, "vigil/+/alert")
	r.token = filepath.Join(r.dir, "token")
	r.pw = filepath.Join(r.dir, "mqtt-password")
	os.WriteFile(r.token, []byte(botToken+"\n"), 0o600)
	os.WriteFile(r.pw, []byte(initMQTTPassword+"\n"), 0o600)
	return r
}

// mqttURL is the broker as a person types it.
func (r *initRig) mqttURL() string { return "mqtt://" + r.broker.Addr() }

// plumbing are the flags of a test run a person on a board would not
// type: the simulated board, the fake Bot API, where to write.
func (r *initRig) plumbing(out string) []string {
	return []string{"-c", filepath.Join(out, "config.toml"), "init", "--board", "sim", "--credstore", filepath.Join(out, "cred"),
		"--no-systemd", "--telegram-api", r.bot.srv.URL}
}

// sendStartWhenAsked adds the person's /start to the fake Bot API once
// the output (read by text) asks for it, until the run is done.
func (r *initRig) sendStartWhenAsked(t *testing.T, text func() string, before int, done <-chan struct{}) {
	for {
		if strings.Contains(text(), "Send /start") {
			r.start(t, before)
			return
		}
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// polls counts the wizard's first getUpdates of a wait for /start (offset
// -1: it passes over whatever came before).
func (r *initRig) polls() int {
	r.bot.mu.Lock()
	defer r.bot.mu.Unlock()
	n := 0
	for _, o := range r.bot.offsets {
		if o == -1 {
			n++
		}
	}
	return n
}

// start is the person's /start, sent once the wizard (which polled before
// times already) began to wait for it.
func (r *initRig) start(t *testing.T, before int) {
	for deadline := time.Now().Add(20 * time.Second); r.polls() <= before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("vigil init never began to wait for /start")
			return
		}
	}
	r.bot.mu.Lock()
	id := int64(100 + len(r.bot.updates))
	r.bot.mu.Unlock()
	r.bot.addUpdate(botUpdate{ID: id, Chat: initChat, Text: "/start"})
}

// lockedBuffer is a bytes.Buffer written by a child and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// initYes runs `vigil init --yes` with the answers as flags and returns
// its output and exit code.
func (r *initRig) initYes(t *testing.T, out string) (string, int) {
	t.Helper()
	args := append(r.plumbing(out), "--yes", "--telegram-token-file", r.token,
		"--mqtt", r.mqttURL(), "--mqtt-user", "vigil", "--mqtt-password-file", r.pw)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, vigilBin, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "VIGIL_CONFIG=", "NOTIFY_SOCKET=", "VIGIL_SIM_I2C="+initSimI2C)
	var buf lockedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	before := r.polls()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, asked := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(asked)
		r.sendStartWhenAsked(t, buf.String, before, done)
	}()
	err := cmd.Wait()
	close(done)
	<-asked
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return buf.String(), code
}

// loadCredentials does what the unit's LoadCredential= lines do: the
// credstore's vigil.NAME becomes NAME in $CREDENTIALS_DIRECTORY.
func loadCredentials(t *testing.T, credstore string) string {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(credstore, "vigil.*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, strings.TrimPrefix(filepath.Base(f), "vigil.")), b, 0o400)
	}
	return dir
}

// TestInitYesEndToEnd: vigil init --yes on the sim board with an emulated
// I²C bus, a fake Bot API and a real mosquitto writes a config that
// config check accepts, names the BME280 as one, keeps the secrets in the
// credential files only, and its test alert arrives on Telegram and MQTT.
func TestInitYesEndToEnd(t *testing.T) {
	r := newInitRig(t)
	out := filepath.Join(r.dir, "etc")
	text, code := r.initYes(t, out)
	if code != 0 {
		t.Fatalf("vigil init --yes: exit %d\n%s", code, text)
	}
	cfgPath := filepath.Join(out, "config.toml")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	creds := loadCredentials(t, filepath.Join(out, "cred"))
	if o, e, code := runIn(t, "", []string{"CREDENTIALS_DIRECTORY=" + creds}, "-c", cfgPath, "config", "check"); code != 0 {
		t.Fatalf("config check: exit %d\n%s\n%s\nconfig:\n%s", code, o, e, data)
	}
	// The survey named the chips by their ID register.
	for _, re := range []string{`driver = "bme280"\n(?:bus = "[^"]*"\n)?address = 0x76\n`, `driver = "bmp280"\n(?:bus = "[^"]*"\n)?address = 0x77\n`} {
		if !regexp.MustCompile(re).Match(data) {
			t.Errorf("config lacks %s:\n%s", re, data)
		}
	}
	for _, want := range []string{`token_file = "telegram_token"`, "chat_id = 5151", "allowed_chats = [5151]", `password_file = "mqtt_password"`, `username = "vigil"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("config lacks %q:\n%s", want, data)
		}
	}
	// The secrets are in the credential files and nowhere else written.
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(p) == filepath.Join(out, "cred") {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, s := range []string{botToken, initMQTTPassword} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
	for _, s := range []string{botToken, initMQTTPassword} {
		if strings.Contains(text, s) {
			t.Errorf("the output shows a secret:\n%s", text)
		}
	}
	for name, want := range map[string]string{"vigil.telegram_token": botToken, "vigil.mqtt_password": initMQTTPassword} {
		f := filepath.Join(out, "cred", name)
		b, err := os.ReadFile(f)
		st, _ := os.Stat(f)
		if err != nil || strings.TrimSpace(string(b)) != want || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want the secret, mode 0600", f, err, st.Mode().Perm())
		}
	}
	// The test alert arrived on Telegram and on MQTT.
	if len(r.bot.sentTo(initChat, "Test alert")) == 0 {
		t.Errorf("no test alert in chat %d; sent: %+v\n%s", initChat, r.bot.sent, text)
	}
	if m, ok := r.alerts.Maybe("", 5*time.Second); !ok || !strings.Contains(strings.ToLower(string(m.Payload)), "test") {
		t.Errorf("no test alert on MQTT vigil/+/alert (got %q on %q)\n%s", m.Payload, m.Topic, text)
	}
	// Run again without --force: refused, the file untouched.
	before, _ := os.ReadFile(cfgPath)
	if text, code := r.initYes(t, out); code != 1 || !strings.Contains(text, "exists: vigil init changes nothing without --force") {
		t.Errorf("second vigil init --yes: exit %d, want 1 and the refusal:\n%s", code, text)
	}
	if after, _ := os.ReadFile(cfgPath); !bytes.Equal(before, after) {
		t.Error("the refused run changed config.toml")
	}
}

// tmuxRun is vigil init on a terminal: a tmux session with its own server.
type tmuxRun struct {
	t       *testing.T
	bin     string
	sock    string
	session string
}

func (m *tmuxRun) tmux(args ...string) string {
	m.t.Helper()
	out, err := exec.Command(m.bin, append([]string{"-S", m.sock}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is everything the terminal showed, trailing spaces kept (a
// prompt ends in ": ").
func (m *tmuxRun) screen() []string {
	m.t.Helper()
	out := m.tmux("capture-pane", "-p", "-N", "-J", "-S", "-", "-t", m.session)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// type_ types s and Enter, as a person does.
func (m *tmuxRun) type_(s string) {
	if s != "" {
		m.tmux("send-keys", "-t", m.session, "-l", s)
	}
	m.tmux("send-keys", "-t", m.session, "Enter")
}

// TestInitInteractiveTmux: vigil init on a terminal, answered as a person
// would (Enter for each default, the token pasted, the broker typed, /start
// sent when asked), writes the same config.toml as the --yes run with the
// same answers. The secrets typed are never shown. VIGIL_INIT_TRANSCRIPT=write
// rewrites docs/init-transcript.md from this run; otherwise the questions
// it shows must be the transcript's.
func TestInitInteractiveTmux(t *testing.T) {
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not found: make test-deps installs it")
	}
	r := newInitRig(t)
	yes := filepath.Join(r.dir, "yes")
	if text, code := r.initYes(t, yes); code != 0 {
		t.Fatalf("vigil init --yes: exit %d\n%s", code, text)
	}
	tty := filepath.Join(r.dir, "tty")
	m := &tmuxRun{t: t, bin: bin, sock: filepath.Join(r.dir, "tmux.sock"), session: "init"}
	var cmd strings.Builder
	cmd.WriteString("env OPENAI_API_KEY= VIGIL_CONFIG= NOTIFY_SOCKET= VIGIL_SIM_I2C=" + initSimI2C + " " + vigilBin)
	for _, a := range r.plumbing(tty) {
		cmd.WriteString(" '" + a + "'")
	}
	cmd.WriteString("; echo \"[exit $?]\"; sleep 600")
	before := r.polls()
	m.tmux("new-session", "-d", "-x", "100", "-y", "40", "-s", m.session, cmd.String())
	t.Cleanup(func() { exec.Command(bin, "-S", m.sock, "kill-server").Run() })

	// What a person answers to each question, by what it asks.
	answers := []struct{ prompt, answer string }{
		{"Telegram bot token", botToken},
		{"MQTT broker URL", r.mqttURL()},
		{"MQTT user,", "vigil"},
		{"MQTT password", initMQTTPassword},
		{"", ""}, // anything else: Enter takes the default
	}
	answered, started := -1, false
	var lines []string
	deadline := time.Now().Add(60 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		lines = m.screen()
		last := len(lines) - 1
		if last < 0 {
			continue
		}
		if strings.HasPrefix(lines[last], "[exit ") {
			break
		}
		if !started && strings.Contains(strings.Join(lines, "\n"), "Send /start") {
			started = true
			r.start(t, before)
		}
		if last <= answered || !strings.HasSuffix(lines[last], ": ") {
			continue
		}
		answered = last
		for _, a := range answers {
			if strings.Contains(lines[last], a.prompt) {
				m.type_(a.answer)
				break
			}
		}
	}
	screen := strings.Join(lines, "\n")
	if len(lines) == 0 || lines[len(lines)-1] != "[exit 0]" {
		t.Fatalf("vigil init on a terminal did not finish with exit 0:\n%s", screen)
	}
	for _, s := range []string{botToken, initMQTTPassword} {
		if strings.Contains(screen, s) {
			t.Errorf("the terminal showed a secret:\n%s", screen)
		}
	}
	a, _ := os.ReadFile(filepath.Join(yes, "config.toml"))
	b, _ := os.ReadFile(filepath.Join(tty, "config.toml"))
	if !bytes.Equal(a, b) {
		t.Errorf("the config asked on a terminal differs from --yes's:\n--- yes\n%s\n--- terminal\n%s\n--- screen\n%s", a, b, screen)
	}

	transcript := initTranscript(screen, r, tty)
	golden := filepath.Join("..", "..", "docs", "init-transcript.md")
	if os.Getenv("VIGIL_INIT_TRANSCRIPT") == "write" {
		if err := os.WriteFile(golden, []byte(transcript), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	doc, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (VIGIL_INIT_TRANSCRIPT=write go test -run '^TestInitInteractiveTmux$' ./cmd/vigil writes it)", err)
	}
	if got, want := questions(transcript), questions(string(doc)); got != want {
		t.Errorf("vigil init asks other questions than docs/init-transcript.md shows: rewrite it with VIGIL_INIT_TRANSCRIPT=write go test -run '^TestInitInteractiveTmux$' ./cmd/vigil\n--- now\n%s\n--- doc\n%s", got, want)
	}
}

// initTranscript is the screen as docs/init-transcript.md shows it: the
// test's paths, ports and fake server as a board would have them.
func initTranscript(screen string, r *initRig, out string) string {
	screen = strings.TrimSuffix(screen, "[exit 0]")
	screen = strings.ReplaceAll(screen, vigilBin, "vigil")
	screen = strings.ReplaceAll(screen, filepath.Join(out, "config.toml"), "/etc/vigil/config.toml")
	screen = strings.ReplaceAll(screen, filepath.Join(out, "cred"), "/etc/credstore")
	screen = strings.ReplaceAll(screen, r.mqttURL(), "mqtt://192.168.1.2:1883")
	screen = strings.ReplaceAll(screen, r.bot.srv.URL, "https://api.telegram.org")
	var b strings.Builder
	b.WriteString("# `vigil init` on a terminal\n\n")
	b.WriteString("A run of `vigil init` as a person answers it, on the simulated board with a BME280 and a\n")
	b.WriteString("BMP280 on its emulated I²C bus, Telegram and a Home Assistant mosquitto; Enter takes the\n")
	b.WriteString("default in brackets, and the token and the password are not shown as they are typed. On a\n")
	b.WriteString("board, `vigil init` alone detects the board and scans its buses, and restarts vigil.service.\n")
	b.WriteString("`vigil -c /etc/vigil/config.toml init --yes --telegram-token-file FILE --mqtt URL --mqtt-user vigil\n")
	b.WriteString("--mqtt-password-file FILE` writes the same config.toml without questions.\n\n")
	b.WriteString("Generated by TestInitInteractiveTmux (cmd/vigil/e2e_init_test.go) with\n")
	b.WriteString("`VIGIL_INIT_TRANSCRIPT=write go test -run '^TestInitInteractiveTmux$' ./cmd/vigil`.\n\n")
	b.WriteString("```console\n# VIGIL_SIM_I2C=" + initSimI2C + " vigil init --board sim --no-systemd\n")
	b.WriteString(strings.TrimRight(screen, "\n ") + "\n```\n")
	return b.String()
}

// questions are the prompts of a transcript, in order.
func questions(transcript string) string {
	var q []string
	for _, l := range strings.Split(transcript, "\n") {
		if i := strings.LastIndex(l, ": "); i > 0 && (strings.Contains(l, "]: ") || strings.Contains(l, "): ")) {
			q = append(q, strings.TrimSpace(l[:i+1]))
		}
	}
	return strings.Join(q, "\n")
}

// TestInitFailuresEndToEnd: each check that fails says what is wrong and
// how to fix it, exits 1, and leaves the old config (and the credential
// store) as it was, even with --force.
func TestInitFailuresEndToEnd(t *testing.T) {
	r := newInitRig(t)
	bad := filepath.Join(r.dir, "bad-token")
	os.WriteFile(bad, []byte("4242:not-the-token\n"), 0o600)
	badpw := filepath.Join(r.dir, "bad-password")
	os.WriteFile(badpw, []byte("wrong\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"wrong telegram token", []string{"--telegram-token-file", bad, "--telegram-chat", "5151"},
			[]string{"401 Unauthorized", "@BotFather"}},
		{"broker refuses the password", []string{"--mqtt", r.mqttURL(), "--mqtt-user", "vigil", "--mqtt-password-file", badpw},
			[]string{"not authorized", `check user "vigil" and its password`}},
		{"llm does not answer", []string{"--llm", "ollama", "--llm-url", "http://127.0.0.1:1/v1"},
			[]string{"http://127.0.0.1:1/v1", "the LLM did not answer", "--llm none"}},
		{"no bus 9", []string{"--bus", "9"},
			[]string{"i2c bus 9: no such I²C bus (buses here: 1)", "leave --bus out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			cfg := filepath.Join(out, "config.toml")
			old := "[device]\nboard = \"sim\"\n"
			os.WriteFile(cfg, []byte(old), 0o640)
			args := append(append(r.plumbing(out), "--yes", "--force"), tt.args...)
			stdout, stderr, code := runIn(t, "", []string{"VIGIL_SIM_I2C=" + initSimI2C}, args...)
			if code != 1 {
				t.Fatalf("vigil %s: exit %d, want 1\n%s%s", strings.Join(tt.args, " "), code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if b, _ := os.ReadFile(cfg); string(b) != old {
				t.Errorf("config.toml changed:\n%s", b)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 1 {
				t.Errorf("written next to the config: %v", ents)
			}
		})
	}
	t.Run("config exists without --force", func(t *testing.T) {
		out := t.TempDir()
		cfg := filepath.Join(out, "config.toml")
		old := "[device]\nboard = \"sim\"\n"
		os.WriteFile(cfg, []byte(old), 0o640)
		_, stderr, code := runIn(t, "", nil, append(r.plumbing(out), "--yes")...)
		if code != 1 || !strings.Contains(stderr, cfg+" exists: vigil init changes nothing without --force (a backup is kept)") {
			t.Errorf("exit %d, want 1 and the refusal:\n%s", code, stderr)
		}
		if b, _ := os.ReadFile(cfg); string(b) != old {
			t.Errorf("config.toml changed:\n%s", b)
		}
	})
}

// TestInitYesNothingFound: `vigil -c PATH init --yes` with no answers, on
// a machine with no sensor (the sim board without an emulated bus), writes
// a valid rules-only config that watches the board's own health, and says
// so.
func TestInitYesNothingFound(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	// --board sim and --no-systemd keep the test off this machine's buses
	// and units; nothing else is answered.
	stdout, stderr, code := runIn(t, "", []string{"VIGIL_SIM_I2C="}, "-c", cfg, "init", "--yes", "--board", "sim", "--no-systemd")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"no sensor found: the config watches the board's own health", "LLM: none: rules-only", "no alert channel", "vigil config check: ok"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	data, _ := os.ReadFile(cfg)
	if bytes.Contains(data, []byte("[[sensor]]")) || !bytes.Contains(data, []byte(`when = "board.soc_temperature > 80"`)) {
		t.Errorf("want no sensor and the board's health rules:\n%s", data)
	}
	if o, e, code := runIn(t, "", nil, "-c", cfg, "config", "check"); code != 0 {
		t.Errorf("config check: exit %d\n%s%s", code, o, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "cred")); err == nil {
		t.Error("a credstore was made with no secret")
	}
}
