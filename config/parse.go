package config

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"
)

// MaxSize is the largest config file Parse accepts.
const MaxSize = 1 << 20

// Defaults (SPEC §3).
const (
	DefaultStateDir       = "/var/lib/vigil"
	DefaultChecklist      = "/etc/vigil/HEARTBEAT.md"
	DefaultW1Dir          = "/sys/bus/w1/devices"
	DefaultOpenAIURL      = "https://api.openai.com/v1"
	DefaultAnthropicURL   = "https://api.anthropic.com"
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultAnthropicModel = "claude-3-5-haiku-latest"
	DefaultTelegramURL    = "https://api.telegram.org"
	// DefaultMaxPerHour is [telegram] max_per_hour: alert messages an hour
	// before further alerts are folded into a digest; MaxMaxPerHour its bound.
	DefaultMaxPerHour = 20
	MaxMaxPerHour     = 1000
)

// Error is a configuration error naming the key and, when known, its line.
type Error struct {
	File string // as passed to Parse; may be empty
	Key  string // "heartbeat.interval", "sensor.air.address", "rule.too_hot.when"
	Line int    // 1-based, 0 when unknown
	Err  error
}

// Error returns "config.toml:12: heartbeat.interval: must be at least 1m (got "30s")".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors returns the *Error values in err (one, or several joined by Parse).
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		var ce *Error
		if errors.As(err, &ce) && ce == err {
			out = append(out, ce)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if errors.As(err, &ce) {
			out = append(out, ce)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// Parse decodes and validates a config file, applying defaults. name is used
// in error messages only. Errors are *Error (possibly several joined with
// errors.Join, in file order), each naming the key and line.
//
// Parse checks that rules name configured sensors, but not which quantities
// those sensors have: ParseWith does, given the drivers' quantities.
func Parse(r io.Reader, name string) (*Config, error) { return ParseWith(r, name, Options{}) }

// ParseWith is Parse with opts.
func ParseWith(r io.Reader, name string, opts Options) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, &Error{File: name, Err: fmt.Errorf("read: %w", err)}
	}
	if len(data) > MaxSize {
		return nil, &Error{File: name, Err: fmt.Errorf("file is larger than %d KiB", MaxSize>>10)}
	}
	p := &parser{file: name, cfg: defaults(), failed: map[string]bool{}, opts: opts, origins: map[string]Override{}}
	if err := p.decode(string(data)); err != nil {
		return nil, err
	}
	p.cfg.file = name
	p.cfg.lines = p.byKey
	p.addRunRules()
	p.applyOverrides()
	p.cfg.overrides = p.origins
	p.validate()
	p.unusedEnv()
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int { return a.Line - b.Line })
		if len(p.errs) == 1 {
			return nil, p.errs[0]
		}
		errs := make([]error, len(p.errs))
		for i, e := range p.errs {
			errs[i] = e
		}
		return nil, errors.Join(errs...)
	}
	return p.cfg, nil
}

func defaults() *Config {
	return &Config{
		Device: Device{Board: "auto", StateDir: DefaultStateDir, Timezone: "UTC", Location: time.UTC},
		Heartbeat: Heartbeat{
			Enabled:                true,
			Interval:               Duration{30 * time.Minute},
			SampleInterval:         Duration{30 * time.Second},
			SensorsPublishInterval: Duration{5 * time.Minute},
			Checklist:              DefaultChecklist,
			MaxQuiet:               Duration{6 * time.Hour},
			AlertCooldown:          Duration{6 * time.Hour},
			FailureAlertAfter:      3,
			MaxLLMCallsPerDay:      96,
			MaxAlertsPerHour:       30,
			Gate:                   GateDeadband,
			Unusual:                3,
			ModelMay:               []string{"pause", "propose_rule"},
			IntervalMin:            Duration{10 * time.Minute},
			IntervalMax:            Duration{6 * time.Hour},
		},
		LLM: LLM{
			Provider:        "openai",
			Timeout:         Duration{60 * time.Second},
			MaxSteps:        6,
			MaxToolCalls:    12,
			MaxOutputTokens: 1024,
			MaxRetries:      2,
			RetryBackoff:    Duration{time.Second},
		},
		MQTT: MQTT{
			TopicPrefix:     "vigil",
			Keepalive:       Duration{30 * time.Second},
			HomeAssistant:   true,
			DiscoveryPrefix: "homeassistant",
			MinSeverity:     "info",
		},
		Telegram: Telegram{APIURL: DefaultTelegramURL, MinSeverity: "info", QuietMinSeverity: "critical", MaxPerHour: DefaultMaxPerHour},
		HTTP:     HTTP{Username: "vigil"},
		Manage:   Manage{Remote: []string{"status", "pause", "resume", "check", "ack", "rule"}, ProposalMaxPerDay: 3},
	}
}

