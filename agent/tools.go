package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/redact"
)

// Tool names (SPEC §4). All tools are read-only; pause_heartbeats and
// heartbeat_respond end the run.
const (
	ToolListSensors   = "list_sensors"
	ToolReadSensor    = "read_sensor"
	ToolSensorHistory = "sensor_history"
	ToolSystemStatus  = "system_status"
	ToolPause         = "pause_heartbeats"
	ToolSetInterval   = "set_interval"
	ToolRemember      = "remember"
	ToolProposeRule   = "propose_rule"
	ToolRespond       = "heartbeat_respond"
)

// MaxNoteLen is the longest note remember accepts, in characters.
const MaxNoteLen = redact.CutNote

// Limits on what the tools accept and return.
const (
	summaryMax       = redact.CutSummary // characters of a decision's summary
	historyPoints    = 60                // points sensor_history returns at most
	historyDefault   = time.Hour
	historyMax       = 24 * time.Hour
	pauseDefault     = 2 // minutes
	pauseMin         = 1
	pauseMax         = 60
	toolOutputMax    = 4000 // bytes of one tool result
	defaultPauseText = "heartbeats paused by the model"
)

const emptySchema = `{"type":"object","properties":{}}`

// allTools is the main model's tools with the default heartbeat.model_may.
func allTools() []toolDef { return mainTools(Config{ModelMay: []string{MayPause}}) }

// mainTools returns the main model's tools: the read-only ones, those
// cfg.ModelMay allows, and heartbeat_respond last.
func mainTools(cfg Config) []toolDef {
	may := func(what string) bool { return slices.Contains(cfg.ModelMay, what) }
	tools := []toolDef{
		{ToolListSensors, "List sensors with their quantities, units and errors.", emptySchema},
		{ToolReadSensor, "Current readings of one sensor.",
			`{"type":"object","properties":{"name":{"type":"string","description":"sensor, e.g. air"}},"required":["name"]}`},
		{ToolSensorHistory, "Recent values of one reading, at most 60 points.",
			`{"type":"object","properties":{"name":{"type":"string"},"quantity":{"type":"string","description":"e.g. temperature"},"window":{"type":"string","description":"Go duration, default 1h, max 24h"}},"required":["name","quantity"]}`},
		{ToolSystemStatus, "Board health and vigil's own state.", emptySchema},
	}
	if may(MayPause) {
		tools = append(tools, toolDef{ToolPause, "Pause heartbeats for some minutes and end this heartbeat.",
			`{"type":"object","properties":{"minutes":{"type":"integer","minimum":1,"maximum":60,"default":2}}}`})
	}
	if may(MayInterval) {
		lo, hi := age(cfg.IntervalMin), age(cfg.IntervalMax)
		tools = append(tools, toolDef{ToolSetInterval, fmt.Sprintf("Set the time between heartbeats, %s to %s.", lo, hi),
			fmt.Sprintf(`{"type":"object","properties":{"interval":{"type":"string","description":"Go duration, %s..%s"}},"required":["interval"]}`, lo, hi)})
	}
	if may(MayNotes) {
		tools = append(tools, toolDef{ToolRemember, fmt.Sprintf("Keep a note for later heartbeats (max %d characters, no secrets).", MaxNoteLen),
			`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`})
	}
	if _, ok := cfg.Self.(Proposer); ok && may(MayRules) {
		tools = append(tools, toolDef{ToolProposeRule, "Propose a local rule when one could have caught what you saw; a person approves it, then it runs offline without you.",
			`{"type":"object","properties":{"name":{"type":"string","description":"[a-z0-9_]"},"when":{"type":"string","description":"rule expression, e.g. air.temperature > 34"},"clear":{"type":"string"},"for":{"type":"string","description":"Go duration"},"severity":{"type":"string","enum":["info","warning","critical"]},"message":{"type":"string"},"why":{"type":"string","description":"one sentence for the person"}},"required":["name","when","severity","message","why"]}`})
	}
	return append(tools, respondTool(false))
}

