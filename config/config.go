package config

import (
	"time"

	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/schedule"
)

// Config is the whole resolved configuration, defaults applied.
type Config struct {
	Device    Device    `toml:"device"`
	Heartbeat Heartbeat `toml:"heartbeat"`
	LLM       LLM       `toml:"llm"`
	Sensors   []Sensor  `toml:"sensor"`
	Rules     []Rule    `toml:"rule"`
	MQTT      MQTT      `toml:"mqtt"`
	Telegram  Telegram  `toml:"telegram"`
	HTTP      HTTP      `toml:"http"`
	Manage    Manage    `toml:"manage"`

	file      string                // name passed to Parse, for errors
	lines     map[string]int        // indexed key -> line, for errors after Parse
	overrides map[string]Override   // key -> the override that set it (Origin)
	exprs     map[string]*rule.Expr // rule expressions Parse compiled, by source: RuleSpec compiles none again
	off       string                // why heartbeats are off when Heartbeat.Enabled is false but not by heartbeat.enabled

	// Shadowed names the run-time rules (Options.RunRules) left out
	// because the file now has a [[rule]] of the same name: the file wins.
	Shadowed []string `toml:"-"`
}

// Duration is a time.Duration written as a Go duration string ("30m").
type Duration struct{ time.Duration }

// Secret holds a secret resolved from an environment variable or a file.
// It prints as "[redacted]" (or "" when unset) through every formatting path.
type Secret struct {
	value string
	from  string // where it came from: "$NAME" or a file path
	err   error  // ResolveSecretsLater: why the file it names could not be read
}

// Device is the [device] section.
type Device struct {
	ID       string         `toml:"id"`        // default: hostname (set by cmd), [a-z0-9_-]
	Board    string         `toml:"board"`     // auto | sim | profile name
	StateDir string         `toml:"state_dir"` // default /var/lib/vigil
	Timezone string         `toml:"timezone"`  // IANA name, default "UTC"
	Location *time.Location `toml:"-"`         // resolved Timezone
	// Tags name groups the device belongs to ("north", "tomatoes"): a
	// fleet view shows them and selects by them. At most MaxTags, each
	// a valid tag (ValidTag), none twice.
	Tags []string `toml:"tags"`
}

// Heartbeat is the [heartbeat] section.
type Heartbeat struct {
	Enabled                bool     `toml:"enabled"`                  // default true
	Interval               Duration `toml:"interval"`                 // default 30m, min 1m, 0 disables
	SampleInterval         Duration `toml:"sample_interval"`          // default 30s, min 1s
	SensorsPublishInterval Duration `toml:"sensors_publish_interval"` // default 5m
	Checklist              string   `toml:"checklist"`                // default /etc/vigil/HEARTBEAT.md
	ActiveHours            string   `toml:"active_hours"`             // "07:00-22:00", may wrap midnight
	MaxQuiet               Duration `toml:"max_quiet"`                // default 6h
	AlertCooldown          Duration `toml:"alert_cooldown"`           // default 6h
	FailureAlertAfter      int      `toml:"failure_alert_after"`      // default 3
	MaxLLMCallsPerDay      int      `toml:"max_llm_calls_per_day"`    // default 96
	MaxAlertsPerHour       int      `toml:"max_alerts_per_hour"`      // flood guard, default 30
	// Gate decides when a heartbeat asks the LLM: GateDeadband (default)
	// when a reading moved beyond its deadband since the last LLM run;
	// GateUnusual only when a reading is unusual for its hour of the day
	// (|z| >= Unusual against its baseline). Either way also when a rule
	// changed state or max_quiet elapsed.
	Gate    string  `toml:"gate"`
	Unusual float64 `toml:"unusual"` // the robust |z| that counts as unusual, default 3
	// Schedule is an alternative to Interval: times of day ("07:30") in
	// the device timezone, or one cron expression. Empty: use Interval.
	Schedule []string `toml:"schedule"`
	// ModelMay lists what the model may change about its own heartbeat:
	// "pause" (default), "interval" (within IntervalMin..IntervalMax) and
	// "notes" (the remember tool).
	ModelMay    []string `toml:"model_may"`
	IntervalMin Duration `toml:"interval_min"` // default 10m: the model's lower bound
	IntervalMax Duration `toml:"interval_max"` // default 6h: the model's upper bound
	Active      *Window  `toml:"-"`            // parsed ActiveHours, nil = always
}

