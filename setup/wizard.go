package setup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/manage"
)

// Surveyor finds out what the board is and what is wired to it.
type Surveyor interface {
	// Survey names the board (profile, or detected when board is "") and
	// scans buses (every bus found when empty), reading each sensor once.
	// A bus that does not exist is an error that says which ones do.
	Survey(ctx context.Context, board string, buses []int) (*Survey, error)
}

// Survey is what Surveyor found.
type Survey struct {
	Board  string   // the profile
	How    string   // how it was detected: "device tree model \"Raspberry Pi 4 Model B\""
	Lines  []string // each bus, SPI port and 1-Wire/IIO device, with the hint for one that is off
	Found  []Found
	Rules  []Rule // starter rules for Found, by their proposed names (Rule.Sensor)
	Health []Rule // starter rules on the board's own health, which every config gets
}

// Channels checks each alert channel once and sends the test alert.
type Channels interface {
	// TelegramBot checks token with getMe and returns the bot's @name.
	TelegramBot(ctx context.Context, api, token string) (string, error)
	// TelegramStart waits up to wait for a /start to the bot and returns
	// its chat and sender.
	TelegramStart(ctx context.Context, api, token string, wait time.Duration) (chat, user int64, err error)
	// MQTTConnect connects to broker once with the credentials.
	MQTTConnect(ctx context.Context, broker, user, password string) error
	// LLMAsk sends one request and returns the model's answer.
	LLMAsk(ctx context.Context, provider, url, model, key string) (string, error)
	// TestAlert sends a test alert through every channel cfg configures and
	// waits for each acknowledgement.
	TestAlert(ctx context.Context, cfg *config.Config) []AlertResult
}

// AlertResult is what happened to the test alert on one channel.
type AlertResult struct {
	Channel string // "telegram", "mqtt", "log"
	Detail  string // "delivered (message 42)", "PUBACK"
	Err     error
}

// Checker validates config data as `vigil config check` does: it parses it
// with Options (the drivers' quantities, the boards), reading the secrets
// with getenv and readFile, then Validate checks what `run` would build
// from it.
type Checker struct {
	Options  config.Options
	Validate func(*config.Config) error // nil: parsing only
}

// Check returns data's config, or why it is not valid.
func (c Checker) Check(name string, data []byte, getenv func(string) string, readFile func(string) ([]byte, error)) (*config.Config, error) {
	host, _ := os.Hostname() // the default device.id, as `vigil run` takes it
	b := &manage.Base{Name: name, Data: data, Options: c.Options, Host: host, Getenv: getenv, ReadFile: readFile}
	cfg, err := b.Configured()
	if err == nil && c.Validate != nil {
		err = c.Validate(cfg)
	}
	return cfg, err
}

// Systemd enables and restarts vigil.service.
type Systemd interface {
	Running() bool // systemd is PID 1 here (/run/systemd/system)
	EnableRestart(ctx context.Context) error
}

// Wizard is one run of vigil init.
type Wizard struct {
	Opts        *Options
	In          io.Reader
	Out         io.Writer
	Interactive bool                   // ask on a terminal (stdin is one and no --yes)
	Hidden      func() (string, error) // reads a secret without echo (Interactive)
	Survey      Surveyor
	Channels    Channels
	Check       Checker
	Systemd     Systemd
	Getenv      func(string) string          // VIGIL_INIT_*; nil: Opts is finished already
	Now         func() time.Time             // the backup's name
	ReadFile    func(string) ([]byte, error) // the --*-file flags and the credstore

	p *prompter
}

