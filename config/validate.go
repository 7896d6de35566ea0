package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/schedule"
)

// RTDs are the probes the max31865 reads, with their resistance at 0 °C.
var RTDs = map[string]float64{"pt100": 100, "pt1000": 1000}

// MaxVRef is the highest reference voltage of the MCP3008/MCP3208 (VDD ≤ 5.5 V).
const MaxVRef = 5.5

// BoardSensor is the reserved name of the board's own health sensor.
const BoardSensor = device.BoardSensor

// ADSGains are the full-scale ranges (volts) an ADS1x15 supports.
var ADSGains = []float64{6.144, 4.096, 2.048, 1.024, 0.512, 0.256}

// Severities are the alert severities, lowest first.
var Severities = []string{"info", "warning", "critical"}

// The sensor drivers, their buses, keys and quantities are package
// device's registry (device.LookupDriver): config asks it, by name, and
// checks each driver-specific key the same way for every driver that
// takes it.

// takes reports whether a sensor of driver takes key, and whether the
// driver is known.
func takes(driver, key string) (yes, known bool) {
	d, known := device.LookupDriver(driver)
	return known && d.Takes(key), known
}

// driverSpecificKeys are the keys some drivers take and others refuse.
var driverSpecificKeys = []string{"bus", "address", "shunt_ohms", "max_current", "channels", "gain", "vref", "serial", "w1_dir",
	"rtd", "wires", "ref_ohms", "path", "device", "quantities"}

// at builds the path of a key: at("heartbeat", -1, "interval"),
// at("sensor", 2, "address").
func at(section string, idx int, keys ...string) []seg {
	path := []seg{{name: section, idx: idx}}
	for _, k := range keys {
		path = append(path, seg{name: k, idx: -1})
	}
	return path
}

// line returns the line of path, or of its nearest enclosing table.
func (p *parser) line(path []seg) int {
	for i := len(path); i > 0; i-- {
		if l, ok := p.byKey[indexedKey(path[:i])]; ok {
			return l
		}
		if path[i-1].idx >= 0 { // an element that is not a table: the array's line
			up := append(append([]seg(nil), path[:i-1]...), seg{name: path[i-1].name, idx: -1})
			if l, ok := p.byKey[indexedKey(up)]; ok {
				return l
			}
		}
	}
	return 0
}

// setAt says where the value of path came from, for a message about
// another key: "on line 7", "by $VIGIL_MQTT_BROKER", "at run time by cli".
func (p *parser) setAt(path []seg) string {
	o, ok := p.origins[p.display(path)]
	switch {
	case !ok:
		return fmt.Sprintf("on line %d", p.line(path))
	case o.Origin == OriginEnv:
		return "by " + o.label()
	case o.By == "":
		return "at run time"
	}
	return "at run time by " + o.By
}

// bad reports a validation error, unless the key already failed to decode.
func (p *parser) bad(path []seg, format string, args ...any) {
	p.badErr(path, fmt.Errorf(format, args...))
}

func (p *parser) badErr(path []seg, err error) {
	if p.underFailed(path) {
		return
	}
	p.add(p.line(path), p.display(path), err)
}

func (p *parser) validate() {
	p.validateDevice()
	defer p.durations() // after the defaults that depend on other keys (sim.length)
	p.validateHeartbeat()
	p.validateLLM()
	p.validateSensors()
	p.validateRules()
	p.validateMQTT()
	p.validateTelegram()
	p.validateHTTP()
	p.validateManage()
	p.validatePaths()
	p.validateText()
}

// validatePaths refuses a path-valued key (checklist, *_dir, *_file) that
// starts with ~. vigil runs without a shell, so nothing expands it:
// "~/HEARTBEAT.md" would be a file in a directory literally named ~ under
// the working directory, created there by the first run.
func (p *parser) validatePaths() {
	p.eachTable(func(sec string, v reflect.Value, prefix []seg) { p.paths(v, prefix) })
}

// eachTable calls fn with every table of the config and the path to it:
// each [section], and each element of an array of tables ([[sensor]],
// [[rule]]).
func (p *parser) eachTable(fn func(sec string, v reflect.Value, prefix []seg)) {
	root := reflect.ValueOf(p.cfg).Elem()
	for i := range root.NumField() {
		sec, _, _ := strings.Cut(root.Type().Field(i).Tag.Get("toml"), ",")
		if sec == "" || sec == "-" {
			continue
		}
		switch f := root.Field(i); f.Kind() {
		case reflect.Struct:
			fn(sec, f, at(sec, -1))
		case reflect.Slice:
			for j := range f.Len() {
				fn(sec, f.Index(j), at(sec, j))
			}
		}
	}
}

// paths checks the path-valued keys of the table v at prefix.
func (p *parser) paths(v reflect.Value, prefix []seg) {
	if v.Kind() != reflect.Struct {
		return
	}
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
		if !pathKey(key) || v.Field(i).Kind() != reflect.String {
			continue
		}
		if s := v.Field(i).String(); strings.HasPrefix(s, "~") {
			p.bad(append(slices.Clone(prefix), seg{name: key, idx: -1}), "must be an absolute path: ~ is not expanded (got %q)", s)
		}
	}
}

// pathKey reports whether a key holds a file system path.
func pathKey(key string) bool {
	return key == "checklist" || strings.HasSuffix(key, "_dir") || strings.HasSuffix(key, "_file")
}

// maxModelName is the longest llm.model or llm.scout_model accepted.
const maxModelName = 128

// modelName checks a model name, from any source (the file, the
// environment, a set from afar): it goes to the LLM server and into status,
// logs and alerts, so it is printable ASCII without spaces, at most
// maxModelName bytes, and not a path (no . or .. segment). Names with a
// slash or a colon ("meta-llama/Llama-3.1-8B", "llama3.1:8b") are fine.
// CheckModelName is modelName for package manage: it checks a value for
// llm.model or llm.scout_model as the validator will.
func CheckModelName(s string) error { return modelName(s) }

func modelName(s string) error {
	if len(s) > maxModelName {
		return fmt.Errorf("must be at most %d bytes (got %d)", maxModelName, len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return fmt.Errorf("must be printable ASCII without spaces (got %q)", s)
		}
	}
	for _, part := range strings.Split(s, "/") {
		if part == "." || part == ".." {
			return fmt.Errorf("must be a model name, not a path with . or .. in it (got %q)", s)
		}
	}
	return nil
}