func respondTool(scout bool) toolDef {
	if scout {
		return toolDef{ToolRespond, "End the heartbeat: ok, alert (with severity and summary), or escalate (with reason) to a stronger model.",
			`{"type":"object","properties":{"outcome":{"type":"string","enum":["ok","alert","escalate"]},"severity":{"type":"string","enum":["info","warning","critical"]},"summary":{"type":"string"},"reason":{"type":"string"}},"required":["outcome"]}`}
	}
	return toolDef{ToolRespond, "End the heartbeat: ok, or alert with severity and a one-line summary.",
		`{"type":"object","properties":{"outcome":{"type":"string","enum":["ok","alert"]},"severity":{"type":"string","enum":["info","warning","critical"]},"summary":{"type":"string"}},"required":["outcome"]}`}
}

// exec runs one tool call. A non-nil Decision ends the run.
func (r *run) exec(ctx context.Context, name, args string) (toolResult, *Decision) {
	if r.scout && name != ToolRespond {
		return toolErr("unknown tool %q: only %s is available", r.a.red.Clip(name, redact.CutName), ToolRespond), nil
	}
	switch name {
	case ToolListSensors:
		return toolJSON(listSensors(r.in.Snapshot)), nil
	case ToolReadSensor:
		var a struct {
			Name string `json:"name"`
		}
		if err := r.decodeArgs(args, &a); err != nil {
			return toolErr("%v", err), nil
		}
		v, err := readSensor(r.in, a.Name, r.a.red)
		if err != nil {
			return toolErr("%v", err), nil
		}
		return toolJSON(v), nil
	case ToolSensorHistory:
		var a struct {
			Name     string `json:"name"`
			Quantity string `json:"quantity"`
			Window   string `json:"window"`
		}
		if err := r.decodeArgs(args, &a); err != nil {
			return toolErr("%v", err), nil
		}
		v, err := sensorHistory(ctx, r.in, a.Name, a.Quantity, a.Window, r.a.red)
		if err != nil {
			return toolErr("%v", err), nil
		}
		return toolJSON(v), nil
	case ToolSystemStatus:
		if r.in.Facts == nil {
			return toolErr("system status is not available"), nil
		}
		st, err := r.in.Facts.SystemStatus(ctx)
		if err != nil {
			return toolErr("system status: %v", err), nil
		}
		return toolJSON(st), nil
	case ToolPause:
		if !r.offered(name) {
			break
		}
		var a struct {
			Minutes *float64 `json:"minutes"`
		}
		if err := r.decodeArgs(args, &a); err != nil {
			return toolErr("%v", err), nil
		}
		m := pauseDefault
		if a.Minutes != nil {
			m = int(math.Max(pauseMin, math.Min(pauseMax, math.Round(*a.Minutes))))
		}
		return toolResult{}, &Decision{Outcome: OutcomePaused, Pause: time.Duration(m) * time.Minute,
			Summary: fmt.Sprintf("%s for %d minutes", defaultPauseText, m)}
	case ToolSetInterval:
		if r.offered(name) {
			return r.setInterval(ctx, args), nil
		}
	case ToolRemember:
		if r.offered(name) {
			return r.remember(ctx, args), nil
		}
	case ToolProposeRule:
		if r.offered(name) {
			return r.proposeRule(ctx, args), nil
		}
	case ToolRespond:
		return r.respond(args)
	}
	names := make([]string, 0, len(r.a.tools))
	for _, t := range r.a.tools {
		names = append(names, t.name)
	}
	return toolErr("unknown tool %q: available: %s", r.a.red.Clip(name, redact.CutName), strings.Join(names, ", ")), nil
}

// Aliases of "ok" that small (scout) models answer with; accepted so such
// an answer costs no second call.
const (
	outcomeNoop = "noop"
	outcomeDone = "done"
)

// offered reports whether the main model was given tool name (ModelMay).
func (r *run) offered(name string) bool {
	return slices.ContainsFunc(r.a.tools, func(t toolDef) bool { return t.name == name })
}