// New returns the wizard of a real run on stdin and out: it asks when
// stdin is a terminal and o has no --yes, and restarts vigil.service.
// The answers not given as flags come from getenv (VIGIL_INIT_*); now
// names the backup.
func New(o *Options, stdin *os.File, out io.Writer, getenv func(string) string, now func() time.Time, s Surveyor, c Channels) *Wizard {
	in := bufio.NewReader(stdin)
	return &Wizard{Opts: o, In: in, Out: out, Interactive: !o.Yes && IsTerminal(stdin), Hidden: HiddenReader(stdin, in),
		Getenv: getenv, Survey: s, Channels: c, Systemd: Unit{}, Now: now, ReadFile: os.ReadFile}
}

// Run runs the wizard. Its error is an *Error with the exit code.
func (w *Wizard) Run(ctx context.Context) error {
	o := w.Opts
	if w.Getenv != nil {
		if err := o.Finish(w.Getenv); err != nil {
			return err
		}
	}
	if w.ReadFile == nil {
		w.ReadFile = os.ReadFile
	}
	var r *bufio.Reader
	if br, ok := w.In.(*bufio.Reader); ok {
		r = br
	} else {
		r = bufio.NewReader(w.In)
	}
	w.p = &prompter{in: r, out: w.Out, hidden: w.Hidden}

	plan := &Plan{Keep: map[string]string{}}
	change := map[string]bool{"device": true, "sensor": true, "rule": true, "telegram": true, "mqtt": true, "llm": true}
	old, err := os.ReadFile(o.Config)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return failed(fmt.Errorf("read %s: %w", o.Config, err))
	case exists && !w.Interactive && !o.Force:
		return failed(fmt.Errorf("%s exists: %w", o.Config, ErrExists))
	case exists && w.Interactive && !o.Force:
		if change, err = w.rerun(old, plan); err != nil {
			return err
		}
		if !slices.Contains(slices.Collect(maps.Values(change)), true) {
			fmt.Fprintf(w.Out, "Nothing to change: %s stays as it is.\n", o.Config)
			return nil
		}
	}

	fmt.Fprintln(w.Out, "\n1 Board")
	sv, err := w.Survey.Survey(ctx, o.Board, o.Buses)
	if errors.Is(err, device.ErrNoBus) {
		return failed(fmt.Errorf("survey: %w: leave --bus out to scan every bus there is, or turn the bus on (the board's dtparam/dtoverlay line; 'vigil scan' lists the buses)", err))
	}
	if err != nil {
		return failed(fmt.Errorf("survey: %w", err))
	}
	how := ""
	if sv.How != "" {
		how = " — " + sv.How
	}
	fmt.Fprintf(w.Out, "  board: %s%s\n", sv.Board, how)
	for _, l := range sv.Lines {
		fmt.Fprintf(w.Out, "  %s\n", l)
	}
	plan.Board = sv.Board

	if change["sensor"] {
		fmt.Fprintln(w.Out, "\n2 Sensors")
		if err := w.sensors(sv, plan); err != nil {
			return err
		}
	}
	if !change["sensor"] {
		// The kept sensors' starter rules, by the names they have.
		for _, m := range nameKey.FindAllStringSubmatch(plan.Keep["sensor"], -1) {
			for _, r := range sv.Rules {
				if r.Sensor == m[1] {
					plan.sensorRules = append(plan.sensorRules, r)
				}
			}
		}
	}
	if change["rule"] {
		fmt.Fprintln(w.Out, "\n3 Rules")
		if err := w.rules(sv, plan); err != nil {
			return err
		}
	}
	fmt.Fprintln(w.Out, "\n4 Alerts")
	if change["telegram"] {
		if err := w.telegram(ctx, plan); err != nil {
			return err
		}
	}
	if change["mqtt"] {
		if err := w.mqtt(ctx, plan); err != nil {
			return err
		}
	}
	if change["llm"] {
		if err := w.llm(ctx, plan); err != nil {
			return err
		}
	}
	if plan.Telegram == nil && plan.MQTT == nil && plan.Keep["telegram"] == "" && plan.Keep["mqtt"] == "" {
		fmt.Fprintln(w.Out, "  no alert channel: alerts go to the journal only (journalctl -u vigil); run vigil init again to add one")
	}
	return w.write(ctx, plan, exists)
}