// notEmpty refuses a key given (in the file or by an override) with an
// empty or blank value, where leaving it out means a default: an empty
// value would pass for that default without a word. fix says how to get
// the default or what to give. It reports whether it refused.
func (p *parser) notEmpty(path []seg, value, fix string) bool {
	if strings.TrimSpace(value) != "" || !p.given(path) {
		return false
	}
	p.bad(path, "must not be empty (%s)", fix)
	return true
}

// given reports whether the key at path is in the file or set by an
// override.
func (p *parser) given(path []seg) bool {
	_, over := p.origins[p.display(path)]
	return over || p.defined(indexedKey(path))
}

func (p *parser) validateDevice() {
	d := &p.cfg.Device
	k := func(key string) []seg { return at("device", -1, key) }
	p.notEmpty(k("id"), d.ID, `remove it to use the host name, or give an id like "greenhouse-pi"`)
	if d.ID != "" && !validID(d.ID) {
		p.bad(k("id"), "must match [a-z0-9_-]{1,64} (got %q)", d.ID)
	}
	switch {
	case !validBoard(d.Board):
		p.bad(k("board"), "must be auto, sim or a board profile name (got %q)", d.Board)
	case p.opts.Boards != nil && d.Board != "auto" && d.Board != "sim" && !slices.Contains(p.opts.Boards, d.Board):
		p.bad(k("board"), "unknown board %q: must be auto, sim or one of %s (see 'vigil version --boards')", d.Board, strings.Join(p.opts.Boards, ", "))
	}
	if d.StateDir == "" {
		p.bad(k("state_dir"), "must not be empty")
	}
	p.validateTags(k("tags"), d.Tags)
	if p.notEmpty(k("timezone"), d.Timezone, `remove it for UTC, or give an IANA name like "Europe/Berlin"`) {
		return
	}
	if d.Timezone == "Local" { // time.LoadLocation's name for the machine's own zone
		p.bad(k("timezone"), `"Local" is whatever the machine's clock is set to, not an IANA name: give one like "Europe/Berlin", or "UTC"`)
		return
	}
	loc, err := loadLocation(d.Timezone)
	if err != nil || strings.ContainsAny(d.Timezone, "\x00") {
		p.bad(k("timezone"), "%s", zoneError(d.Timezone))
		return
	}
	d.Location = loc
}

// MaxTags is how many tags [device] tags may list.
const MaxTags = 16