type parser struct {
	opts   Options
	file   string
	cfg    *Config
	md     toml.MetaData
	keys   []keyPos
	byKey  map[string]int  // indexed key -> line
	failed map[string]bool // indexed keys whose decoding failed
	errs   []*Error

	reported   map[string]bool     // indexed keys reported as unknown
	origins    map[string]Override // display key -> the override that set it
	unknownEnv []Override          // VIGIL_ variables that name no single-value key
	runRules   map[string]bool     // the names of Options.RunRules added to the rules
}

// add records an error at key. A key set by an override is named by the
// override ("$VIGIL_HEARTBEAT_INTERVAL", "set by cli"), not by a line.
func (p *parser) add(line int, key string, err error) {
	if name, _, ok := strings.Cut(strings.TrimPrefix(key, "rule."), "."); ok && strings.HasPrefix(key, "rule.") && p.runRules[name] {
		p.errs = append(p.errs, &Error{File: RunRuleFile, Key: key, Err: err})
		return
	}
	if o, ok := p.origins[key]; ok {
		p.errs = append(p.errs, &Error{File: o.label(), Key: key, Err: err})
		return
	}
	p.errs = append(p.errs, &Error{File: p.file, Key: key, Line: line, Err: err})
}

// defined reports whether the indexed key (sensor[0].gain) is in the file.
func (p *parser) defined(key string) bool {
	_, ok := p.byKey[key]
	return ok
}

func (p *parser) decode(src string) error {
	var raw map[string]toml.Primitive
	md, err := toml.Decode(src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// v1.6.0 gets Line wrong for some errors at the end of the
			// input (0, or one too few); the byte offset is right.
			line := max(pe.Position.Line, 1)
			if s := pe.Position.Start; s > 0 && s <= len(src) {
				line = 1 + strings.Count(src[:s], "\n")
			}
			return &Error{File: p.file, Line: line, Err: fmt.Errorf("invalid TOML: %s", printable(pe.Message))}
		}
		return &Error{File: p.file, Err: fmt.Errorf("invalid TOML: %w", err)}
	}
	p.md = md
	p.keys = locate(src)
	p.byKey = make(map[string]int, len(p.keys))
	for _, k := range p.keys {
		id := indexedKey(k.path)
		if _, dup := p.byKey[id]; !dup {
			p.byKey[id] = k.line
		}
	}
	p.reported = map[string]bool{}

	c := p.cfg
	for _, key := range p.inFileOrder(raw, nil) {
		prim := raw[key]
		switch key {
		case "device":
			p.table(prim, at(key, -1), &c.Device)
		case "heartbeat":
			p.table(prim, at(key, -1), &c.Heartbeat)
		case "llm":
			p.table(prim, at(key, -1), &c.LLM)
		case "mqtt":
			p.table(prim, at(key, -1), &c.MQTT)
		case "telegram":
			p.table(prim, at(key, -1), &c.Telegram)
		case "http":
			p.table(prim, at(key, -1), &c.HTTP)
		case "manage":
			p.table(prim, at(key, -1), &c.Manage)
		case "sensor":
			for i, prim := range p.array(prim, key) {
				c.Sensors = append(c.Sensors, Sensor{
					Timeout: Duration{5 * time.Second},
					Line:    p.line(at(key, i)),
				})
				p.table(prim, at(key, i), &c.Sensors[i])
			}
		case "rule":
			for i, prim := range p.array(prim, key) {
				c.Rules = append(c.Rules, Rule{Severity: "warning", Enabled: true, Line: p.line(at(key, i))})
				p.table(prim, at(key, i), &c.Rules[i])
			}
		default:
			p.unknown(at(key, -1))
		}
	}
	p.undecoded()
	return nil
}

// inFileOrder returns the keys of a table, "name" first (it names sensors
// and rules in errors), then in the order they appear in the file.
func (p *parser) inFileOrder(m map[string]toml.Primitive, prefix []seg) []string {
	keys := sortedKeys(m)
	line := func(k string) int {
		return p.byKey[indexedKey(append(append([]seg(nil), prefix...), seg{name: k, idx: -1}))]
	}
	slices.SortStableFunc(keys, func(a, b string) int {
		if (a == "name") != (b == "name") {
			if a == "name" {
				return -1
			}
			return 1
		}
		return line(a) - line(b)
	})
	return keys
}