// sensors decides the [[sensor]] blocks: every one found, those --sensor
// names, none with --no-sensors, or what the person keeps.
func (w *Wizard) sensors(sv *Survey, plan *Plan) error {
	o := w.Opts
	if len(sv.Found) == 0 {
		fmt.Fprintln(w.Out, "  no sensor found: the config watches the board's own health (board.*)")
	}
	for _, f := range sv.Found {
		at := ""
		if f.Bus != "" {
			at = " on bus " + f.Bus
		}
		if f.Addr != 0 {
			at += fmt.Sprintf(" at 0x%02x", f.Addr)
		}
		val := f.Reading
		if f.Err != nil {
			val = "no reading: " + f.Err.Error()
		}
		note := ""
		if f.Note != "" {
			note = " (" + f.Note + ")"
		}
		fmt.Fprintf(w.Out, "  %s%s%s: %s\n", f.Driver, at, note, val)
	}
	switch {
	case o.NoSensors:
		if len(sv.Found) > 0 {
			fmt.Fprintln(w.Out, "  --no-sensors: none kept (the board's health only)")
		}
		return nil
	case len(o.Sensors) > 0:
		for _, s := range o.Sensors {
			sf, _ := parseSensorFlag(s) // checked by Finish
			f, ok := match(sv.Found, sf)
			if !ok {
				return failed(fmt.Errorf("--sensor %s: no %s was found%s (found: %s); leave it out, or check the wiring with 'vigil scan'", s, sf.Driver, atText(sf), foundText(sv.Found)))
			}
			w.keepSensor(sv, plan, f, sf.Name)
		}
		return nil
	case !w.Interactive:
		for _, f := range sv.Found {
			w.keepSensor(sv, plan, f, f.Name)
		}
		return nil
	}
	for _, f := range sv.Found {
		keep, err := w.p.yes(fmt.Sprintf("  keep the %s?", f.Driver), true)
		if err != nil {
			return err
		}
		if !keep {
			continue
		}
		name, err := w.p.ask("  name it", f.Name)
		if err != nil {
			return err
		}
		for !validName.MatchString(name) || name == config.BoardSensor {
			fmt.Fprintln(w.Out, "  a name is lower case letters, digits and _ (and not board)")
			if name, err = w.p.ask("  name it", f.Name); err != nil {
				return err
			}
		}
		w.keepSensor(sv, plan, f, name)
	}
	return nil
}

var nameKey = regexp.MustCompile(`(?m)^\s*name\s*=\s*"([^"]+)"`)

var validName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func match(found []Found, sf sensorFlag) (Found, bool) {
	for _, f := range found {
		if f.Driver == sf.Driver && (sf.Bus == "" || sf.Bus == f.Bus) && (sf.Addr == 0 || sf.Addr == f.Addr) {
			return f, true
		}
	}
	return Found{}, false
}

func atText(sf sensorFlag) string {
	if sf.Bus == "" {
		return ""
	}
	return fmt.Sprintf(" on bus %s at 0x%02x", sf.Bus, sf.Addr)
}

func foundText(found []Found) string {
	if len(found) == 0 {
		return "nothing"
	}
	var s []string
	for _, f := range found {
		t := f.Driver
		if f.Addr != 0 {
			t += fmt.Sprintf("@%s:0x%02x", f.Bus, f.Addr)
		}
		s = append(s, t)
	}
	return strings.Join(s, ", ")
}

// keepSensor adds f as name, and its starter rules renamed with it.
func (w *Wizard) keepSensor(sv *Survey, plan *Plan, f Found, name string) {
	old := f.Name
	f.Name = name
	plan.Sensors = append(plan.Sensors, f)
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(old) + `\b`)
	for _, r := range sv.Rules {
		if r.Sensor != old {
			continue
		}
		r.Sensor = name
		r.When = re.ReplaceAllString(r.When, name)
		r.Clear = re.ReplaceAllString(r.Clear, name)
		r.Message = re.ReplaceAllString(r.Message, name)
		if name != old {
			r.Name = strings.Replace(r.Name, old, name, 1)
		}
		plan.sensorRules = append(plan.sensorRules, r)
	}
}

