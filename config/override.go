package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Override is one value set outside config.toml: an environment variable
// (VIGIL_<SECTION>_<KEY>) or the run-time overlay kept in the state file
// (`vigil set`). Overrides are applied after the file's values and then
// validated exactly as the file is, with the same messages; an error names
// the override instead of a line.
type Override struct {
	Key    string    // "heartbeat.interval", "rule.too_hot.enabled"
	Value  string    // as a person types it: "10m", "false", "gpt-4o", "07:00-22:00"
	Origin string    // OriginEnv or OriginSet
	Env    string    // OriginEnv: the variable, "VIGIL_HEARTBEAT_INTERVAL"
	By     string    // OriginSet: who set it: "cli", "telegram chat 1 user 2", "model"
	At     time.Time // OriginSet: when
}

// Override origins.
const (
	OriginEnv = "env"
	OriginSet = "set"
)

// label names the override in an error: "$VIGIL_HEARTBEAT_INTERVAL",
// "set by telegram chat 1 user 2".
func (o Override) label() string {
	if o.Origin == OriginEnv {
		return "$" + o.Env
	}
	if o.By == "" {
		return "set"
	}
	return "set by " + o.By
}

// Origin says where a key's effective value comes from.
type Origin struct {
	Kind string    // "file", "env", "set" or "default"
	File string    // file: the config file
	Line int       // file: its line
	Env  string    // env: the variable
	By   string    // set: who
	At   time.Time // set: when
}

// String is the origin as `vigil get` and `vigil config check` show it:
// "config.toml:12", "env", "set 2026-11-26 15:02:03 +01:00 by cli" (in
// the time's own location) or "default".
func (o Origin) String() string {
	switch o.Kind {
	case "file":
		if o.Line > 0 {
			return o.File + ":" + strconv.Itoa(o.Line)
		}
		return o.File
	case OriginEnv:
		return "env"
	case "rule": // a run-time rule's key: By is its origin
		return o.By
	case OriginSet:
		s := "set"
		if !o.At.IsZero() {
			s += " " + o.At.Format("2006-01-02 15:04:05 -07:00")
		}
		if o.By != "" {
			s += " by " + o.By
		}
		return s
	}
	return "default"
}

// envSections are the tables whose scalar keys VIGIL_<SECTION>_<KEY> sets.
var envSections = []string{"device", "heartbeat", "llm", "mqtt", "telegram", "http", "manage"}

// fileOnly are the arrays of tables no variable can set.
var fileOnly = []string{"sensor", "rule"}

// EnvOverrides returns the VIGIL_ variables of environ (os.Environ's form)
// that are meant as settings, sorted by name: VIGIL_<SECTION>_<KEY> for
// every table ([device], [heartbeat], [llm], [mqtt], [telegram], [http],
// [manage], and [[sensor]] and [[rule]], which no variable may set), e.g.
// VIGIL_HEARTBEAT_INTERVAL=10m, and any other VIGIL_ variable within two
// edits of a real one (VIGIL_HEARTBAET_INTERVAL, VIGIL_HEARTBEATINTERVAL,
// with no Key).
//
// ParseWith applies those that name a single-value key. One that a *_env
// key names (token_env = "VIGIL_TELEGRAM_TOKEN") is a secret, not a
// setting, and is dropped; every other is a config error naming the
// variable and the nearest real one. Other VIGIL_ variables (VIGIL_CONFIG,
// VIGIL_NO_TRIM, a secret such as VIGIL_TEST_KEY) are left alone.
func EnvOverrides(environ []string) []Override {
	var out []Override
	names := envNames()
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		rest, vigil := strings.CutPrefix(name, "VIGIL_")
		if !ok || !vigil {
			continue
		}
		rest = strings.ToLower(rest)
		sec, key, shaped := strings.Cut(rest, "_")
		switch {
		case shaped && (slices.Contains(envSections, sec) || slices.Contains(fileOnly, sec)):
			out = append(out, Override{Key: sec + "." + key, Value: value, Origin: OriginEnv, Env: name})
		case shaped && closest(strings.ToUpper(name), names) != "",
			!shaped && withinTwoEdits(strings.ToUpper(name), names):
			// Without a _ after the section (VIGIL_HEARTBEATINTERVAL)
			// only a slip of two letters counts: VIGIL_DEV is no
			// abbreviation of VIGIL_DEVICE_ID but a variable of its own.
			out = append(out, Override{Value: value, Origin: OriginEnv, Env: name})
		}
	}
	slices.SortFunc(out, func(a, b Override) int { return strings.Compare(a.Env, b.Env) })
	return out
}

// withinTwoEdits reports whether name is at most two letters from one of
// names.
func withinTwoEdits(name string, names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return editDistance(name, n) <= 2 })
}