// setInterval checks the interval against the bounds and asks Self to
// apply it; out of bounds nothing is changed.
func (r *run) setInterval(ctx context.Context, args string) toolResult {
	var a struct {
		Interval string `json:"interval"`
	}
	if err := r.decodeArgs(args, &a); err != nil {
		return toolErr("%v", err)
	}
	s := strings.TrimSpace(a.Interval)
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return toolErr("interval %q: want a Go duration like 15m or 2h", r.a.red.Clip(s, redact.CutValue))
	}
	lo, hi := r.a.cfg.IntervalMin, r.a.cfg.IntervalMax
	if d < lo || d > hi {
		return toolErr("interval %s is outside the allowed %s to %s (heartbeat.interval_min, interval_max); nothing changed", r.a.red.Clip(s, redact.CutValue), age(lo), age(hi))
	}
	if r.a.cfg.Self == nil {
		return toolErr("setting the interval is not available")
	}
	msg, err := r.a.cfg.Self.SetInterval(ctx, d)
	if err != nil {
		return toolErr("set interval %s: %v", age(d), err)
	}
	if msg == "" {
		msg = "interval set to " + age(d)
	}
	return toolResult{content: r.a.redact(msg)}
}

// remember checks a note (not empty, at most MaxNoteLen characters),
// redacts it and asks Self to keep it.
func (r *run) remember(ctx context.Context, args string) toolResult {
	var a struct {
		Note string `json:"note"`
	}
	if err := r.decodeArgs(args, &a); err != nil {
		return toolErr("%v", err)
	}
	note := strings.TrimSpace(strings.ToValidUTF8(a.Note, "\uFFFD"))
	n := utf8.RuneCountInString(note)
	switch {
	case n == 0:
		return toolErr("note is empty; nothing kept")
	case n > MaxNoteLen:
		return toolErr("note has %d characters, more than the %d allowed; nothing kept: shorten it", n, MaxNoteLen)
	}
	if r.a.cfg.Self == nil {
		return toolErr("notes are not available")
	}
	msg, err := r.a.cfg.Self.Remember(ctx, r.a.red.Clip(note, MaxNoteLen))
	if err != nil {
		return toolErr("remember: %v", err)
	}
	if msg == "" {
		msg = "noted"
	}
	return toolResult{content: msg}
}

func (r *run) respond(args string) (toolResult, *Decision) {
	var a struct {
		Outcome  string `json:"outcome"`
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Reason   string `json:"reason"`
	}
	if err := r.decodeArgs(args, &a); err != nil {
		return toolErr("%v", err), nil
	}
	summary := r.a.red.Clip(strings.TrimSpace(a.Summary), summaryMax)
	switch strings.ToLower(strings.TrimSpace(a.Outcome)) {
	case OutcomeOK, outcomeNoop, outcomeDone: // small models say noop or done for ok
		return toolResult{}, &Decision{Outcome: OutcomeOK, Summary: summary}
	case OutcomeAlert:
		sev, err := alert.ParseSeverity(strings.ToLower(strings.TrimSpace(a.Severity)))
		if err != nil {
			sev = alert.Warning
		}
		if summary == "" {
			summary = "the model raised an alert without a summary"
		}
		return toolResult{}, &Decision{Outcome: OutcomeAlert, Severity: sev, Summary: summary}
	case outcomeEscalate:
		if r.scout {
			reason := r.a.red.Clip(strings.TrimSpace(a.Reason), summaryMax)
			if reason == "" {
				reason = summary
			}
			if reason == "" {
				reason = "no reason given"
			}
			return toolResult{}, &Decision{Outcome: outcomeEscalate, Summary: reason}
		}
	}
	if r.scout {
		return toolErr(`outcome must be "ok", "alert" or "escalate", got %q`, a.Outcome), nil
	}
	return toolErr(`outcome must be "ok" or "alert", got %q`, a.Outcome), nil
}

