package setup

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
)

// fakeSurvey is a board with the sensors it lists.
type fakeSurvey struct {
	sv  Survey
	err error
}

func (f fakeSurvey) Survey(_ context.Context, b string, _ []int) (*Survey, error) {
	if f.err != nil {
		return nil, f.err
	}
	sv := f.sv
	if b != "" {
		sv.Board = b
	}
	return &sv, nil
}

// fakeChannels answers as a working bot, broker and LLM unless told
// otherwise, and records what it was given.
type fakeChannels struct {
	botErr, startErr, mqttErr, llmErr error
	bot, answer                       string // "": a plain bot name and answer
	chat, user                        int64
	tokens, passwords, keys           []string
	alerts                            []*config.Config
}

func (f *fakeChannels) TelegramBot(_ context.Context, _, token string) (string, error) {
	f.tokens = append(f.tokens, token)
	if f.bot != "" {
		return f.bot, f.botErr
	}
	return "vigil_test_bot", f.botErr
}
func (f *fakeChannels) TelegramStart(context.Context, string, string, time.Duration) (int64, int64, error) {
	return f.chat, f.user, f.startErr
}
func (f *fakeChannels) MQTTConnect(_ context.Context, _, _, pw string) error {
	f.passwords = append(f.passwords, pw)
	return f.mqttErr
}
func (f *fakeChannels) LLMAsk(_ context.Context, _, _, _, key string) (string, error) {
	f.keys = append(f.keys, key)
	if f.answer != "" {
		return f.answer, f.llmErr
	}
	return "OK, I am here.", f.llmErr
}
func (f *fakeChannels) TestAlert(_ context.Context, cfg *config.Config) []AlertResult {
	f.alerts = append(f.alerts, cfg)
	var out []AlertResult
	if cfg.TelegramEnabled() {
		out = append(out, AlertResult{Channel: "telegram", Detail: "telegram: delivered"})
	}
	return out
}

// check is the parse half of config check (the engine and board checks
// live in cmd/vigil, which the e2e test runs).
func check(data []byte, getenv func(string) string, readFile func(string) ([]byte, error)) (*config.Config, error) {
	return testChecker().Check("config.toml", data, getenv, readFile)
}

func testChecker() Checker { return Checker{Options: config.HardwareOptions()} }

type run struct {
	dir  string
	opts *Options
	ch   *fakeChannels
	sv   fakeSurvey
	out  bytes.Buffer
	in   string
	tty  bool
}

func newRun(t *testing.T, args []string, env map[string]string) *run {
	t.Helper()
	dir := t.TempDir()
	o := &Options{}
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	o.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.Finish(func(k string) string { return env[k] }); err != nil {
		t.Fatalf("Finish(%q) = %v", args, err)
	}
	o.Config = filepath.Join(dir, "config.toml")
	if !o.given("credstore") {
		o.Credstore = filepath.Join(dir, "cred")
	}
	o.NoSystemd = true
	return &run{dir: dir, opts: o, ch: &fakeChannels{chat: 4242, user: 77}, sv: fakeSurvey{sv: airSurvey()}}
}

func airSurvey() Survey {
	return Survey{Board: "rpi4", How: "device tree model", Lines: []string{"I²C bus 1: on"},
		Found:  []Found{{Name: "air", Driver: "bme280", Bus: "1", Addr: 0x76, Reading: "21.4 °C", Note: "ID register 0xD0 = 0x60"}},
		Health: rules(device.BoardRules(true)),
		Rules:  []Rule{{Name: "air_hot", When: "air.temperature > 40", Clear: "air.temperature < 38", For: "5m", Severity: "warning", Message: "air at {air.temperature}", Sensor: "air"}}}
}