// Values of heartbeat.gate.
const (
	GateDeadband = "deadband"
	GateUnusual  = "unusual"
)

// Window is a daily time window in the device timezone; it may wrap
// midnight (active_hours, quiet_hours).
type Window = schedule.Window

// LLM is the [llm] section. With no API key (and a provider that needs one)
// vigil runs rules-only.
type LLM struct {
	Provider     string   `toml:"provider"` // openai | anthropic
	BaseURL      string   `toml:"base_url"`
	Model        string   `toml:"model"`
	APIKeyEnv    string   `toml:"api_key_env"`
	APIKeyFile   string   `toml:"api_key_file"`
	Timeout      Duration `toml:"timeout"`        // default 60s
	MaxSteps     int      `toml:"max_steps"`      // default 6
	MaxToolCalls int      `toml:"max_tool_calls"` // default 12
	// MaxOutputTokens caps each answer (max_tokens on both protocols).
	MaxOutputTokens int    `toml:"max_output_tokens"` // default 1024
	ScoutModel      string `toml:"scout_model"`
	// MaxRetries is how often one request is retried on 429, 5xx or a
	// timeout; RetryBackoff the first wait, doubling, Retry-After honoured.
	MaxRetries   int      `toml:"max_retries"`   // default 2
	RetryBackoff Duration `toml:"retry_backoff"` // default 1s
	APIKey       Secret   `toml:"-"`             // resolved
}

// Sensor is one [[sensor]] table.
type Sensor struct {
	Name     string             `toml:"name"`     // [a-z0-9_]
	Driver   string             `toml:"driver"`   // one of Drivers
	Bus      string             `toml:"bus"`      // I²C bus number/name, or "spi:0.0"; default: board's
	Address  int                `toml:"address"`  // I²C address 0x03-0x77; default: driver's
	Timeout  Duration           `toml:"timeout"`  // per-read timeout, default 5s
	Deadband map[string]float64 `toml:"deadband"` // quantity -> smallest change that counts
	// Calibrate corrects the driver's readings, by quantity, before rules,
	// history, MQTT, the page and the LLM see them.
	Calibrate map[string]Calibration `toml:"calibrate"`
	// Driver-specific keys.
	ShuntOhms  float64  `toml:"shunt_ohms"`  // ina219, default 0.1
	MaxCurrent float64  `toml:"max_current"` // ina219 amps, default 3.2
	Channels   Channels `toml:"channels"`    // ads1x15 single-ended channels 0-3, mcp3008/mcp3208 0-7; default [0]
	Gain       float64  `toml:"gain"`        // ads1x15 full-scale volts: 6.144 4.096 2.048 1.024 0.512 0.256, default 4.096
	VRef       float64  `toml:"vref"`        // mcp3008/mcp3208 volts at VREF, default 3.3
	Serial     string   `toml:"serial"`      // ds18b20 "28-..." (default: the only one present)
	W1Dir      string   `toml:"w1_dir"`      // ds18b20 sysfs dir, default /sys/bus/w1/devices
	RTD        string   `toml:"rtd"`         // max31865 "pt100" (default) or "pt1000"
	Wires      int      `toml:"wires"`       // max31865 RTD connection: 2, 3 or 4 (required)
	RefOhms    float64  `toml:"ref_ohms"`    // max31865 reference resistor, default 430 (pt100) or 4300 (pt1000)
	Path       string   `toml:"path"`        // iio/hwmon device directory, "/sys/bus/iio/devices/iio:device0"
	Device     string   `toml:"device"`      // iio/hwmon: the kernel's name for the device, as in its name file
	Quantities []string `toml:"quantities"`  // iio/hwmon: the readings to report, in order (default: all it has)
	Sim        *SimWave `toml:"sim"`         // board = "sim" only: the simulated excursion
	Line       int      `toml:"-"`           // line of the [[sensor]] header, for error messages
}