// rules offers the starter rules: the board's health, then each kept
// sensor's. Each can be accepted (Enter), changed (a new condition) or
// skipped (-).
func (w *Wizard) rules(sv *Survey, plan *Plan) error {
	if w.Opts.Rules == "none" {
		fmt.Fprintln(w.Out, "  --rules none: no starter rules")
		return nil
	}
	offer := append(slices.Clone(sv.Health), plan.sensorRules...)
	if w.Interactive {
		fmt.Fprintln(w.Out, "  Enter keeps a rule, - skips it, or type a new condition.")
	}
	for _, r := range offer {
		if !w.Interactive {
			plan.Rules = append(plan.Rules, r)
			fmt.Fprintf(w.Out, "  %s: %s%s\n", r.Name, r.When, forText(r))
			continue
		}
		when, err := w.p.ask(fmt.Sprintf("  %s: when", r.Name), r.When)
		if err != nil {
			return err
		}
		switch when {
		case "-":
			continue
		case r.When:
		default:
			r.When, r.Clear = when, "" // the old clear belonged to the old condition
		}
		plan.Rules = append(plan.Rules, r)
	}
	return nil
}

func forText(r Rule) string {
	s := ""
	if r.For != "" {
		s += " for " + r.For
	}
	if r.Clear != "" {
		s += ", clear when " + r.Clear
	}
	return s
}

// secretFrom is a secret from a file flag, the environment, or (asked)
// the terminal; "" for none.
func (w *Wizard) secretFrom(file, env, question string) (string, error) {
	if file != "" {
		b, err := w.ReadFile(file)
		if err != nil {
			return "", failed(fmt.Errorf("read %s: %w", file, err))
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", failed(fmt.Errorf("%s is empty: put the secret in it, on one line", file))
		}
		return s, nil
	}
	if env != "" || !w.Interactive || question == "" {
		return env, nil
	}
	return w.p.secret(question)
}

func (w *Wizard) telegram(ctx context.Context, plan *Plan) error {
	o := w.Opts
	token, err := w.secretFrom(o.TelegramTokenFile, o.TelegramToken, "  Telegram bot token from @BotFather, or Enter for none")
	if err != nil {
		return err
	}
	for {
		if token == "" {
			fmt.Fprintln(w.Out, "  Telegram: not set up")
			return nil
		}
		bot, err := w.Channels.TelegramBot(ctx, o.TelegramAPI, token)
		bot = termtext.Line(bot) // the Bot API's text, shown on a terminal
		if err == nil {
			fmt.Fprintf(w.Out, "  Telegram: the token is good: bot @%s\n", bot)
			t := &TelegramPlan{Token: token, Chat: o.TelegramChat, User: o.TelegramUser, API: o.TelegramAPI}
			if t.Chat == 0 {
				fmt.Fprintf(w.Out, "  Send /start to @%s on Telegram now (waiting up to %s) ...\n", bot, durText(o.TelegramWait))
				chat, user, err := w.Channels.TelegramStart(ctx, o.TelegramAPI, token, o.TelegramWait)
				if err != nil {
					return failed(err)
				}
				t.Chat = chat
				if t.User == 0 {
					t.User = user
				}
				fmt.Fprintf(w.Out, "  /start from user %d in chat %d: alerts go there, and only they may command\n", user, chat)
			}
			plan.Telegram = t
			return nil
		}
		if !w.Interactive || o.TelegramTokenFile != "" || o.TelegramToken != "" {
			return failed(err)
		}
		fmt.Fprintf(w.Out, "  %s\n", termtext.Line(err.Error()))
		if token, err = w.p.secret("  Telegram bot token, or Enter for none"); err != nil {
			return err
		}
	}
}