// table decodes a TOML table into the struct v key by key, so that every
// type error is reported (in file order) and keys must match exactly.
func (p *parser) table(prim toml.Primitive, prefix []seg, v any) {
	if !p.isTable(prim, prefix) {
		return
	}
	var m map[string]toml.Primitive
	if err := p.md.PrimitiveDecode(prim, &m); err != nil {
		p.typeError(err, prefix, prefix)
		return
	}
	rv := reflect.ValueOf(v).Elem()
	fields := tomlFields(rv.Type())
	for _, key := range p.inFileOrder(m, prefix) {
		path := append(append([]seg(nil), prefix...), seg{name: key, idx: -1})
		i, ok := fields[key]
		if !ok {
			p.unknown(path)
			continue
		}
		if rv.Field(i).Kind() == reflect.Map && !p.isTable(m[key], path) {
			continue // a map-typed key (deadband) given a value
		}
		if err := p.md.PrimitiveDecode(m[key], rv.Field(i).Addr().Interface()); err != nil {
			p.typeError(err, prefix, path)
		}
	}
}

// isTable reports whether prim, the value at path, is a table, and reports
// it as an error when it is not. toml v1.6.0 decodes any value into a map
// without complaint (deadband = "x" into an empty map), so every table and
// every map-typed key passes through here first.
func (p *parser) isTable(prim toml.Primitive, path []seg) bool {
	var data any
	if err := p.md.PrimitiveDecode(prim, &data); err != nil {
		p.typeError(err, path, path)
		return false
	}
	if _, ok := data.(map[string]any); !ok {
		p.add(p.line(path), p.display(path), fmt.Errorf("must be a table (got %s)", tomlTypeName(goTypeName(data))))
		p.failed[indexedKey(path)] = true
		return false
	}
	return true
}

// tomlFields maps the toml tags of a struct type to field indexes.
func tomlFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name != "" && name != "-" {
			fields[name] = i
		}
	}
	return fields
}

// array decodes an array of tables into its elements.
func (p *parser) array(prim toml.Primitive, name string) []toml.Primitive {
	var elems []toml.Primitive
	if err := p.md.PrimitiveDecode(prim, &elems); err != nil {
		path := at(name, -1)
		if p.md.Type(name) == "Hash" {
			p.bad(path, "must be an array of tables: write [[%s]]", name)
		} else {
			p.bad(path, "must be an array of tables ([[%s]])", name)
		}
		p.failed[indexedKey(path)] = true
		return nil
	}
	return elems
}

// typeError turns a decoding error inside the table at prefix into an *Error
// naming the key and its line. Validation then skips the key at field.
func (p *parser) typeError(err error, prefix, field []seg) {
	p.failed[indexedKey(field)] = true
	var lastKey, msg string
	var pe toml.ParseError
	if errors.As(err, &pe) {
		lastKey, msg = pe.LastKey, pe.Message
	} else if quoted, m, ok := lastKeyError(err.Error()); ok { // no typed error: BurntSushi/toml reports a type mismatch and its key only as text
		lastKey, _ = strconv.Unquote(quoted)
		msg = m
	} else {
		msg = strings.TrimPrefix(err.Error(), "toml: ")
	}
	path := append([]seg(nil), prefix...)
	if parts := splitKey(lastKey); len(parts) > len(prefix) {
		for _, s := range parts[len(prefix):] {
			path = append(path, seg{name: s, idx: -1})
		}
	}
	p.add(p.line(path), p.display(path), errors.New(typeMessage(msg)))
}

// typeMessage rewrites the decoder's Go-flavoured messages for users.
func typeMessage(msg string) string {
	if have, want, ok := badTypeMessage(msg); ok {
		return fmt.Sprintf("must be %s (got %s)", tomlTypeName(want), tomlTypeName(have))
	}
	if found, ok := mismatchMessage(msg); ok {
		return fmt.Sprintf("must be a table (got %s)", tomlTypeName(found))
	}
	return msg
}

// printable escapes control characters in a decoder message.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) || r == ' ' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "%U", r)
		}
	}
	return b.String()
}

func goTypeName(v any) string {
	return strings.ReplaceAll(fmt.Sprintf("%T", v), "interface {}", "any")
}

func tomlTypeName(goType string) string {
	switch goType {
	case "string", "primitive (string-like)":
		return "a string"
	case "int64", "integer":
		return "an integer"
	case "float64", "float":
		return "a float"
	case "bool", "boolean":
		return "a boolean"
	case "map[string]any", "map", "struct":
		return "a table"
	case "time.Time", "toml.LocalDate", "toml.LocalTime", "toml.LocalDatetime":
		return "a date-time"
	}
	if strings.HasPrefix(goType, "[]") || goType == "slice" {
		return "an array"
	}
	return goType
}