// Calibration corrects one quantity of a sensor: either Offset, added to
// every reading, or the line through two Points, each [raw, true]: a
// reading of raw becomes true, and every other reading moves in proportion.
// Parse makes sure exactly one is set, and Points holds two pairs of finite
// numbers with different raw values; the offset and the slope of the line
// are within ±MaxCalibration, and the slope is not 0.
//
//	calibrate = { temperature = { offset = -1.5 }, humidity = { points = [[35.0, 33.2], [75.0, 76.1]] } }
type Calibration struct {
	Offset *float64
	Points [][]float64
}

// Channel is one entry of a sensor's channels: an ADC input number, read
// in volts as "chN", or (mcp3008/mcp3208) a table that maps the input's
// voltage linearly to a named quantity:
//
//	channels = [0, 1]
//	channels = [{ channel = 0, quantity = "soil", unit = "%", volts = [0.0, 3.3], values = [0.0, 100.0] }]
type Channel struct {
	Channel  int       // input number
	Quantity string    // "" for a plain number: "chN" in volts
	Unit     string    // the quantity's unit; "V" without values
	Volts    []float64 // [from, to] input range; nil: 0 to vref
	Values   []float64 // the quantity at those volts; nil: the volts themselves
}

// Channels is the channels key.
type Channels []Channel

// Numbers returns the channel numbers.
func (c Channels) Numbers() []int {
	if c == nil {
		return nil
	}
	out := make([]int, len(c))
	for i, ch := range c {
		out[i] = ch.Channel
	}
	return out
}

// Plain reports whether every channel is a plain number.
func (c Channels) Plain() bool {
	for _, ch := range c {
		if ch.Quantity != "" {
			return false
		}
	}
	return true
}

// SimWave tunes a simulated sensor's temperature excursion on board = "sim":
// every Every, temperatures climb by Rise over a quarter of Length, hold and
// fall back. Every = "0s" turns excursions off. Script = "week" replaces the
// excursion by the scripted week (device.Sim): nights 15 °C, afternoons
// 30 °C in device.timezone, a little noise, and one night at 28 °C at 3 a.m.
type SimWave struct {
	Script string   `toml:"script"` // "" (the excursion) | "week"
	Every  Duration `toml:"every"`  // default 3m
	Length Duration `toml:"length"` // default 90s
	Rise   float64  `toml:"rise"`   // °C, default 20
	// Start pins the waveform to a wall-clock instant instead of the
	// daemon's start: every device with the same start and every runs its
	// excursions together (a fleet's synchronised alert storm).
	Start time.Time `toml:"start"`
}

// Rule is one [[rule]] table.
type Rule struct {
	Name     string   `toml:"name"`     // [a-z0-9_]
	When     string   `toml:"when"`     // rule expression
	Clear    string   `toml:"clear"`    // optional; default: not when
	Severity string   `toml:"severity"` // info | warning | critical, default warning
	Message  string   `toml:"message"`  // template with {sensor.quantity}
	For      Duration `toml:"for"`
	Renotify Duration `toml:"renotify"` // 0: never re-notify while firing
	Enabled  bool     `toml:"enabled"`  // default true; false: not evaluated
	Line     int      `toml:"-"`
	// Origin is set on a run-time rule (Options.RunRules, an approved
	// proposal): "proposed by the model at …, approved by … at …". Empty
	// for a [[rule]] of the file.
	Origin string `toml:"-"`
}