func (w *Wizard) mqtt(ctx context.Context, plan *Plan) error {
	o := w.Opts
	broker, user := o.MQTT, o.MQTTUser
	var err error
	if w.Interactive && !o.given("mqtt") {
		if broker, err = w.p.ask("  MQTT broker URL, as in mqtt://192.168.1.2:1883, or Enter for none", ""); err != nil {
			return err
		}
		if broker != "" && !o.given("mqtt-user") {
			if user, err = w.p.ask("  MQTT user, or Enter for none", ""); err != nil {
				return err
			}
		}
	}
	if broker == "" {
		fmt.Fprintln(w.Out, "  MQTT: not set up")
		return nil
	}
	q := ""
	if user != "" {
		q = "  MQTT password for " + user
	}
	pw, err := w.secretFrom(o.MQTTPasswordFile, o.MQTTPassword, q)
	if err != nil {
		return err
	}
	if err := w.Channels.MQTTConnect(ctx, broker, user, pw); err != nil {
		return failed(err)
	}
	fmt.Fprintf(w.Out, "  MQTT: connected to %s\n", broker)
	ha := o.HADiscovery != "no"
	if w.Interactive && !o.given("ha-discovery") {
		if ha, err = w.p.yes("  Home Assistant discovery (sensors and problems appear in HA)?", true); err != nil {
			return err
		}
	}
	plan.MQTT = &MQTTPlan{Broker: broker, User: user, Password: pw, HomeAssistant: ha}
	return nil
}

func (w *Wizard) llm(ctx context.Context, plan *Plan) error {
	o := w.Opts
	name, url, model := o.LLM, o.LLMURL, o.LLMModel
	var err error
	if w.Interactive && !o.given("llm") {
		for {
			if name, err = w.p.ask("  LLM provider: none (rules-only), "+strings.Join(providerNames(), ", "), "none"); err != nil {
				return err
			}
			if _, ok := llmProviders[name]; ok || name == "none" {
				break
			}
			fmt.Fprintf(w.Out, "  %q is not one of them\n", name)
		}
	}
	if name == "none" {
		fmt.Fprintln(w.Out, "  LLM: none: rules-only (the local rules alert; no model is asked)")
		return nil
	}
	pv := llmProviders[name]
	if url == "" {
		url = pv.URL
	}
	if model == "" {
		model = pv.Model
	}
	if w.Interactive {
		if !o.given("llm-url") {
			if url, err = w.p.ask("  its base URL", url); err != nil {
				return err
			}
		}
		if !o.given("llm-model") {
			if model, err = w.p.ask("  model", model); err != nil {
				return err
			}
		}
	}
	q := ""
	if pv.NeedsKey {
		q = "  API key"
	}
	key, err := w.secretFrom(o.LLMKeyFile, o.LLMKey, q)
	if err != nil {
		return err
	}
	if pv.NeedsKey && key == "" {
		return failed(fmt.Errorf("llm: %s needs an API key: give --llm-key-file FILE (or VIGIL_INIT_LLM_KEY), or --llm none for rules-only", name))
	}
	answer, err := w.Channels.LLMAsk(ctx, pv.Provider, url, model, key)
	if err != nil {
		return failed(fmt.Errorf("%w (or --llm none: rules-only)", err))
	}
	fmt.Fprintf(w.Out, "  LLM: %s answered: %s\n", model, oneLine(answer))
	plan.LLM = &LLMPlan{Name: name, Provider: pv.Provider, URL: url, Model: model, Key: key}
	return nil
}

// oneLine is the model's answer on one line, escaped: it is the far
// side's text, shown on a terminal. CheckModel already cut it.
func oneLine(s string) string {
	return termtext.Line(strings.Join(strings.Fields(s), " "))
}