// splitKey splits a toml.Key.String() form back into its segments.
func splitKey(k string) []string {
	var out []string
	for k != "" {
		if k[0] == '"' {
			end := 1
			for end < len(k) && k[end] != '"' {
				if k[end] == '\\' {
					end++
				}
				end++
			}
			s, err := strconv.Unquote(k[:min(end+1, len(k))])
			if err != nil {
				s = k[1:min(end, len(k))]
			}
			out = append(out, s)
			k = k[min(end+1, len(k)):]
		} else {
			i := strings.IndexByte(k, '.')
			if i < 0 {
				i = len(k)
			}
			out = append(out, k[:i])
			k = k[i:]
		}
		k = strings.TrimPrefix(k, ".")
	}
	return out
}

// secretKeys are names that look like a secret written into the file, and
// the stem of the keys to use instead.
var secretKeys = map[string]string{
	"api_key": "api_key", "apikey": "api_key",
	"password": "password", "passwd": "password",
	"token": "token", "bot_token": "token",
}

// unknown reports a key the config does not have.
func (p *parser) unknown(path []seg) {
	id := indexedKey(path)
	if p.reported[id] || p.underFailed(path) {
		return
	}
	for i := 1; i < len(path); i++ {
		if p.reported[indexedKey(path[:i])] {
			return
		}
	}
	p.reported[id] = true
	line, ok := p.byKey[id]
	if !ok { // a.b = 1 defines a.b but locate records only the full key
		line = p.line(path)
		for _, kp := range p.keys {
			if len(kp.path) > len(path) && indexedKey(kp.path[:len(path)]) == id {
				line = kp.line
				break
			}
		}
	}
	err := errors.New("unknown key")
	if stem, ok := secretKeys[path[len(path)-1].name]; ok {
		err = fmt.Errorf("unknown key: secrets never go in the file; use %s_env or %s_file", stem, stem)
	} else if near := closest(path[len(path)-1].name, keysIn(path[:len(path)-1])); near != "" {
		err = fmt.Errorf("unknown key (did you mean %s?)", near) // as for a misspelt VIGIL_ variable
	}
	p.add(line, p.display(path), err)
}

// keysIn lists the keys the table at path may hold (the top level for an
// empty path), or none when path leads to no table of Config.
func keysIn(path []seg) []string {
	t := reflect.TypeOf(Config{})
	for _, s := range path {
		i, ok := tomlFields(t)[s.name]
		if !ok {
			return nil
		}
		t = t.Field(i).Type
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
	}
	return slices.Sorted(maps.Keys(tomlFields(t)))
}

// undecoded reports keys the decoder left alone (inside unknown tables), at
// each place they occur. Keys inside a value a type decodes itself
// (Channels' inline tables) are that type's to check.
func (p *parser) undecoded() {
	for _, k := range p.md.Undecoded() {
		plain := k.String()
		if strings.HasPrefix(plain, "sensor.channels.") {
			continue
		}
		for _, kp := range p.keys {
			if kp.plain() == plain {
				p.unknown(kp.path)
			}
		}
	}
}

func (p *parser) underFailed(path []seg) bool {
	for i := 1; i <= len(path); i++ {
		if p.failed[indexedKey(path[:i])] {
			return true
		}
	}
	return false
}

// display names a key for users: sensors and rules by their name when it is
// valid ("sensor.air.address"), otherwise by index ("sensor[1].address").
func (p *parser) display(path []seg) string {
	if len(path) == 0 {
		return ""
	}
	head := indexedKey(path[:1])
	if s := path[0]; s.idx >= 0 {
		switch {
		case s.name == "sensor" && s.idx < len(p.cfg.Sensors) && validSensorName(p.cfg.Sensors[s.idx].Name):
			head = "sensor." + p.cfg.Sensors[s.idx].Name
		case s.name == "rule" && s.idx < len(p.cfg.Rules) && validRuleName(p.cfg.Rules[s.idx].Name):
			head = "rule." + p.cfg.Rules[s.idx].Name
		}
	}
	if len(path) == 1 {
		return head
	}
	return head + "." + indexedKey(path[1:])
}

// RunRuleFile names a run-time rule in an error, where a file's rule has
// its file and line.
const RunRuleFile = "run-time rule"

// addRunRules appends Options.RunRules to the file's rules, which win a
// clash of names.
func (p *parser) addRunRules() {
	p.runRules = map[string]bool{}
	for _, r := range p.opts.RunRules {
		if slices.ContainsFunc(p.cfg.Rules, func(f Rule) bool { return f.Name == r.Name && f.Origin == "" }) {
			p.cfg.Shadowed = append(p.cfg.Shadowed, r.Name)
			continue
		}
		r.Line = 0
		p.runRules[r.Name] = true
		p.cfg.Rules = append(p.cfg.Rules, r)
	}
}