// envNames lists the variables that set a key: VIGIL_DEVICE_ID, ...
func envNames() []string {
	var names []string
	root := reflect.ValueOf(defaults()).Elem()
	for _, sec := range envSections {
		s, _ := structField(root, sec)
		for i := range s.NumField() {
			key, _, _ := strings.Cut(s.Type().Field(i).Tag.Get("toml"), ",")
			if key != "" && key != "-" && scalar(s.Field(i)) {
				names = append(names, "VIGIL_"+strings.ToUpper(sec+"_"+key))
			}
		}
	}
	return names
}

// envSecrets lists the variables the *_env keys of c name (api_key_env,
// password_env, token_env): secrets, not settings.
func (c *Config) envSecrets() []string {
	var names []string
	for _, k := range c.secretKeys() {
		if k.env != "" {
			names = append(names, k.env)
		}
	}
	return names
}

// notASetting says why the variable of o, which names no single-value key,
// is refused, and what was probably meant.
func notASetting(o Override) error {
	sec, key, _ := strings.Cut(o.Key, ".")
	if slices.Contains(fileOnly, sec) {
		return fmt.Errorf("[[%s]] tables are set in the config file only", sec)
	}
	root := reflect.ValueOf(defaults()).Elem()
	if _, ok := sectionField(root, sec, key); ok {
		return errors.New("not a single value: set it in the config file")
	}
	if stem, ok := secretKeys[key]; ok {
		if _, ok := sectionField(root, sec, stem+"_env"); ok {
			return fmt.Errorf("a secret is not a setting: name the variable in the config, as in %s_env = %q", stem, o.Env)
		}
		if _, ok := sectionField(root, sec, stem+"_file"); ok {
			return fmt.Errorf("a secret is not a setting: put it in a file named by %s.%s_file", sec, stem)
		}
	}
	what := "unknown key"
	if o.Key == "" {
		what = "unknown setting"
	}
	if near := closest(strings.ToUpper(o.Env), envNames()); near != "" {
		return fmt.Errorf("%s (did you mean %s?)", what, near)
	}
	if s, ok := structField(root, sec); ok {
		for i := range s.NumField() {
			if k, _, _ := strings.Cut(s.Type().Field(i).Tag.Get("toml"), ","); strings.HasSuffix(k, "_env") {
				return fmt.Errorf("%s; a variable that holds a secret must be named by %s.%s", what, sec, k)
			}
		}
	}
	return errors.New(what)
}

// settable are the [section] keys the run-time overlay may change; every
// rule's "enabled" may be changed too (rule.<name>.enabled).
var settable = []string{
	"heartbeat.enabled", "heartbeat.interval", "heartbeat.active_hours", "heartbeat.max_quiet",
	"heartbeat.alert_cooldown", "heartbeat.max_llm_calls_per_day",
	"llm.model", "llm.scout_model",
}

// SettableKeys lists the keys `vigil set` may change in c: the fixed ones,
// then rule.<name>.enabled for each rule in file order.
func (c *Config) SettableKeys() []string {
	keys := slices.Clone(settable)
	for _, r := range c.Rules {
		keys = append(keys, "rule."+r.Name+".enabled")
	}
	return keys
}

// CheckSettable reports whether key may be set at run time in c; the error
// (an *Error naming key) lists the keys that may.
func CheckSettable(key string, c *Config) error {
	keys := c.SettableKeys()
	if slices.Contains(keys, key) {
		return nil
	}
	if name, ok := ruleEnabledKey(key); ok {
		var names []string
		for _, r := range c.Rules {
			names = append(names, r.Name)
		}
		if len(names) == 0 {
			return &Error{Key: key, Err: fmt.Errorf("no rule %q: the config has no rules", name)}
		}
		return &Error{Key: key, Err: fmt.Errorf("no rule %q (rules: %s)", name, strings.Join(names, ", "))}
	}
	if near := closest(key, keys); near != "" {
		return &Error{Key: key, Err: fmt.Errorf("cannot be set at run time (did you mean %s?)", near)}
	}
	return &Error{Key: key, Err: fmt.Errorf("cannot be set at run time; settable keys: %s", strings.Join(append(slices.Clone(settable), "rule.<name>.enabled"), ", "))}
}

func ruleEnabledKey(key string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(key, "rule.")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, ".enabled")
}

// Get returns the effective value of a scalar key as text, the way `vigil
// set` takes it: "10m", "true", "07:00-22:00", "96".
func (c *Config) Get(key string) (string, error) {
	f, _, err := c.field(key)
	if err != nil {
		return "", err
	}
	return formatValue(f), nil
}

// Origin says where key's effective value comes from.
func (c *Config) Origin(key string) Origin {
	if o, ok := c.overrides[key]; ok {
		if o.Origin == OriginEnv {
			return Origin{Kind: OriginEnv, Env: o.Env}
		}
		at := o.At
		if !at.IsZero() && c.Device.Location != nil {
			at = at.In(c.Device.Location)
		}
		return Origin{Kind: OriginSet, By: o.By, At: at}
	}
	if name, ok := ruleEnabledKey(key); ok {
		if i := slices.IndexFunc(c.Rules, func(r Rule) bool { return r.Name == name }); i >= 0 && c.Rules[i].Origin != "" {
			return Origin{Kind: "rule", By: c.Rules[i].Origin}
		}
	}
	if _, path, err := c.field(key); err == nil {
		if l, ok := c.lines[indexedKey(path)]; ok {
			return Origin{Kind: "file", File: c.file, Line: l}
		}
	}
	return Origin{Kind: "default"}
}