func (r *run) wizard() (*Wizard, error) {
	in := bufio.NewReader(strings.NewReader(r.in))
	w := &Wizard{Opts: r.opts, In: in, Out: &r.out, Interactive: r.tty, Survey: r.sv, Channels: r.ch, Check: testChecker(),
		Now:    func() time.Time { return time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC) },
		Hidden: func() (string, error) { return in.ReadString('\n') }}
	return w, w.Run(context.Background())
}

func (r *run) run() error { _, err := r.wizard(); return err }

func code(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestYesNothingFoundWritesHealthRules(t *testing.T) {
	r := newRun(t, []string{"--yes"}, nil)
	r.sv = fakeSurvey{sv: Survey{Board: "auto", How: "generic", Health: rules(device.BoardRules(true))}}
	if err := r.run(); err != nil {
		t.Fatalf("Run = %v\n%s", err, r.out.String())
	}
	data, err := os.ReadFile(r.opts.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := check(data, nil, nil)
	if err != nil {
		t.Fatalf("the written config does not parse: %v\n%s", err, data)
	}
	if len(cfg.Sensors) != 0 || len(cfg.Rules) != 3 || cfg.LLMEnabled() || cfg.TelegramEnabled() {
		t.Errorf("config: %d sensors, %d rules, llm %t, telegram %t; want 0, 3 health rules, rules-only", len(cfg.Sensors), len(cfg.Rules), cfg.LLMEnabled(), cfg.TelegramEnabled())
	}
	for _, want := range []string{"no sensor found: the config watches the board's own health", "rules-only", "no alert channel"} {
		if !strings.Contains(r.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, r.out.String())
		}
	}
	st, _ := os.Stat(r.opts.Config)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("config mode %v, want 0640", st.Mode().Perm())
	}
	if _, err := os.Stat(r.opts.Credstore); err == nil {
		t.Errorf("credstore %s created with no secret to hold", r.opts.Credstore)
	}
}