// write validates the plan's config, then writes the secrets and the
// config, restarts the unit and sends the test alert.
func (w *Wizard) write(ctx context.Context, plan *Plan, exists bool) error {
	o := w.Opts
	fmt.Fprintln(w.Out, "\n5 Write")
	data := plan.TOML()
	secrets := plan.Secrets()
	getenv := func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return o.Credstore
		}
		return ""
	}
	readFile := func(path string) ([]byte, error) {
		if filepath.Dir(path) == filepath.Clean(o.Credstore) {
			if v, ok := secrets[filepath.Base(path)]; ok {
				return []byte(v + "\n"), nil
			}
			return w.ReadFile(credFile(o.Credstore, filepath.Base(path)))
		}
		return w.ReadFile(path)
	}
	cfg, err := w.Check.Check(o.Config, data, getenv, readFile)
	if err != nil {
		return &Error{CodeConfig, fmt.Errorf("the config vigil init made does not validate, so nothing was written: %w", err)}
	}
	if exists && w.Interactive && !o.Force {
		ok, err := w.p.yes(fmt.Sprintf("  replace %s (a backup is kept)?", o.Config), true)
		if err != nil {
			return err
		}
		if !ok {
			return failed(fmt.Errorf("%s: nothing written", o.Config))
		}
	}
	files, err := writeSecrets(o.Credstore, secrets)
	if err != nil {
		return failed(err)
	}
	for _, f := range files {
		fmt.Fprintf(w.Out, "  wrote %s (mode 0600)\n", f)
	}
	backup, err := writeConfig(o.Config, data, w.Now())
	if err != nil {
		return failed(err)
	}
	if backup != "" {
		fmt.Fprintf(w.Out, "  kept the old config as %s\n", backup)
	}
	group := ""
	if vigilGroup() >= 0 {
		group = ", group vigil"
	}
	fmt.Fprintf(w.Out, "  wrote %s (mode 0640%s); vigil config check: ok\n", o.Config, group)
	if plan.LLM == nil && plan.Keep["llm"] == "" {
		fmt.Fprintln(w.Out, "  rules-only: no LLM; the rules alert on their own")
	}
	switch {
	case o.NoSystemd:
		fmt.Fprintln(w.Out, "  systemd: left alone (--no-systemd); start vigil with: systemctl enable --now vigil")
	case w.Systemd == nil || !w.Systemd.Running():
		fmt.Fprintln(w.Out, "  systemd: not running here; start vigil with: vigil -c "+o.Config+" run")
	default:
		if err := w.Systemd.EnableRestart(ctx); err != nil {
			return failed(fmt.Errorf("systemd: %w: the config is written; see 'systemctl status vigil' and 'journalctl -u vigil'", err))
		}
		fmt.Fprintln(w.Out, "  systemd: vigil.service enabled and restarted")
	}

	var bad []string
	if !o.NoTestAlert {
		fmt.Fprintln(w.Out, "\n6 Test alert")
		results := w.Channels.TestAlert(ctx, cfg)
		if len(results) == 0 {
			fmt.Fprintln(w.Out, "  no channel to send it to")
		}
		for _, r := range results {
			if r.Err != nil {
				bad = append(bad, r.Channel)
			}
			fmt.Fprintf(w.Out, "  %s\n", r.Detail)
		}
	}
	fmt.Fprintln(w.Out, "\nNext:")
	fmt.Fprintln(w.Out, "  vigil status          what it watches, and what fired")
	if cfg.HTTP.Listen != "" {
		fmt.Fprintf(w.Out, "  http://%s/   the status page\n", cfg.HTTP.Listen)
	}
	fmt.Fprintln(w.Out, "  vigil help            every command")
	if len(bad) > 0 {
		return failed(fmt.Errorf("the config is written, but the test alert did not arrive on %s (see above); fix it and try 'vigil test-alert'", strings.Join(bad, ", ")))
	}
	return nil
}
