package setup

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Options are the answers vigil init takes from flags and VIGIL_INIT_*
// environment variables (INIT-SPEC). An answer not given is the default,
// or "skip" for a channel.
type Options struct {
	Config string // the file to write (the global -c)

	Yes, Force bool
	Board      string
	Buses      intList
	Sensors    strList
	NoSensors  bool
	Rules      string

	TelegramTokenFile string
	TelegramChat      int64
	TelegramUser      int64
	TelegramWait      time.Duration
	TelegramAPI       string

	MQTT             string
	MQTTUser         string
	MQTTPasswordFile string
	HADiscovery      string

	LLM, LLMURL, LLMModel, LLMKeyFile string

	Credstore   string
	NoSystemd   bool
	NoTestAlert bool

	// Secrets given in the environment (never on the command line).
	TelegramToken, MQTTPassword, LLMKey string

	set map[string]bool // the flags given, on the command line or in the environment
	fs  *flag.FlagSet   // where Register defined them
}

// Defaults of the flags.
const (
	DefaultCredstore   = "/etc/credstore"
	DefaultTelegramAPI = "https://api.telegram.org"
	DefaultWait        = 5 * time.Minute
)

// Register defines init's flags on fs.
func (o *Options) Register(fs *flag.FlagSet) {
	o.fs = fs
	fs.BoolVar(&o.Yes, "yes", false, "no questions: take every answer from flags, VIGIL_INIT_* and defaults")
	fs.BoolVar(&o.Force, "force", false, "replace an existing config (a backup PATH.bak-YYYYmmddTHHMMSS is kept)")
	fs.StringVar(&o.Board, "board", "", "the board's `PROFILE`, as in rpi4 (default: detected; sim: the simulated board)")
	fs.Var(&o.Buses, "bus", "scan only I²C bus `N` (repeatable; default: every bus found)")
	fs.Var(&o.Sensors, "sensor", "keep only the sensor `NAME=DRIVER[@BUS:ADDR]`, as in air=bme280@1:0x76 (repeatable; default: every one found)")
	fs.BoolVar(&o.NoSensors, "no-sensors", false, "write no [[sensor]] block (the board's health only)")
	fs.StringVar(&o.Rules, "rules", "default", "starter rules, `default|none`")
	fs.StringVar(&o.TelegramTokenFile, "telegram-token-file", "", "a `FILE` holding the bot token (env VIGIL_INIT_TELEGRAM_TOKEN: the token itself)")
	fs.Int64Var(&o.TelegramChat, "telegram-chat", 0, "the chat `ID` (skips waiting for /start)")
	fs.Int64Var(&o.TelegramUser, "telegram-user", 0, "the allowed user `ID` (default: whoever sent /start)")
	fs.DurationVar(&o.TelegramWait, "telegram-wait", DefaultWait, "how long to wait for /start")
	fs.StringVar(&o.TelegramAPI, "telegram-api", DefaultTelegramAPI, "Bot API base `URL`")
	fs.StringVar(&o.MQTT, "mqtt", "", "MQTT broker `URL`, as in mqtt://127.0.0.1:1883 or mqtts://host:8883")
	fs.StringVar(&o.MQTTUser, "mqtt-user", "", "the MQTT user `NAME`")
	fs.StringVar(&o.MQTTPasswordFile, "mqtt-password-file", "", "a `FILE` holding the MQTT password (env VIGIL_INIT_MQTT_PASSWORD: the password itself)")
	fs.StringVar(&o.HADiscovery, "ha-discovery", "", "Home Assistant discovery, `yes|no` (default: yes with --mqtt)")
	fs.StringVar(&o.LLM, "llm", "none", "the LLM's `PROVIDER`: none (rules-only), "+strings.Join(providerNames(), ", "))
	fs.StringVar(&o.LLMURL, "llm-url", "", "the LLM's base `URL` (default: the provider's)")
	fs.StringVar(&o.LLMModel, "llm-model", "", "the model `NAME` (default: the provider's)")
	fs.StringVar(&o.LLMKeyFile, "llm-key-file", "", "a `FILE` holding the API key (env VIGIL_INIT_LLM_KEY: the key itself)")
	fs.StringVar(&o.Credstore, "credstore", DefaultCredstore, "the credential store `DIR`: secrets go to DIR/vigil.NAME, mode 0600, where the unit's LoadCredential= reads them")
	fs.BoolVar(&o.NoSystemd, "no-systemd", false, "do not enable and restart vigil.service")
	fs.BoolVar(&o.NoTestAlert, "no-test-alert", false, "do not send the test alert")
}