// ValidTag reports whether s is a tag: 1-32 of a-z, 0-9, _ and -,
// starting with a letter or a digit (^[a-z0-9][a-z0-9_-]{0,31}$).
func ValidTag(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '_' || r == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func (p *parser) validateTags(key []seg, tags []string) {
	if len(tags) > MaxTags {
		p.bad(key, "%d tags, more than %d: keep the %d that matter for selecting this device", len(tags), MaxTags, MaxTags)
	}
	seen := map[string]bool{}
	for i, t := range tags {
		switch {
		case !ValidTag(t):
			p.bad(key, "tags[%d]: %q is not a tag: use 1-32 of a-z, 0-9, _ and -, starting with a letter or digit, as in \"north\"", i, t)
		case seen[t]:
			p.bad(key, "tags[%d]: %q is listed twice", i, t)
		}
		seen[t] = true
	}
}

func (p *parser) validateHeartbeat() {
	h := &p.cfg.Heartbeat
	k := func(key string) []seg { return at("heartbeat", -1, key) }
	if h.Enabled && len(h.Schedule) == 0 && h.Interval.Duration == 0 {
		// interval = "0" turns heartbeats off: say so in enabled too, so
		// the resolved config never shows enabled = true beside it.
		h.Enabled = false
		p.cfg.off = `heartbeat.interval = "0"`
	}
	if h.Checklist == "" {
		p.bad(k("checklist"), "must not be empty")
	}
	if h.ActiveHours != "" {
		w, err := schedule.ParseWindow(h.ActiveHours)
		if err != nil {
			p.badErr(k("active_hours"), err)
		}
		h.Active = w
	}
	if len(h.Schedule) > 0 {
		if _, err := schedule.Parse(h.Schedule); err != nil {
			p.badErr(k("schedule"), err)
		} else if _, over := p.origins["heartbeat.interval"]; over {
			p.bad(k("interval"), "heartbeat.schedule is in force (line %d), and interval does not apply with a schedule", p.line(k("schedule")))
		} else if iv := defaults().Heartbeat.Interval; p.md.IsDefined("heartbeat", "interval") && h.Interval != iv {
			p.bad(k("schedule"), "is an alternative to interval (set to %q %s): remove one of them",
				h.Interval, p.setAt(k("interval")))
		}
	}
	if h.Gate != GateDeadband && h.Gate != GateUnusual {
		p.bad(k("gate"), "must be %q or %q (got %q)", GateDeadband, GateUnusual, h.Gate)
	}
	if !(h.Unusual >= 1 && h.Unusual <= 20) { // also refuses NaN
		p.bad(k("unusual"), "must be a robust |z| from 1 to 20, as in 3 (got %v)", h.Unusual)
	}
	if h.MaxAlertsPerHour < 1 {
		p.bad(k("max_alerts_per_hour"), "must be at least 1 (got %d)", h.MaxAlertsPerHour)
	}
	if h.FailureAlertAfter < 1 {
		p.bad(k("failure_alert_after"), "must be at least 1 (got %d)", h.FailureAlertAfter)
	}
	if h.MaxLLMCallsPerDay < 1 {
		p.bad(k("max_llm_calls_per_day"), "must be at least 1 (got %d)", h.MaxLLMCallsPerDay)
	}
	seen := map[string]bool{}
	for i, v := range h.ModelMay {
		if !slices.Contains(ModelMayValues, v) {
			p.bad(k("model_may"), "model_may[%d]: unknown %q (known: %s)", i, v, strings.Join(ModelMayValues, ", "))
		} else if seen[v] {
			p.bad(k("model_may"), "model_may[%d]: %q is listed twice", i, v)
		}
		seen[v] = true
	}
	if h.IntervalMax.Duration < h.IntervalMin.Duration {
		p.bad(k("interval_max"), "must not be below interval_min %s (got %q)", h.IntervalMin, h.IntervalMax)
	}
}

func (p *parser) validateLLM() {
	l := &p.cfg.LLM
	k := func(key string) []seg { return at("llm", -1, key) }
	switch l.Provider {
	case "openai", "anthropic":
	default:
		p.bad(k("provider"), "must be openai or anthropic (got %q)", l.Provider)
	}
	anthropic := l.Provider == "anthropic"
	if !p.isDefined("llm", "base_url") {
		l.BaseURL = pick(anthropic, DefaultAnthropicURL, DefaultOpenAIURL)
	}
	if !p.isDefined("llm", "model") {
		l.Model = pick(anthropic, DefaultAnthropicModel, DefaultOpenAIModel)
	}
	if !p.isDefined("llm", "api_key_env") && l.APIKeyFile == "" {
		l.APIKeyEnv = pick(anthropic, "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
	}
	if u, err := httpURL(l.BaseURL); err != nil {
		p.badErr(k("base_url"), err)
	} else {
		l.BaseURL = u
	}
	if strings.TrimSpace(l.Model) == "" {
		p.bad(k("model"), "must not be empty")
	} else if err := modelName(l.Model); err != nil {
		p.badErr(k("model"), err)
	}
	if l.ScoutModel != "" {
		if err := modelName(l.ScoutModel); err != nil {
			p.badErr(k("scout_model"), err)
		}
	}
	p.secretRef(at("llm", -1), "api_key", l.APIKeyEnv, l.APIKeyFile)
	if l.MaxSteps < 1 || l.MaxSteps > 20 {
		p.bad(k("max_steps"), "must be between 1 and 20 (got %d)", l.MaxSteps)
	}
	if l.MaxToolCalls < 1 || l.MaxToolCalls > 100 {
		p.bad(k("max_tool_calls"), "must be between 1 and 100 (got %d)", l.MaxToolCalls)
	}
	if l.MaxOutputTokens < 16 || l.MaxOutputTokens > 65536 {
		p.bad(k("max_output_tokens"), "must be between 16 and 65536 (got %d)", l.MaxOutputTokens)
	}
	if l.MaxRetries < 0 || l.MaxRetries > 10 {
		p.bad(k("max_retries"), "must be between 0 and 10 (got %d)", l.MaxRetries)
	}
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// secretRef checks a <stem>_env / <stem>_file pair.
func (p *parser) secretRef(section []seg, stem, env, file string) {
	if env != "" && !validEnvName(env) {
		p.bad(append(section, seg{name: stem + "_env", idx: -1}), "must be an environment variable name (got %q)", env)
	}
	if env != "" && file != "" {
		p.bad(append(section, seg{name: stem + "_file", idx: -1}), "set either %s_env or %s_file, not both", stem, stem)
	}
	if strings.ContainsRune(file, 0) {
		p.bad(append(section, seg{name: stem + "_file", idx: -1}), "must be a file path (got %q)", file)
	}
}

// httpURL checks an http(s) base URL and returns it without a trailing slash.
func httpURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("must be an http:// or https:// URL (got %q)", s)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("must be a plain base URL without credentials, query or fragment (got %q)", redactURL(u))
	}
	return strings.TrimRight(s, "/"), nil
}

// redactURL prints u without its password.
func redactURL(u *url.URL) string { return u.Redacted() }

func (p *parser) validateSensors() {
	seen := map[string]int{} // name -> line
	for i := range p.cfg.Sensors {
		s := &p.cfg.Sensors[i]
		k := func(key string) []seg { return at("sensor", i, key) }
		switch {
		case s.Name == "":
			p.bad(k("name"), "missing (every [[sensor]] needs a name)")
		case s.Name == BoardSensor:
			p.bad(k("name"), "%q is reserved for the board's own health sensor", s.Name)
		case !validSensorName(s.Name):
			p.bad(k("name"), "must match [a-z0-9_]{1,32} (got %q)", s.Name)
		default:
			if l, dup := seen[s.Name]; dup {
				p.bad(k("name"), "duplicate sensor name %q (first on line %d)", s.Name, l)
			} else {
				seen[s.Name] = s.Line
			}
		}
		_, known := device.LookupDriver(s.Driver)
		switch {
		case s.Driver == "":
			p.bad(k("driver"), "missing (one of %s)", strings.Join(device.DriverNames(), ", "))
		case !known && device.KernelDriven(s.Driver) != "":
			p.bad(k("driver"), "no driver %q of vigil's own, but the kernel drives it: use %s (see vigil sensors --drivers)", s.Driver, device.KernelDriven(s.Driver))
		case !known:
			p.bad(k("driver"), "unknown driver %q (want one of %s)", s.Driver, strings.Join(device.DriverNames(), ", "))
		}
		if known {
			for _, key := range driverSpecificKeys {
				if p.defined(indexedKey(k(key))) && !p.takes(*s, key) {
					p.bad(k(key), "not used by driver %s", s.Driver)
				}
			}
			p.sensorDefaults(i, s)
		}
		p.validateSensor(i, s, k)
	}
}

// sensorDefaults fills the driver-specific defaults of keys not in the file.
func (p *parser) sensorDefaults(i int, s *Sensor) {
	// def: the driver takes key and the file does not set it.
	def := func(key string) bool { return p.takes(*s, key) && !p.defined(indexedKey(at("sensor", i, key))) }
	if def("shunt_ohms") {
		s.ShuntOhms = 0.1
	}
	if def("max_current") {
		s.MaxCurrent = 3.2
	}
	if def("channels") {
		s.Channels = Channels{{Channel: 0, Unit: "V"}}
	}
	if def("gain") {
		s.Gain = 4.096
	}
	if def("vref") {
		s.VRef = 3.3
	}
	if def("rtd") {
		s.RTD = "pt100"
	}
	if r0, ok := RTDs[s.RTD]; ok && def("ref_ohms") {
		s.RefOhms = 4.3 * r0
	}
	if def("w1_dir") {
		s.W1Dir = DefaultW1Dir
	}
}

// takes reports whether s's driver takes key.
func (p *parser) takes(s Sensor, key string) bool {
	yes, _ := takes(s.Driver, key)
	return yes
}

func (p *parser) validateSensor(i int, s *Sensor, k func(string) []seg) {
	if w := s.Sim; w != nil {
		def := func(key string) bool { return !p.defined(indexedKey(at("sensor", i, "sim", key))) }
		switch w.Script {
		case "":
		case device.SimWeek:
			for _, key := range []string{"every", "length", "rise"} {
				if !def(key) {
					p.bad(at("sensor", i, "sim", key), "not used with sim.script = %q (the week has no excursion): remove it", w.Script)
				}
			}
		default:
			p.bad(at("sensor", i, "sim", "script"), "must be %q, or left out for the excursion (got %q)", device.SimWeek, w.Script)
		}
		if def("every") {
			w.Every = Duration{3 * time.Minute}
		}
		if def("length") {
			w.Length = Duration{90 * time.Second}
			if w.Every.Duration > 0 && w.Every.Duration/2 < w.Length.Duration {
				w.Length = Duration{w.Every.Duration / 2}
			}
		}
		if def("rise") {
			w.Rise = 20
		}
		switch {
		case w.Every.Duration > 0 && w.Length.Duration > w.Every.Duration:
			p.bad(at("sensor", i, "sim", "length"), "must not exceed sim.every (%s > %s)", w.Length, w.Every)
		}
	}
	p.notEmpty(k("bus"), s.Bus, `remove it to use the board's default bus, or name one like "1"`)
	p.notEmpty(k("serial"), s.Serial, `remove it to use the only DS18B20 present, or give its id like "28-0316a2794aff"`)
	spi := false
	usesBus := p.takes(*s, "bus")
	d, _ := device.LookupDriver(s.Driver)
	switch {
	case s.Bus == "":
	case strings.HasPrefix(s.Bus, "spi:"):
		spi = true
		if _, _, ok := spiBus(s.Bus); !ok {
			p.bad(k("bus"), `must be "spi:BUS.CS" like "spi:0.0" (got %q)`, s.Bus)
		} else if usesBus && !d.SPI() {
			spiDrivers := strings.Join(device.DriversWith(device.DriverInfo.SPI), ", ")
			p.bad(k("bus"), "%s is an I²C chip: set an I²C bus number like \"1\" (got %q); SPI works for %s", s.Driver, s.Bus, spiDrivers)
		}
	case !validBus(s.Bus):
		p.bad(k("bus"), "must be an I²C bus number or name like \"1\" (got %q)", s.Bus)
	case usesBus && d.SPIOnly():
		p.bad(k("bus"), "%s is an SPI chip: bus must be \"spi:BUS.CS\" like \"spi:0.0\" (got %q), or unset for the board's first SPI port", s.Driver, s.Bus)
	}
	switch {
	case s.Address == 0:
	case spi:
		p.bad(k("address"), "not used with an SPI bus")
	case s.Address < 0x03 || s.Address > 0x77:
		p.bad(k("address"), "must be an I²C address from 0x03 to 0x77 (got %#x)", s.Address)
	}
	for _, q := range sortedKeys(s.Deadband) {
		v := s.Deadband[q]
		path := at("sensor", i, "deadband", q)
		switch {
		case !validQuantity(q):
			p.bad(path, "must be a quantity name like temperature (got %q)", q)
		case v < 0 || math.IsNaN(v) || math.IsInf(v, 0):
			p.bad(path, "must be a non-negative number (got %v)", v)
		case validSensorName(s.Name):
			if msg := p.noQuantity(s.Name, q, func(q string) string { return q }); msg != "" {
				p.bad(path, "%s", msg)
			}
		}
	}
	p.validateCalibration(i, s)
	// Each driver-specific key is checked alike for every driver that
	// takes it.
	switch {
	case p.takes(*s, "shunt_ohms"):
		if !(s.ShuntOhms > 0) || math.IsInf(s.ShuntOhms, 0) {
			p.bad(k("shunt_ohms"), "must be more than 0 (got %v)", s.ShuntOhms)
		}
		if !(s.MaxCurrent > 0) || math.IsInf(s.MaxCurrent, 0) {
			p.bad(k("max_current"), "must be more than 0 (got %v)", s.MaxCurrent)
		}
	case p.takes(*s, "gain"): // an ADC that reads volts only
		if !s.Channels.Plain() {
			scaled := device.DriversWith(func(d device.DriverInfo) bool { return d.Takes("vref") })
			p.bad(k("channels"), "the %s reads channels in volts: list their numbers, as in channels = [0, 1] (a table with a quantity is for %s)", s.Driver, strings.Join(scaled, " and "))
		}
		p.validateChannels(k("channels"), s.Channels, maxChannel(s.Driver), 0)
		if !slices.Contains(ADSGains, s.Gain) {
			p.bad(k("gain"), "must be one of 6.144, 4.096, 2.048, 1.024, 0.512, 0.256 (got %v)", s.Gain)
		}
	case p.takes(*s, "vref"): // an ADC that scales volts
		if !(s.VRef > 0 && s.VRef <= MaxVRef) {
			p.bad(k("vref"), "must be the volts at VREF, more than 0 and at most %g (got %v)", MaxVRef, s.VRef)
			break
		}
		p.validateChannels(k("channels"), s.Channels, maxChannel(s.Driver), s.VRef)
	case p.takes(*s, "rtd"):
		r0, ok := RTDs[s.RTD]
		if !ok {
			p.bad(k("rtd"), `must be "pt100" or "pt1000" (got %q)`, s.RTD)
		}
		if !p.defined(indexedKey(k("wires"))) {
			p.bad(k("wires"), "missing: how the RTD is connected, 2, 3 or 4 wires (count the probe's wires)")
		} else if s.Wires < 2 || s.Wires > 4 {
			p.bad(k("wires"), "must be 2, 3 or 4 (got %d)", s.Wires)
		}
		if ok && (!(s.RefOhms > r0) || math.IsInf(s.RefOhms, 0)) {
			p.bad(k("ref_ohms"), "must be the reference resistor in ohms, more than the %s's %g Ω at 0 °C (got %v; boards use %g)", s.RTD, r0, s.RefOhms, 4.3*r0)
		}
	case p.takes(*s, "quantities"):
		p.validateKernelSensor(s, k)
	case p.takes(*s, "serial"):
		if s.Serial != "" && !validSerial(s.Serial) {
			p.bad(k("serial"), "must be a 1-Wire id like \"28-0316a2794aff\" (got %q)", s.Serial)
		}
		if s.W1Dir == "" {
			p.bad(k("w1_dir"), "must not be empty")
		}
	}
}

// validateChannels checks an ADC's channels: numbers 0..maxCh, each once;
// quantities named like other quantities, each once; volts within 0..vref
// (vref 0: the sensor takes no scaled channels).
func (p *parser) validateChannels(path []seg, chans Channels, maxCh int, vref float64) {
	if len(chans) == 0 {
		p.bad(path, "must list at least one channel (0-%d)", maxCh)
	}
	names := map[string]int{}
	for j, ch := range chans {
		q := ch.Quantity
		if q == "" {
			q = "ch" + strconv.Itoa(ch.Channel)
		}
		switch {
		case ch.Channel < 0 || ch.Channel > maxCh:
			p.bad(path, "channels must be 0-%d (got %d)", maxCh, ch.Channel)
		case slices.Contains(chans[:j].Numbers(), ch.Channel):
			p.bad(path, "channel %d listed twice", ch.Channel)
		case !validQuantity(q):
			p.bad(path, "channel %d: quantity must match [a-z0-9_]{1,32} (got %q)", ch.Channel, q)
		case names[q] > 0:
			p.bad(path, "channel %d: quantity %q is channel %d's already", ch.Channel, q, names[q]-1)
		case !validUnit(ch.Unit):
			p.bad(path, "channel %d: unit must be printable and at most 16 bytes (got %q)", ch.Channel, ch.Unit)
		}
		names[q] = ch.Channel + 1
		if ch.Volts != nil {
			v := ch.Volts
			switch {
			case v[0] == v[1]:
				p.bad(path, "channel %d: volts must be a range, from and to differ (got [%v, %v])", ch.Channel, v[0], v[1])
			case !(v[0] >= 0 && v[0] <= vref && v[1] >= 0 && v[1] <= vref):
				p.bad(path, "channel %d: volts must lie within 0 and vref %v V, what the ADC can read (got [%v, %v])", ch.Channel, vref, v[0], v[1])
			}
		}
		for _, x := range ch.Values {
			if !finite(x) {
				p.bad(path, "channel %d: values must be numbers (got %v)", ch.Channel, ch.Values)
				break
			}
		}
	}
}

// validUnit accepts a unit as readings show it: "%", "lx", "µS/cm", "".
func validUnit(u string) bool {
	if len(u) > 16 || !utf8.ValidString(u) {
		return false
	}
	for _, r := range u {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// validateKernelSensor checks an iio or hwmon sensor: found by path or by
// the kernel's name for it, and the quantities it must report.
func (p *parser) validateKernelSensor(s *Sensor, k func(string) []seg) {
	d, _ := device.LookupDriver(s.Driver)
	dir := d.Path
	switch {
	case s.Path == "" && s.Device == "":
		p.bad(k("driver"), "%s needs device = \"name\" (the kernel's name for it, as in %s/name) or path = %q", s.Driver, path.Dir(dir)+"/*", dir)
	case s.Path != "" && s.Device != "":
		p.bad(k("device"), "give device or path, not both")
	case s.Path != "" && (!strings.HasPrefix(s.Path, "/") || path.Clean(s.Path) != s.Path):
		p.bad(k("path"), "must be an absolute, clean path like %q (got %q)", dir, s.Path)
	case s.Device != "" && (len(s.Device) > 64 || strings.ContainsAny(s.Device, "/\x00\n")):
		p.bad(k("device"), "must be the kernel's name for the device, as in %s/name (got %q)", path.Dir(dir)+"/*", s.Device)
	}
	for j, q := range s.Quantities {
		switch {
		case !kernelQuantity(q):
			p.bad(k("quantities"), "quantities[%d]: %q is not one of %s (a later channel of a kind is numbered: temperature_2)", j, q, strings.Join(device.KernelQuantityNames(), ", "))
		case slices.Contains(s.Quantities[:j], q):
			p.bad(k("quantities"), "quantities[%d]: %q is listed twice", j, q)
		}
	}
}

// kernelQuantity reports whether q is a device.KernelQuantityNames name, possibly
// numbered from 2: "temperature", "temperature_2".
func kernelQuantity(q string) bool {
	base, n, numbered := strings.Cut(q, "_")
	if numbered {
		v, err := strconv.Atoi(n)
		if err != nil || v < 2 || strconv.Itoa(v) != n {
			return false
		}
	}
	return slices.Contains(device.KernelQuantityNames(), base)
}

// maxChannel is the highest input of an ADC driver: ch0 to chN.
func maxChannel(driver string) int {
	d, _ := device.LookupDriver(driver)
	return len(d.Quantities) - 1
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (p *parser) validateRules() {
	sensors := map[string]bool{BoardSensor: true}
	for _, s := range p.cfg.Sensors {
		sensors[s.Name] = true
	}
	seen := map[string]int{}
	for i := range p.cfg.Rules {
		r := &p.cfg.Rules[i]
		k := func(key string) []seg { return at("rule", i, key) }
		switch {
		case r.Name == "":
			p.bad(k("name"), "missing (every [[rule]] needs a name)")
		case !validRuleName(r.Name):
			p.bad(k("name"), "must match [a-z0-9_]{1,64} (got %q)", r.Name)
		default:
			if l, dup := seen[r.Name]; dup {
				p.bad(k("name"), "duplicate rule name %q (first on line %d)", r.Name, l)
			} else {
				seen[r.Name] = r.Line
			}
		}
		if strings.TrimSpace(r.When) == "" {
			p.bad(k("when"), "missing (the condition that fires the rule)")
		} else {
			p.expr(k("when"), r.When, sensors)
		}
		if p.notEmpty(k("clear"), r.Clear, "remove it to resolve when the condition no longer holds") {
		} else if r.Clear != "" {
			p.expr(k("clear"), r.Clear, sensors)
		}
		if !slices.Contains(Severities, r.Severity) {
			p.bad(k("severity"), "must be info, warning or critical (got %q)", r.Severity)
		}
		// The placeholders Render fills, so "{{air.temp}}" (a literal) is not one.
		for _, key := range rule.Placeholders(r.Message) {
			sensor, q, _ := strings.Cut(key, ".")
			if !sensors[sensor] {
				p.bad(k("message"), "{%s} names no configured sensor %q", key, sensor)
			} else if msg := p.noQuantity(sensor, q, func(q string) string { return "{" + sensor + "." + q + "}" }); msg != "" {
				p.bad(k("message"), "{%s} would print as ?: %s", key, msg)
			}
		}
	}
}

// expr compiles a rule expression and checks the sensors it names.
func (p *parser) expr(path []seg, src string, sensors map[string]bool) {
	e, err := rule.Compile(src)
	if err == nil {
		if p.cfg.exprs == nil {
			p.cfg.exprs = map[string]*rule.Expr{}
		}
		p.cfg.exprs[src] = e // an expression is immutable: RuleSpec shares it
	}
	if err != nil {
		var se *rule.SyntaxError
		if !errors.As(err, &se) {
			err = fmt.Errorf("invalid expression: %w", err)
		}
		p.badErr(path, err)
		return
	}
	for _, s := range e.Sensors() {
		if !sensors[s] {
			msg := fmt.Sprintf("unknown sensor %q (configured: %s)", s, strings.Join(p.sensorNames(), ", "))
			if near := closest(s, p.sensorNames()); near != "" {
				msg += "; did you mean " + near + "?"
			}
			p.bad(path, "%s", msg)
		}
	}
	// A key the sensor does not produce is never known, so a rule on it
	// could never fire.
	for _, key := range e.Keys() {
		sensor, q, _ := strings.Cut(key, ".")
		if !sensors[sensor] {
			continue
		}
		if msg := p.noQuantity(sensor, q, func(q string) string { return sensor + "." + q }); msg != "" {
			p.bad(path, "%s: %s", key, msg)
		}
	}
	// usual() and unusual() need a baseline: every sensor quantity has one,
	// the board's on/off flags and its uptime have none.
	for _, key := range e.Baselines() {
		sensor, q, _ := strings.Cut(key, ".")
		if sensor != BoardSensor || p.opts.BoardBaselines == nil || !slices.Contains(p.opts.Board, q) ||
			slices.Contains(p.opts.BoardBaselines, q) {
			continue
		}
		msg := fmt.Sprintf("%s has no baseline, so usual() and unusual() cannot use it (the board's quantities with one: %s)",
			key, strings.Join(p.opts.BoardBaselines, ", "))
		if s := closest(q, p.opts.BoardBaselines); s != "" {
			msg += "; did you mean " + BoardSensor + "." + s + "?"
		}
		p.bad(path, "%s", msg)
	}
}

func (p *parser) sensorNames() []string {
	names := []string{BoardSensor}
	for _, s := range p.cfg.Sensors {
		if s.Name != "" {
			names = append(names, s.Name)
		}
	}
	return names
}

func (p *parser) validateMQTT() {
	m := &p.cfg.MQTT
	k := func(key string) []seg { return at("mqtt", -1, key) }
	tls := false
	if m.Broker != "" {
		scheme, err := brokerURL(m.Broker)
		if err != nil {
			p.badErr(k("broker"), err)
		}
		tls = tlsScheme(scheme)
	}
	if p.isDefined("mqtt", "brokers") {
		switch {
		case m.Broker != "":
			p.bad(k("brokers"), "is an alternative to broker (set to %q %s): remove one of them", m.Broker, p.setAt(k("broker")))
		case len(m.Brokers) == 0:
			p.bad(k("brokers"), `must list at least one broker URL, as in ["tcp://a:1883", "tcp://b:1883"] (or remove the key)`)
		default:
			var err error
			if tls, err = CheckBrokers(m.Brokers); err != nil {
				p.badErr(k("brokers"), err)
			}
		}
	}
	if err := CheckTopicPrefix(m.TopicPrefix); err != nil {
		p.badErr(k("topic_prefix"), err)
	}
	p.secretRef(at("mqtt", -1), "password", m.PasswordEnv, m.PasswordFile)
	if m.Username == "" && (m.PasswordEnv != "") != (m.PasswordFile != "") {
		p.bad(k(pick(m.PasswordEnv != "", "password_env", "password_file")),
			"needs a username: MQTT 3.1.1 cannot send a password without one (set mqtt.username)")
	}
	for _, f := range []struct{ key, val string }{{"ca_file", m.CAFile}, {"cert_file", m.CertFile}, {"key_file", m.KeyFile}} {
		if f.val != "" && len(m.BrokerURLs()) > 0 && !tls {
			p.bad(k(f.key), "needs an ssl://, mqtts:// or wss:// broker")
		}
	}
	if (m.CertFile == "") != (m.KeyFile == "") {
		p.bad(k(pick(m.CertFile != "", "cert_file", "key_file")), "cert_file and key_file go together")
	}
	if err := CheckTopicPrefix(m.DiscoveryPrefix); err != nil {
		p.badErr(k("discovery_prefix"), err)
	}
	if !slices.Contains(Severities, m.MinSeverity) {
		p.bad(k("min_severity"), "must be info, warning or critical (got %q)", m.MinSeverity)
	}
}

// CheckBrokers checks the nodes of a cluster (mqtt.brokers, or the
// --broker list of `vigil fleet`): each a broker URL, none twice, and TLS
// on all of them or on none (a failover from a TLS node to a plain one
// would send the credentials in the clear). It reports whether they use
// TLS. Errors name the node by its index, as brokers[1].
func CheckBrokers(urls []string) (tls bool, err error) {
	first := map[string]int{}
	for i, u := range urls {
		scheme, err := brokerURL(u)
		if err != nil {
			return false, fmt.Errorf("brokers[%d]: %w", i, err)
		}
		if j, dup := first[u]; dup {
			return false, fmt.Errorf("brokers[%d]: %q is listed twice (also brokers[%d])", i, u, j)
		}
		first[u] = i
		if i == 0 {
			tls = tlsScheme(scheme)
			continue
		}
		if tlsScheme(scheme) != tls {
			plain, secure := i, 0
			if tlsScheme(scheme) {
				plain, secure = 0, i
			}
			return false, fmt.Errorf("brokers[%d]: %q is not TLS while brokers[%d] (%q) is: a failover would send the credentials and alerts in the clear (use ssl://, mqtts:// or wss:// for every node, or for none)",
				plain, urls[plain], secure, urls[secure])
		}
	}
	return tls, nil
}

func tlsScheme(scheme string) bool { return scheme == "ssl" || scheme == "mqtts" || scheme == "wss" }

// brokerURL checks scheme://host:port (ws:// and wss:// may add a path,
// as in wss://broker.example:443/mqtt) and returns the scheme.
func brokerURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("must be a URL like tcp://host:1883 (got %q)", s)
	}
	switch u.Scheme {
	case "tcp", "ssl", "mqtt", "mqtts", "ws", "wss":
	default:
		return "", fmt.Errorf("must start with tcp://, ssl://, mqtt://, mqtts://, ws:// or wss:// (got %q)", u.Redacted())
	}
	web := u.Scheme == "ws" || u.Scheme == "wss"
	if u.User != nil {
		return "", fmt.Errorf("must not contain credentials (use username and password_env) (got %q)", u.Redacted())
	}
	port, perr := strconv.Atoi(u.Port())
	if u.Hostname() == "" || perr != nil || port < 1 || port > 65535 || (!web && u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("must be %s://host:port (got %q)", u.Scheme, s)
	}
	return u.Scheme, nil
}

// Topic names that survive every broker. vigil is run against mosquitto,
// EMQX, HiveMQ, VerneMQ and RabbitMQ's MQTT plugin; a prefix must mean the
// same topic on each, so it may not hold a character any of them treats
// specially:
//   - + and #, the MQTT wildcards (MQTT 3.1.1 §4.7.1): a topic name with
//     one is a protocol error everywhere;
//   - . and *: RabbitMQ's plugin maps MQTT topics onto AMQP routing keys,
//     "/" to "." and "+" to "*", and back on delivery ("." to "/", "*" to
//     "+"; rabbitmq-server deps/rabbitmq_mqtt/src/rabbit_mqtt_util.erl,
//     to_amqp/to_mqtt), so "site.a" is published as site/a, and a "*"
//     level is a wildcard in the topic exchange;
//   - a leading $: $SYS on every broker, $share/ on mosquitto, EMQX,
//     HiveMQ and VerneMQ, $queue/ and $exclusive/ on EMQX, and a wildcard
//     subscription never matches a $ topic (MQTT 3.1.1 §4.7.2);
//   - NUL (MQTT 3.1.1 §1.5.3: the receiver must close the connection),
//     control characters and Unicode non-characters (a receiver may close
//     it), malformed UTF-8 (HiveMQ's UTF-8 validation, on by default, and
//     EMQX's strict mode close it);
//   - empty levels, a leading or trailing / (vigil's topics are
//     <prefix>/<id>/<leaf> and a fleet view subscribes <prefix>/+/+);
//   - more than 128 bytes: with a 64-byte device id the longest topic,
//     <prefix>/<id>/problem/attributes, then stays within RabbitMQ's
//     255-byte routing keys (an AMQP short string).
// A space is allowed: every broker treats it as any other character.

// topicSpecials are the characters refused anywhere in a prefix, and why.
var topicSpecials = []struct {
	r   rune
	why string
}{
	{'+', "the MQTT single-level wildcard: no broker takes it in a topic name"},
	{'#', "the MQTT multi-level wildcard: no broker takes it in a topic name"},
	{'.', `RabbitMQ's MQTT plugin turns it into "/", so the topics would have levels that vigil fleet and Home Assistant do not look for`},
	{'*', `RabbitMQ's MQTT plugin delivers it as "+", and a "*" level is a wildcard in its topic exchange`},
}

// MaxTopicPrefix is the longest topic_prefix or discovery_prefix, in bytes.
const MaxTopicPrefix = 128

// CheckTopicPrefix checks an MQTT topic prefix (topic_prefix,
// discovery_prefix, vigil fleet --prefix) against what any of the brokers
// above treats specially; the error names the character and the broker.
func CheckTopicPrefix(s string) error {
	switch {
	case s == "":
		return errors.New("must not be empty")
	case !utf8.ValidString(s):
		return fmt.Errorf("must be valid UTF-8: MQTT requires it, and HiveMQ (by default) and EMQX in strict mode close the connection over a malformed topic (got %q)", s)
	}
	for _, sp := range topicSpecials {
		if strings.ContainsRune(s, sp.r) {
			return fmt.Errorf("must not contain %q (%s) (got %q)", string(sp.r), sp.why, s)
		}
	}
	for _, r := range s {
		switch {
		case r == 0:
			return fmt.Errorf("must not contain NUL (MQTT forbids it: every broker closes the connection) (got %q)", s)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return fmt.Errorf("must not contain %U, a control character (MQTT 3.1.1 §1.5.3 lets a broker close the connection over one) (got %q)", r, s)
		case (r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe:
			return fmt.Errorf("must not contain %U, a Unicode non-character (MQTT 3.1.1 §1.5.3 lets a broker close the connection over one) (got %q)", r, s)
		}
	}
	switch {
	case strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//"):
		return fmt.Errorf("must not start or end with / or contain empty levels (got %q)", s)
	case strings.HasPrefix(s, "$"):
		return fmt.Errorf(`must not start with "$" (reserved for the broker: $SYS on every broker, $share/ on mosquitto, EMQX, HiveMQ and VerneMQ, $queue/ and $exclusive/ on EMQX; a wildcard subscription never matches it) (got %q)`, s)
	case len(s) > MaxTopicPrefix:
		return fmt.Errorf("must be at most %d bytes, so every topic stays within RabbitMQ's 255-byte routing keys (got %d)", MaxTopicPrefix, len(s))
	}
	return nil
}

func (p *parser) validateTelegram() {
	t := &p.cfg.Telegram
	k := func(key string) []seg { return at("telegram", -1, key) }
	p.secretRef(at("telegram", -1), "token", t.TokenEnv, t.TokenFile)
	configured := t.TokenEnv != "" || t.TokenFile != ""
	switch {
	case configured && t.ChatID == 0:
		p.bad(k("chat_id"), "required when token_env or token_file is set")
	case !configured && (t.ChatID != 0 || len(t.AllowedChats) > 0):
		p.bad(k("token_env"), "set token_env or token_file to use Telegram")
	}
	for _, id := range t.AllowedChats {
		if id == 0 {
			p.bad(k("allowed_chats"), "chat ids must not be 0")
		}
	}
	for _, id := range t.AllowedUsers {
		if id <= 0 {
			p.bad(k("allowed_users"), "user ids are positive numbers (got %d); a negative id is a group: put it in allowed_chats", id)
			break
		}
	}
	if len(t.AllowedUsers) > 0 && len(t.AllowedChats) == 0 {
		p.bad(k("allowed_users"), "has no effect without allowed_chats: commands are answered only in allowed chats; add the chats the users write in")
	}
	if u, err := httpURL(t.APIURL); err != nil {
		p.badErr(k("api_url"), err)
	} else {
		t.APIURL = u
	}
	if !slices.Contains(Severities, t.MinSeverity) {
		p.bad(k("min_severity"), "must be info, warning or critical (got %q)", t.MinSeverity)
	}
	if t.QuietHours != "" {
		w, err := schedule.ParseWindow(t.QuietHours)
		if err != nil {
			p.badErr(k("quiet_hours"), err)
		}
		t.Quiet = w
	}
	if !slices.Contains(Severities, t.QuietMinSeverity) {
		p.bad(k("quiet_min_severity"), "must be info, warning or critical (got %q)", t.QuietMinSeverity)
	}
	if t.MaxPerHour < 0 || t.MaxPerHour > MaxMaxPerHour {
		p.bad(k("max_per_hour"), "must be 0 (no cap) to %d (got %d)", MaxMaxPerHour, t.MaxPerHour)
	}
}

func (p *parser) validateHTTP() {
	h := &p.cfg.HTTP
	k := func(key string) []seg { return at("http", -1, key) }
	if strings.ContainsRune(h.PasswordFile, 0) {
		p.bad(k("password_file"), "must be a file path (got %q)", h.PasswordFile)
	}
	if h.Username == "" || strings.ContainsAny(h.Username, ":\x00") {
		p.bad(k("username"), "must be a non-empty name without a colon (got %q)", h.Username)
	}
	for i, name := range h.AllowedHosts {
		if !hostName(name) {
			p.bad(k("allowed_hosts"), "allowed_hosts[%d]: %q is not a host name: give the name alone, as in vigil.lan (no scheme, port, path or wildcard)", i, name)
		}
	}
	if h.Listen == "" {
		return
	}
	host, port, err := net.SplitHostPort(h.Listen)
	if err != nil {
		p.bad(k("listen"), "must be host:port, as in 127.0.0.1:8080 (got %q)", h.Listen)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.bad(k("listen"), "port must be a number from 0 to 65535 (got %q)", port)
		return
	}
	if !LoopbackHost(host) && h.PasswordFile == "" {
		p.bad(k("listen"), "%q is reachable from the network: set http.password_file (basic auth), or listen on 127.0.0.1", h.Listen)
	}
}

// hostName reports whether s is a DNS host name (letters, digits and
// hyphens in dot-separated labels; a final dot allowed), as a browser
// sends it in Host.
func hostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// LoopbackHost reports whether host (from host:port) names only the
// loopback interface: localhost, 127.0.0.0/8 or ::1. An empty host is every
// interface.
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (p *parser) validateManage() {
	seen := map[string]bool{}
	for i, v := range p.cfg.Manage.Remote {
		path := at("manage", -1, "remote")
		if !slices.Contains(RemoteVerbs, v) {
			p.bad(path, "remote[%d]: unknown command %q (known: %s)", i, v, strings.Join(RemoteVerbs, ", "))
		} else if seen[v] {
			p.bad(path, "remote[%d]: %q is listed twice", i, v)
		}
		seen[v] = true
	}
	if n := p.cfg.Manage.ProposalMaxPerDay; n < 1 {
		p.bad(at("manage", -1, "proposal_max_per_day"), "must be at least 1 (got %d)", n)
	}
	first := map[string]int{}
	for i, v := range p.cfg.Manage.Models {
		path := at("manage", -1, "models")
		if err := modelName(v); err != nil {
			p.bad(path, "models[%d]: %v", i, err)
		} else if v == "" {
			p.bad(path, "models[%d]: must not be empty", i)
		} else if j, dup := first[v]; dup {
			p.bad(path, "models[%d]: %q is listed twice (also models[%d])", i, v, j)
		}
		if _, dup := first[v]; !dup {
			first[v] = i
		}
	}
}

// RuleSpec is r for package rule, with the expressions Parse compiled
// (Parse has checked they compile; one it did not see is compiled here).
// The error names the key.
func (c *Config) RuleSpec(r Rule) (*rule.Spec, error) {
	compiled := func(src, key string) (*rule.Expr, error) {
		if e, ok := c.exprs[src]; ok {
			return e, nil
		}
		e, err := rule.Compile(src)
		if err != nil {
			return nil, c.KeyError("rule."+r.Name+"."+key, err)
		}
		return e, nil
	}
	when, err := compiled(r.When, "when")
	if err != nil {
		return nil, err
	}
	spec := &rule.Spec{Name: r.Name, When: when, For: r.For.Duration, Renotify: r.Renotify.Duration}
	if strings.TrimSpace(r.Clear) != "" {
		if spec.Clear, err = compiled(r.Clear, "clear"); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// loadLocation is time.LoadLocation; a test swaps it for a machine with
// no zone database.
var loadLocation = time.LoadLocation

// zoneError says why a zone name did not load. The names come from the
// system's zone database (/usr/share/zoneinfo, the tzdata package, which
// apt keeps current when a country changes its clocks; the .deb depends
// on it), not from a copy compiled into the binary, which would be 400 KB
// that goes stale. On a machine without the database every name but UTC
// fails, and the error says that rather than blaming the name.
func zoneError(name string) string {
	if _, err := loadLocation("Etc/UTC"); err != nil {
		return fmt.Sprintf("time zone %q: this system has no time zone database (/usr/share/zoneinfo): install it (apt install tzdata) or point $ZONEINFO at one, or remove the key for UTC", name)
	}
	return fmt.Sprintf("unknown time zone %q (want an IANA name like \"Europe/Berlin\")", name)
}