// MQTT is the [mqtt] section; enabled when Broker or Brokers is set.
type MQTT struct {
	Broker          string   `toml:"broker"`       // tcp://host:1883 or ssl://host:8883
	Brokers         []string `toml:"brokers"`      // instead of Broker: the nodes of a cluster, tried in order
	TopicPrefix     string   `toml:"topic_prefix"` // default "vigil"
	Username        string   `toml:"username"`
	PasswordEnv     string   `toml:"password_env"`
	PasswordFile    string   `toml:"password_file"`
	CAFile          string   `toml:"ca_file"`
	CertFile        string   `toml:"cert_file"`
	KeyFile         string   `toml:"key_file"`
	Keepalive       Duration `toml:"keepalive"`        // default 30s
	HomeAssistant   bool     `toml:"homeassistant"`    // default true
	DiscoveryPrefix string   `toml:"discovery_prefix"` // default "homeassistant"
	Commands        bool     `toml:"commands"`
	MinSeverity     string   `toml:"min_severity"` // default info
	Password        Secret   `toml:"-"`
}

// HTTP is the [http] section: the status page, off unless Listen is set.
type HTTP struct {
	Listen       string `toml:"listen"`        // host:port; empty: no status page
	Username     string `toml:"username"`      // basic auth user (default "vigil")
	PasswordFile string `toml:"password_file"` // basic auth password; required off loopback
	// AllowedHosts are host names the page answers to besides its IP
	// addresses, localhost and the device's own names (a reverse proxy's
	// name, a DNS name of the device); any other Host is refused.
	AllowedHosts []string `toml:"allowed_hosts"`
	Password     Secret   `toml:"-"`
}

// Manage is the [manage] section.
type Manage struct {
	// Remote lists the commands a remote channel (the status page) may
	// run; default status, pause, resume, check, ack and rule.
	Remote []string `toml:"remote"`
	// Models lists the models a remote channel may set llm.model and
	// llm.scout_model to, besides model and scout_model as configured
	// (which are all it may choose without a list).
	Models []string `toml:"models"`
	// ProposalMaxPerDay: a rule the model proposes that would have fired
	// more often than this a day over the history is marked noisy; default 3.
	ProposalMaxPerDay int `toml:"proposal_max_per_day"`
}

// RemoteVerbs are the commands [manage] remote may allow. "set" also
// covers Telegram's /toggle (it sets rule.<name>.enabled); "checklist"
// covers showing, setting and resetting the checklist; "ack" acknowledging
// a firing problem (Telegram's Acknowledge button too); "rule" approving,
// rejecting and dropping a rule the model proposed (an alerting rule, never
// an action: Telegram's Approve and Reject buttons too).
var RemoteVerbs = []string{"status", "pause", "resume", "check", "test-alert", "get", "set", "unset", "checklist", "logs", "notes", "ack", "rule"}

// ModelMayValues are what heartbeat.model_may may list.
var ModelMayValues = []string{"pause", "interval", "notes", "propose_rule"}

// Allows reports whether [manage] remote allows verb.
func (m Manage) Allows(verb string) bool {
	for _, v := range m.Remote {
		if v == verb {
			return true
		}
	}
	return false
}

// Telegram is the [telegram] section; enabled when a token is configured.
type Telegram struct {
	TokenEnv     string  `toml:"token_env"`
	TokenFile    string  `toml:"token_file"`
	ChatID       int64   `toml:"chat_id"`
	AllowedChats []int64 `toml:"allowed_chats"`
	AllowedUsers []int64 `toml:"allowed_users"` // when set, only these senders may command, in any allowed chat
	APIURL       string  `toml:"api_url"`       // default https://api.telegram.org
	MinSeverity  string  `toml:"min_severity"`  // default info
	// QuietHours ("22:00-07:00", device timezone, may wrap midnight) holds
	// alerts below QuietMinSeverity for one digest when they end.
	QuietHours       string  `toml:"quiet_hours"`
	QuietMinSeverity string  `toml:"quiet_min_severity"` // default critical
	MaxPerHour       int     `toml:"max_per_hour"`       // alert messages an hour before a digest; default 20, 0: no cap
	Quiet            *Window `toml:"-"`                  // parsed QuietHours, nil = none
	Token            Secret  `toml:"-"`
}

// File is the name the config was parsed from.
func (c *Config) File() string { return c.file }