// EnvName is the environment variable of flag name: VIGIL_INIT_TELEGRAM_CHAT.
func EnvName(name string) string {
	return "VIGIL_INIT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Secret environment variables: they hold the secret itself.
const (
	EnvTelegramToken = "VIGIL_INIT_TELEGRAM_TOKEN"
	EnvMQTTPassword  = "VIGIL_INIT_MQTT_PASSWORD"
	EnvLLMKey        = "VIGIL_INIT_LLM_KEY"
)

// Finish takes each flag not given on the command line from its
// VIGIL_INIT_* variable (a repeatable flag: a comma-separated list), reads
// the secrets from the environment, and checks the values. The flag set
// Register defined them on must have been parsed. A bad value is a usage
// error naming the flag or variable.
func (o *Options) Finish(getenv func(string) string) error {
	fs := o.fs
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	mine := map[string]bool{} // init's own flags, not the global ones
	var names Options
	nfs := flag.NewFlagSet("", flag.ContinueOnError)
	names.Register(nfs)
	nfs.VisitAll(func(f *flag.Flag) { mine[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || o.set[f.Name] || !mine[f.Name] {
			return
		}
		v := getenv(EnvName(f.Name))
		if v == "" {
			return
		}
		vals := []string{v}
		if _, ok := f.Value.(interface{ repeatable() }); ok {
			vals = strings.Split(v, ",")
		}
		for _, s := range vals {
			if e := fs.Set(f.Name, strings.TrimSpace(s)); e != nil {
				err = usage("%s=%q: not a value --%s takes (%v): see 'vigil help init'", EnvName(f.Name), v, f.Name, e)
				return
			}
		}
		o.set[f.Name] = true
	})
	if err != nil {
		return err
	}
	o.TelegramToken = strings.TrimSpace(getenv(EnvTelegramToken))
	o.MQTTPassword = getenv(EnvMQTTPassword)
	o.LLMKey = strings.TrimSpace(getenv(EnvLLMKey))
	switch o.Rules {
	case "default", "none":
	default:
		return usage("--rules %q: want default or none", o.Rules)
	}
	switch o.HADiscovery {
	case "", "yes", "no":
	default:
		return usage("--ha-discovery %q: want yes or no", o.HADiscovery)
	}
	if o.LLM != "none" {
		if _, ok := llmProviders[o.LLM]; !ok {
			return usage("--llm %q: want none or one of %s", o.LLM, strings.Join(providerNames(), ", "))
		}
	}
	if o.NoSensors && len(o.Sensors) > 0 {
		return usage("--no-sensors and --sensor contradict each other: give one")
	}
	for _, s := range o.Sensors {
		if _, err := parseSensorFlag(s); err != nil {
			return usage("--sensor %q: %v", s, err)
		}
	}
	if o.TelegramWait <= 0 {
		return usage("--telegram-wait %v: must be positive, as in 5m", o.TelegramWait)
	}
	return nil
}

// given reports whether flag name was given, on the command line or in
// the environment.
func (o *Options) given(name string) bool { return o.set[name] }

// sensorFlag is one --sensor NAME=DRIVER[@BUS:ADDR].
type sensorFlag struct {
	Name, Driver, Bus string
	Addr              uint16 // 0: any
}

func parseSensorFlag(s string) (sensorFlag, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return sensorFlag{}, fmt.Errorf("want NAME=DRIVER[@BUS:ADDR], as in air=bme280@1:0x76")
	}
	f := sensorFlag{Name: name}
	drv, at, ok := strings.Cut(rest, "@")
	f.Driver = drv
	if ok {
		bus, addr, ok := strings.Cut(at, ":")
		if !ok {
			return sensorFlag{}, fmt.Errorf("want @BUS:ADDR, as in @1:0x76")
		}
		a, err := strconv.ParseUint(addr, 0, 16)
		if err != nil || a > 0x7f {
			return sensorFlag{}, fmt.Errorf("address %q: want 0x08 to 0x77", addr)
		}
		f.Bus, f.Addr = bus, uint16(a)
	}
	return f, nil
}

type intList []int

func (l *intList) String() string {
	if l == nil || len(*l) == 0 {
		return ""
	}
	return fmt.Sprint([]int(*l))
}
func (l *intList) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a bus number, as in 1")
	}
	*l = append(*l, n)
	return nil
}
func (l *intList) repeatable() {}

type strList []string

func (l *strList) String() string     { return strings.Join(*l, ",") }
func (l *strList) Set(s string) error { *l = append(*l, s); return nil }
func (l *strList) repeatable()        {}