// given reports whether key ("heartbeat.max_quiet") is set in the file or
// by an override, not left at its default.
func (c *Config) given(key string) bool {
	_, over := c.overrides[key]
	_, inFile := c.lines[key]
	return over || inFile
}

// Overridden lists the keys whose value comes from an override, sorted.
func (c *Config) Overridden() []string {
	return sortedKeys(c.overrides)
}

// field finds the struct field for key: "heartbeat.interval" or
// "rule.<name>.<key>".
func (c *Config) field(key string) (reflect.Value, []seg, error) {
	root := reflect.ValueOf(c).Elem()
	parts := strings.Split(key, ".")
	switch {
	case len(parts) == 3 && parts[0] == "rule":
		for i := range c.Rules {
			if c.Rules[i].Name == parts[1] {
				f, ok := structField(reflect.ValueOf(&c.Rules[i]).Elem(), parts[2])
				if !ok || !scalar(f) {
					return reflect.Value{}, nil, fmt.Errorf("%s: unknown key", key)
				}
				return f, at("rule", i, parts[2]), nil
			}
		}
		return reflect.Value{}, nil, fmt.Errorf("%s: no rule %q", key, parts[1])
	case len(parts) == 2 && slices.Contains(envSections, parts[0]):
		f, ok := sectionField(root, parts[0], parts[1])
		if !ok || !scalar(f) {
			return reflect.Value{}, nil, fmt.Errorf("%s: unknown key", key)
		}
		return f, at(parts[0], -1, parts[1]), nil
	}
	return reflect.Value{}, nil, fmt.Errorf("%s: unknown key (want section.key, e.g. heartbeat.interval)", key)
}

// sectionField finds [sec] key in the Config value root.
func sectionField(root reflect.Value, sec, key string) (reflect.Value, bool) {
	s, ok := structField(root, sec)
	if !ok || s.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	return structField(s, key)
}

func structField(v reflect.Value, tag string) (reflect.Value, bool) {
	i, ok := tomlFields(v.Type())[tag]
	if !ok {
		return reflect.Value{}, false
	}
	return v.Field(i), true
}

var durationType = reflect.TypeOf(Duration{})

// scalar reports whether f holds one value a person can type.
func scalar(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	}
	return f.Type() == durationType
}

func formatValue(f reflect.Value) string {
	switch x := f.Interface().(type) {
	case Duration:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(f.Interface())
}

// setValue parses text into f as the file's decoder would, with the
// validator's wording for a value of the wrong type.
func setValue(f reflect.Value, text string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(text)
		return nil
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("must be true or false (got %q)", text)
		}
		f.SetBool(b)
		return nil
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 0, 64)
		if err != nil || f.OverflowInt(n) { // an int is 32 bits on 32-bit arm: 4294967297 is not 1
			return fmt.Errorf("must be an integer (got %q)", text)
		}
		f.SetInt(n)
		return nil
	case reflect.Float64:
		x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return fmt.Errorf("must be a number (got %q)", text)
		}
		f.SetFloat(x)
		return nil
	}
	if f.Type() == durationType {
		var d Duration
		if err := d.UnmarshalText([]byte(strings.TrimSpace(text))); err != nil {
			return err
		}
		f.Set(reflect.ValueOf(d))
		return nil
	}
	return errors.New("not a single value")
}

// applyOverrides sets each override's value over the file's, in order (a
// later override of the same key wins), remembering where each came from
// so that validation errors and Origin name it.
func (p *parser) applyOverrides() {
	for _, o := range p.opts.Overrides {
		f, path, err := p.cfg.field(o.Key)
		if err != nil && o.Origin == OriginEnv {
			p.unknownEnv = append(p.unknownEnv, o) // a secret's, or a mistake: see unusedEnv
			continue
		}
		if err != nil {
			p.errs = append(p.errs, &Error{File: o.label(), Err: err})
			continue
		}
		p.origins[o.Key] = o
		id := indexedKey(path)
		if err := setValue(f, o.Value); err != nil {
			p.add(0, o.Key, err)
			p.failed[id] = true
		}
	}
}

// isDefined reports whether the file or an override sets [sec] key.
func (p *parser) isDefined(sec, key string) bool {
	_, over := p.origins[sec+"."+key]
	return over || p.md.IsDefined(sec, key)
}

// unusedEnv refuses each VIGIL_ variable that sets nothing, unless a *_env
// key names it (after every override: VIGIL_LLM_API_KEY_ENV may name one).
func (p *parser) unusedEnv() {
	secrets := p.cfg.envSecrets()
	for _, o := range p.unknownEnv {
		if !slices.Contains(secrets, o.Env) {
			p.errs = append(p.errs, &Error{File: o.label(), Key: o.Key, Err: notASetting(o)})
		}
	}
}