// decodeArgs decodes tool arguments into v. Empty arguments are an empty
// object; a JSON string holding the object (double encoding) is accepted.
func (r *run) decodeArgs(s string, v any) error {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		s = "{}"
	}
	var inner string
	if json.Unmarshal([]byte(s), &inner) == nil {
		s = strings.TrimSpace(inner)
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("invalid arguments %s: %v", r.a.red.Clip(s, redact.CutArgs), err)
	}
	return nil
}

func toolErr(format string, args ...any) toolResult {
	return toolResult{content: "error: " + clipBytes(strings.ToValidUTF8(fmt.Sprintf(format, args...), "\uFFFD"), toolOutputMax), isError: true}
}

func toolJSON(v any) toolResult {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return toolErr("encode result: %v", err)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if len(s) > toolOutputMax {
		s = clipBytes(s, toolOutputMax) + "…(truncated)"
	}
	return toolResult{content: s}
}

type sensorInfo struct {
	Name       string            `json:"name"`
	Quantities map[string]string `json:"quantities,omitempty"` // quantity -> unit
	Error      string            `json:"error,omitempty"`
}

func listSensors(s device.Snapshot) map[string][]sensorInfo {
	byName := map[string]*sensorInfo{}
	get := func(name string) *sensorInfo {
		if byName[name] == nil {
			byName[name] = &sensorInfo{Name: name}
		}
		return byName[name]
	}
	for key, v := range s.Readings {
		name, q := device.SplitKey(key)
		si := get(name)
		if si.Quantities == nil {
			si.Quantities = map[string]string{}
		}
		si.Quantities[q] = string(v.Unit)
	}
	for name, e := range s.Errors {
		get(name).Error = e
	}
	out := make([]sensorInfo, 0, len(byName))
	for _, si := range byName {
		out = append(out, *si)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return map[string][]sensorInfo{"sensors": out}
}

type sensorReading struct {
	Name         string                  `json:"name"`
	Time         string                  `json:"time,omitempty"`
	Readings     map[string]device.Value `json:"readings,omitempty"`
	Error        string                  `json:"error,omitempty"`
	LastGoodRead string                  `json:"last_good_read,omitempty"`
}

func readSensor(in Input, name string, red *redact.Redactor) (sensorReading, error) {
	name = strings.TrimSpace(name)
	sensor, qty := device.SplitKey(name)
	out := sensorReading{Name: sensor, Readings: map[string]device.Value{}}
	for key, v := range in.Snapshot.Readings {
		s, q := device.SplitKey(key)
		if s == sensor && (qty == "" || q == qty) {
			out.Readings[q] = v
		}
	}
	out.Error = in.Snapshot.Errors[sensor]
	if len(out.Readings) == 0 && out.Error == "" {
		return out, fmt.Errorf("unknown sensor %q: sensors: %s", red.Clip(name, redact.CutName), strings.Join(sensorNames(in.Snapshot), ", "))
	}
	if !in.Snapshot.Time.IsZero() {
		out.Time = in.Snapshot.Time.In(location(in)).Format(time.RFC3339)
	}
	if d, ok := in.Stale[sensor]; ok && d > 0 {
		out.LastGoodRead = age(d) + " ago"
	}
	return out, nil
}

func sensorNames(s device.Snapshot) []string {
	seen := map[string]bool{}
	for key := range s.Readings {
		n, _ := device.SplitKey(key)
		seen[n] = true
	}
	for n := range s.Errors {
		seen[n] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type history struct {
	Key    string   `json:"key"`
	Unit   string   `json:"unit,omitempty"`
	Window string   `json:"window"`
	Note   string   `json:"note,omitempty"`
	Count  int      `json:"count"`
	From   string   `json:"from,omitempty"`
	To     string   `json:"to,omitempty"`
	Min    *Point   `json:"min,omitempty"`
	Max    *Point   `json:"max,omitempty"`
	Points [][2]any `json:"points"` // ["15:04", value], oldest first
}

func sensorHistory(ctx context.Context, in Input, name, quantity, window string, red *redact.Redactor) (history, error) {
	name, quantity = strings.TrimSpace(name), strings.TrimSpace(quantity)
	key := device.Key(name, quantity)
	if quantity == "" {
		if !strings.Contains(name, ".") {
			return history{}, fmt.Errorf("quantity is required (e.g. temperature)")
		}
		key = name
	}
	h := history{Key: key, Window: historyDefault.String(), Points: [][2]any{}}
	w := historyDefault
	if window = strings.TrimSpace(window); window != "" {
		d, err := time.ParseDuration(window)
		if err != nil || d <= 0 {
			return history{}, fmt.Errorf("window %q: want a positive Go duration like 30m or 6h", red.Clip(window, redact.CutValue))
		}
		w = d
		if w > historyMax {
			w, h.Note = historyMax, "window capped at 24h"
		}
		h.Window = w.String()
	}
	if in.Facts == nil {
		return history{}, fmt.Errorf("history is not available")
	}
	pts, unit, err := in.Facts.History(ctx, key, w)
	if err != nil {
		return history{}, fmt.Errorf("history of %s: %v", key, err)
	}
	loc := location(in)
	h.Unit, h.Count = string(unit), len(pts)
	if len(pts) == 0 {
		h.Note = strings.TrimPrefix(h.Note+"; no data in this window", "; ")
		return h, nil
	}
	h.From = pts[0].Time.In(loc).Format(time.RFC3339)
	h.To = pts[len(pts)-1].Time.In(loc).Format(time.RFC3339)
	lo, hi := pts[0], pts[0]
	for _, p := range pts {
		if p.Value < lo.Value {
			lo = p
		}
		if p.Value > hi.Value {
			hi = p
		}
	}
	lo.Time, lo.Value = lo.Time.In(loc).Truncate(time.Second), round3(lo.Value)
	hi.Time, hi.Value = hi.Time.In(loc).Truncate(time.Second), round3(hi.Value)
	h.Min, h.Max = &lo, &hi
	for _, p := range downsample(pts, historyPoints) {
		h.Points = append(h.Points, [2]any{p.Time.In(loc).Format("15:04"), round3(p.Value)})
	}
	return h, nil
}

// downsample averages pts into at most n buckets of consecutive points,
// each stamped with the time of its first point.
func downsample(pts []Point, n int) []Point {
	if len(pts) <= n {
		return pts
	}
	out := make([]Point, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := i*len(pts)/n, (i+1)*len(pts)/n
		sum := 0.0
		for _, p := range pts[lo:hi] {
			sum += p.Value
		}
		out = append(out, Point{Time: pts[lo].Time, Value: sum / float64(hi-lo)})
	}
	return out
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
		return v
	}
	return math.Round(v*1000) / 1000
}

func location(in Input) *time.Location {
	if in.Location != nil {
		return in.Location
	}
	return time.UTC
}

// clip shortens s to at most n characters, marking the cut with "…", and
// replaces invalid UTF-8. It is for vigil's own words (a rule's condition,
// what a request carries back to the model); what came from outside is cut
// with redact.Clip, which redacts first.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clipBytes shortens s to at most n bytes without splitting a character.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// proposeRule hands a proposed rule to the Proposer (the daemon), which
// validates it as config.toml's rules are, backtests it and keeps it for a
// person; its refusal is the tool's error, so the model can correct it.
func (r *run) proposeRule(ctx context.Context, args string) toolResult {
	var a struct {
		Name, When, Clear, For, Severity, Message, Why string
	}
	if err := r.decodeArgs(args, &a); err != nil {
		return toolErr("%v", err)
	}
	p, _ := r.a.cfg.Self.(Proposer) // offered only when it is one
	msg, err := p.ProposeRule(ctx, alert.Proposal{Name: strings.TrimSpace(a.Name), When: a.When, Clear: a.Clear,
		For: strings.TrimSpace(a.For), Severity: strings.TrimSpace(a.Severity), Message: a.Message, Why: oneLine(a.Why)})
	if err != nil {
		return toolErr("rule refused, nothing kept: %s", r.a.red.Clip(err.Error(), toolOutputMax/2))
	}
	return toolResult{content: r.a.redact(msg)}
}