func TestYesWritesSecretsToCredstoreOnly(t *testing.T) {
	const token, pw, key = "123456:AAsecret-token-value", "broker-pass-word", "sk-llm-key-value"
	r := newRun(t, []string{"--yes", "--mqtt", "mqtt://127.0.0.1:1883", "--mqtt-user", "vigil", "--llm", "openai"},
		map[string]string{EnvTelegramToken: token, EnvMQTTPassword: pw, EnvLLMKey: key})
	if err := r.run(); err != nil {
		t.Fatalf("Run = %v\n%s", err, r.out.String())
	}
	data, _ := os.ReadFile(r.opts.Config)
	for _, s := range []string{token, pw, key} {
		if bytes.Contains(data, []byte(s)) || strings.Contains(r.out.String(), s) {
			t.Errorf("secret %q is in config.toml or the output", s)
		}
	}
	for name, want := range map[string]string{CredTelegram: token, CredMQTT: pw, CredLLM: key} {
		f := credFile(r.opts.Credstore, name)
		b, err := os.ReadFile(f)
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, %v; want %q", f, b, err, want)
		}
		if st, _ := os.Stat(f); st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	// The credentials resolve as the unit maps them (LoadCredential=).
	cfg := r.ch.alerts[0]
	if cfg.Telegram.Token.Value() != token || cfg.MQTT.Password.Value() != pw || cfg.LLM.APIKey.Value() != key {
		t.Errorf("the checked config did not resolve the secrets from the credstore")
	}
	for _, want := range []string{`token_file = "telegram_token"`, "chat_id = 4242", "allowed_chats = [4242]", "allowed_users = [77]",
		`password_file = "mqtt_password"`, `api_key_file = "llm_api_key"`, "homeassistant = true", `name = "air"`, "address = 0x76", `name = "air_hot"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("config lacks %q:\n%s", want, data)
		}
	}
}

// Each failing check says what is wrong and how to fix it, exits 1 and
// leaves the old config (and the credstore) as it was.
func TestFailuresLeaveOldConfigUntouched(t *testing.T) {
	old := "[device]\nboard = \"sim\"\n"
	tests := []struct {
		name  string
		args  []string
		setup func(*run)
		want  []string
	}{
		{"telegram 401", []string{"--telegram-chat", "1"}, func(r *run) { r.ch.botErr = errors.New("telegram: token refused (401)") },
			[]string{"telegram: token refused (401)"}},
		{"broker refuses", []string{"--mqtt", "mqtt://127.0.0.1:1883", "--mqtt-user", "u"}, func(r *run) { r.ch.mqttErr = errors.New("mqtt: not authorized") },
			[]string{"mqtt: not authorized"}},
		{"llm silent", []string{"--llm", "ollama", "--llm-url", "http://127.0.0.1:9/v1"}, func(r *run) { r.ch.llmErr = errors.New("llm: connection refused") },
			[]string{"llm: connection refused", "--llm none"}},
		{"no bus 9", []string{"--bus", "9"}, func(r *run) { r.sv.err = errors.New("i2c bus 9 does not exist (buses: 1)") },
			[]string{"survey: i2c bus 9 does not exist (buses: 1)"}},
		{"no /start", nil, func(r *run) { r.ch.startErr = errors.New("telegram: no /start") },
			[]string{"telegram: no /start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRun(t, append([]string{"--yes", "--force"}, tt.args...), map[string]string{EnvTelegramToken: "1:tok", EnvMQTTPassword: "pw"})
			if err := os.WriteFile(r.opts.Config, []byte(old), 0o640); err != nil {
				t.Fatal(err)
			}
			tt.setup(r)
			err := r.run()
			if code(err) != CodeFailed {
				t.Fatalf("Run = %v (code %d), want code 1", err, code(err))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if b, _ := os.ReadFile(r.opts.Config); string(b) != old {
				t.Errorf("config changed to:\n%s", b)
			}
			if ents, _ := os.ReadDir(r.dir); len(ents) != 1 {
				t.Errorf("files written next to the config: %v", ents)
			}
		})
	}
}

func TestExistingConfigNeedsForce(t *testing.T) {
	r := newRun(t, []string{"--yes"}, nil)
	old := "# mine\n[device]\nboard = \"sim\"\n"
	os.WriteFile(r.opts.Config, []byte(old), 0o640)
	err := r.run()
	if code(err) != CodeFailed || !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), r.opts.Config+" exists") {
		t.Fatalf("Run = %v, want code 1: %s exists: %v", err, r.opts.Config, ErrExists)
	}
	if b, _ := os.ReadFile(r.opts.Config); string(b) != old {
		t.Errorf("config changed to:\n%s", b)
	}

	r.opts.Force = true
	r.out.Reset()
	if err := r.run(); err != nil {
		t.Fatalf("Run --force = %v", err)
	}
	backup := r.opts.Config + ".bak-20261128T200000"
	if b, err := os.ReadFile(backup); string(b) != old {
		t.Errorf("backup %s = %q, %v; want the old config", backup, b, err)
	}
	if !strings.Contains(r.out.String(), "kept the old config as "+backup) {
		t.Errorf("output does not name the backup:\n%s", r.out.String())
	}
}

func TestInvalidConfigIsNeverWritten(t *testing.T) {
	r := newRun(t, []string{"--yes", "--board", "no_such_board"}, nil)
	err := r.run()
	if code(err) != CodeConfig || !strings.Contains(err.Error(), "does not validate, so nothing was written") || !strings.Contains(err.Error(), "no_such_board") {
		t.Fatalf("Run = %v (code %d), want code 78 naming the board", err, code(err))
	}
	if _, err := os.Stat(r.opts.Config); err == nil {
		t.Error("an invalid config was written")
	}
}

func TestSensorFlagPicksAndRenames(t *testing.T) {
	r := newRun(t, []string{"--yes", "--sensor", "greenhouse=bme280@1:0x76"}, nil)
	if err := r.run(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	cfg := r.ch.alerts[0]
	var rules []string
	for _, ru := range cfg.Rules {
		rules = append(rules, ru.Name+": "+ru.When)
	}
	if len(cfg.Sensors) != 1 || cfg.Sensors[0].Name != "greenhouse" || !slices.Contains(rules, "greenhouse_hot: greenhouse.temperature > 40") {
		t.Errorf("sensors %v, rules %q; want greenhouse with its rule renamed", cfg.Sensors, rules)
	}

	r = newRun(t, []string{"--yes", "--sensor", "x=sht3x@1:0x44"}, nil)
	if err := r.run(); code(err) != CodeFailed || !strings.Contains(err.Error(), "found: bme280@1:0x76") {
		t.Errorf("Run with a sensor not found = %v, want code 1 listing what was found", err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--rules", "some"}, nil, `--rules "some": want default or none`},
		{[]string{"--llm", "gpt"}, nil, `--llm "gpt": want none or one of`},
		{[]string{"--sensor", "air"}, nil, "want NAME=DRIVER[@BUS:ADDR]"},
		{nil, map[string]string{"VIGIL_INIT_TELEGRAM_CHAT": "abc"}, `VIGIL_INIT_TELEGRAM_CHAT="abc"`},
	} {
		o := &Options{}
		fs := flag.NewFlagSet("init", flag.ContinueOnError)
		o.Register(fs)
		fs.Parse(tt.args)
		err := o.Finish(func(k string) string { return tt.env[k] })
		if code(err) != CodeUsage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Finish(%q, %v) = %v, want a usage error with %q", tt.args, tt.env, err, tt.want)
		}
	}
}

func TestEnvAnswers(t *testing.T) {
	r := newRun(t, []string{"--yes"}, map[string]string{"VIGIL_INIT_BUS": "1,3", "VIGIL_INIT_TELEGRAM_CHAT": "99", "VIGIL_INIT_NO_SENSORS": "true",
		EnvTelegramToken: "1:tok"})
	if diff := cmp.Diff([]int{1, 3}, []int(r.opts.Buses)); diff != "" || r.opts.TelegramChat != 99 || !r.opts.NoSensors {
		t.Errorf("options from env: buses %v, chat %d, no-sensors %t", r.opts.Buses, r.opts.TelegramChat, r.opts.NoSensors)
	}
}

// An interactive run, answered as a person would (Enter for each default,
// the secrets typed), writes the same file as --yes with the same answers.
func TestInteractiveSameAsYes(t *testing.T) {
	yes := newRun(t, []string{"--yes", "--mqtt", "mqtt://127.0.0.1:1883", "--mqtt-user", "vigil"},
		map[string]string{EnvTelegramToken: "1:tok", EnvMQTTPassword: "pw"})
	if err := yes.run(); err != nil {
		t.Fatalf("--yes: %v", err)
	}
	tty := newRun(t, nil, nil)
	tty.tty = true
	tty.in = strings.Join([]string{
		"",             // keep the bme280
		"",             // name it [air]
		"", "", "", "", // four rules: keep
		"1:tok",                 // Telegram token
		"mqtt://127.0.0.1:1883", // broker
		"vigil",                 // user
		"pw",                    // password
		"",                      // HA discovery [Y/n]
		"",                      // LLM [none]
	}, "\n") + "\n"
	if err := tty.run(); err != nil {
		t.Fatalf("interactive: %v\n%s", err, tty.out.String())
	}
	a, _ := os.ReadFile(yes.opts.Config)
	b, _ := os.ReadFile(tty.opts.Config)
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("interactive config differs from --yes (-yes +interactive):\n%s\n%s", diff, tty.out.String())
	}
	for _, s := range []string{"1:tok", "pw\n"} {
		if strings.Contains(tty.out.String(), s) {
			t.Errorf("secret %q echoed in the transcript", s)
		}
	}
}

// On a configured board, a re-run shows what is there and changes only
// what the person asks for: here the rules; Telegram and the rest stay
// byte for byte.
func TestRerunChangesOnlyWhatIsAsked(t *testing.T) {
	r := newRun(t, nil, nil)
	r.tty = true
	tg := "[telegram]\ntoken_file = \"telegram_token\"   # mine\nchat_id = 5\nallowed_chats = [5]\n"
	http := "[http]\nlisten = \"127.0.0.1:8080\"\n"
	old := "[device]\nboard = \"rpi4\"\n\n[[sensor]]\nname = \"air\"\ndriver = \"bme280\"\nbus = \"1\"\naddress = 0x76\n\n" + tg + "\n" + http
	os.WriteFile(r.opts.Config, []byte(old), 0o640)
	os.MkdirAll(r.opts.Credstore, 0o700)
	os.WriteFile(credFile(r.opts.Credstore, CredTelegram), []byte("1:old\n"), 0o600)
	r.in = strings.Join([]string{
		"",            // change the board? [y/N]
		"",            // change the sensors? N
		"y",           // set up the rules (there is none)? y
		"",            // change Telegram? N
		"",            // set up MQTT? N
		"",            // set up the LLM? N
		"-", "-", "-", // skip the health rules
		"air.temperature > 35", // change air_hot's condition
		"",                     // replace? [Y/n]
	}, "\n") + "\n"
	if err := r.run(); err != nil {
		t.Fatalf("Run = %v\n%s", err, r.out.String())
	}
	data, _ := os.ReadFile(r.opts.Config)
	for _, want := range []string{"[telegram] chat_id=5", "[http] listen=127.0.0.1:8080", "Only what you choose to change is changed"} {
		if !strings.Contains(r.out.String(), want) {
			t.Errorf("re-run does not show %q:\n%s", want, r.out.String())
		}
	}
	for _, want := range []string{tg, http, "board = \"rpi4\"", `when = "air.temperature > 35"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("config lacks %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "board_hot") || strings.Count(string(data), "[[rule]]") != 1 {
		t.Errorf("want the one rule kept:\n%s", data)
	}
	if len(r.ch.tokens) != 0 {
		t.Errorf("Telegram was checked again though it was kept")
	}
}

func TestRerunNothingChosenWritesNothing(t *testing.T) {
	r := newRun(t, nil, nil)
	r.tty = true
	old := "[device]\nboard = \"rpi4\"\n"
	os.WriteFile(r.opts.Config, []byte(old), 0o640)
	r.in = strings.Repeat("\n", 6)
	if err := r.run(); err != nil {
		t.Fatalf("Run = %v\n%s", err, r.out.String())
	}
	if !strings.Contains(r.out.String(), "Nothing to change") {
		t.Errorf("output:\n%s", r.out.String())
	}
	if ents, _ := os.ReadDir(r.dir); len(ents) != 1 {
		t.Errorf("files written: %v", ents)
	}
}

// TestFarSideTextEscaped: the bot's name (the Bot API's) and the model's
// answer are the far side's text: shown on the person's terminal, their
// control characters are escaped, so an answer cannot retitle the window
// or clear the screen.
func TestFarSideTextEscaped(t *testing.T) {
	r := newRun(t, []string{"--yes", "--llm", "openai"},
		map[string]string{EnvTelegramToken: "123456:AAtoken", EnvLLMKey: "sk-key"})
	r.ch.bot = "evil\x1b]0;owned\x07_bot"
	r.ch.answer = "OK\x1b[2J\x9b31m here"
	if err := r.run(); err != nil {
		t.Fatalf("Run = %v\n%s", err, r.out.String())
	}
	out := r.out.String()
	if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "\x9b") {
		t.Fatalf("a control character reached the terminal:\n%q", out)
	}
	for _, want := range []string{`evil\x1b]0;owned\x07_bot`, `OK\x1b[2J\x9b31m here`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks the escaped %s:\n%s", want, out)
		}
	}
}
