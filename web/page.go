package web

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/transport"
)

// pageCSS is the page's only style sheet, inline and allowed by its hash in
// the Content-Security-Policy.
const pageCSS = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1b1f24;--mute:#5c6670;--line:#2563eb;--th:#dc2626;--fire:rgba(220,38,38,.13);--grid:#e3e6ea;--ok:#15803d;--warn:#b45309;--band:rgba(37,99,235,.17)}
@media (prefers-color-scheme:dark){:root{--bg:#111417;--card:#1b1f24;--ink:#e8eaed;--mute:#9aa4ae;--line:#60a5fa;--th:#f87171;--fire:rgba(248,113,113,.18);--grid:#2c323a;--ok:#4ade80;--warn:#fbbf24;--band:rgba(96,165,250,.2)}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header,main{max-width:1240px;margin:0 auto;padding:12px 16px}
header{display:flex;flex-wrap:wrap;gap:8px 20px;align-items:center}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:20px 0 8px}
.facts{display:flex;flex-wrap:wrap;gap:4px 16px;color:var(--mute);font-size:14px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:13px;font-weight:600;border:1px solid currentColor}
.ok{color:var(--ok)}.pending,.paused{color:var(--warn)}.firing,.failed{color:var(--th)}.unknown{color:var(--mute)}
.disabled{color:var(--mute);opacity:.6;border-style:dashed}
.mute{color:var(--mute)}.note{white-space:pre-wrap;overflow-wrap:anywhere}
td code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace}
form{display:inline}
.actions{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-left:auto}
button,select{font:inherit;padding:6px 14px;border-radius:6px;border:1px solid var(--mute);background:var(--card);color:var(--ink);cursor:pointer}
button.primary{background:var(--line);border-color:var(--line);color:#fff}
.done{background:var(--card);border-left:4px solid var(--ok);padding:6px 12px;margin:0 0 8px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:12px}
.card{background:var(--card);border-radius:10px;padding:10px 12px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
.card .top{display:flex;justify-content:space-between;align-items:baseline;gap:8px;flex-wrap:wrap}
.key{font-weight:600}.val{font-size:22px;font-weight:600}
.rules{font-size:13px;margin-top:2px}.rules .badge{margin-right:4px}
.err{color:var(--th);font-size:13px}.usual{color:var(--mute);font-size:13px}.usual.off{color:var(--warn)}
svg.chart{width:100%;height:auto;display:block;margin-top:6px}
.chart .frame{fill:none;stroke:var(--grid)}.chart .grid{stroke:var(--grid)}
.chart .line{fill:none;stroke:var(--line);stroke-width:1.8;stroke-linejoin:round}
.chart .threshold{stroke:var(--th);stroke-width:1.2;stroke-dasharray:6 4}
.chart .firing{fill:var(--fire)}.chart .band{fill:var(--band)}
.chart text{fill:var(--mute);font-size:12px}.chart .thlabel{fill:var(--th)}
table{width:100%;border-collapse:collapse;background:var(--card);border-radius:10px;font-size:14px}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--grid);vertical-align:top}
th{color:var(--mute);font-weight:600}
.scroll{overflow-x:auto}
footer{color:var(--mute);font-size:12px;text-align:center;padding:16px}
@media (max-width:600px){.grid{grid-template-columns:1fr}.actions{margin-left:0}.hide-s{display:none}}
`

// writePage writes the page. It is plain Go rather than html/template:
// text/template calls methods through reflection, which keeps every
// exported method in the binary and cost 2.4 MB on linux/arm64. Every
// value from outside goes through esc (escHTML).
func writePage(b *bytes.Buffer, d *pageData) {
	esc := escHTML
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	w(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>vigil · `, esc(d.St.Device), `</title>
<style>`, pageCSS, `</style></head>
<body>
<header>
<h1>vigil · `, esc(d.St.Device), `</h1>
<div class="facts">
<span id="pause-state">`)
	if d.Paused {
		w(`<span class="badge paused">paused</span> until `, esc(d.PausedUntil))
	} else {
		w(`<span class="badge ok">watching</span>`)
	}
	w("</span>\n<span>", esc(d.St.Mode), "</span>\n")
	if d.NextRun != "" {
		w("<span>next run ", esc(d.NextRun), "</span>\n")
	}
	w("<span>LLM ", strconv.Itoa(d.St.BudgetCalls), "/", strconv.Itoa(d.St.BudgetMax), " calls today</span>\n")
	for _, o := range d.Outbox {
		w("<span>", esc(o), "</span>\n")
	}
	w("<span>", esc(d.Now), "</span>\n</div>\n<div class=\"actions\">\n")
	tok := `<input type="hidden" name="csrf" value="` + esc(d.Token) + `">`
	if d.CanPause {
		w(`<form method="post" action="/do/pause">`, tok, `
<select name="minutes" aria-label="pause for"><option value="30">30 min</option><option value="60" selected>1 hour</option><option value="240">4 hours</option><option value="1440">1 day</option></select>
<button id="pause"`, pick(!d.Paused, ` class="primary"`, ""), `>Pause</button></form>
`)
	}
	if d.CanResume {
		w(`<form method="post" action="/do/resume">`, tok, `<button id="resume"`, pick(d.Paused, ` class="primary"`, ""), ">Resume</button></form>\n")
	}
	if d.CanCheck {
		w(`<form method="post" action="/do/check">`, tok, "<button id=\"check\">Check now</button></form>\n")
	}
	if d.CanTestAlert {
		w(`<form method="post" action="/do/test-alert">`, tok, "<button id=\"test-alert\">Send a test alert</button></form>\n")
	}
	w("</div>\n</header>\n<main>\n")
	if d.Done != "" {
		w(`<p class="done">`, esc(d.Done), "</p>\n")
	}
	section := func(id, title string, rs []readingView) {
		if len(rs) == 0 {
			return
		}
		if title != "" {
			w("<h2>", title, "</h2>\n")
		}
		w(`<section class="grid" id="`, id, "\">\n")
		for _, r := range rs {
			w(`<div class="card reading" data-key="`, esc(r.Key), `">
<div class="top"><span class="key">`, esc(r.Key), `</span><span class="val">`, esc(r.Value), "</span></div>\n")
			if r.Usual != "" {
				w(`<div class="usual`, pick(r.Unusual, " off", ""), `">`, esc(r.Usual), "</div>\n")
			}
			if len(r.Rules) > 0 {
				w(`<div class="rules">`)
				for _, ru := range r.Rules {
					w(`<span class="badge `, esc(ru.State), `" title="`, esc(ru.Seen), `">`, esc(ru.Name), ": ", esc(ru.State), "</span>")
				}
				w("</div>\n")
			}
			w(string(r.Chart), "\n</div>\n")
		}
		w("</section>\n")
	}
	if len(d.Readings)+len(d.Board) == 0 {
		w("<p>No readings yet.</p>\n")
	}
	section("readings", "", d.Readings)
	if len(d.SensorErrors) > 0 {
		w(`<h2>Sensor errors</h2><p class="mute">in the sample of `, esc(d.SensorsAt), `</p><ul class="err" id="sensor-errors">`)
		for _, e := range d.SensorErrors {
			w("<li>", esc(e), "</li>")
		}
		w("</ul>\n")
	}
	writeProblems(w, d)
	writeProposals(w, d)
	w(`<h2>Alerts</h2>
<div class="scroll"><table id="alerts"><tr><th>time</th><th>severity</th><th class="hide-s">source</th><th>alert</th></tr>
`)
	for _, a := range d.Alerts {
		w("<tr><td>", esc(a.Time), `</td><td class="`, esc(a.Class), `">`, esc(a.Severity), `</td><td class="hide-s">`, esc(a.Source), "</td><td>", esc(a.Text), "</td></tr>\n")
	}
	if len(d.Alerts) == 0 {
		w("<tr><td colspan=\"4\">No alerts.</td></tr>\n")
	}
	w(`</table></div>
<h2>Runs</h2>
<div class="scroll"><table id="runs"><tr><th>time</th><th>outcome</th><th>reason</th><th>tokens</th><th class="hide-s">duration</th></tr>
`)
	for _, r := range d.Runs {
		w("<tr><td>", esc(r.Time), `</td><td class="`, esc(r.Outcome), `">`, esc(r.Outcome), "</td><td>", esc(r.Reason), "</td><td>",
			strconv.Itoa(r.Tokens), `</td><td class="hide-s">`, esc(r.Duration), "</td></tr>\n")
	}
	if len(d.Runs) == 0 {
		w("<tr><td colspan=\"5\">No runs yet.</td></tr>\n")
	}
	w("</table></div>\n")
	if d.Runtime {
		writeRuntime(w, d)
	}
	section("board", "Board", d.Board)
	w(`</main>
<footer>vigil · rendered `, esc(d.Now), ` · charts show the last 24 hours (since the first reading when that is later); dashed lines are rule thresholds, red shading is a rule firing, the blue band is what is usual for the hour</footer>
</body></html>
`)
}

// writeProblems writes the problems firing now, each with who
// acknowledged it, or its Acknowledge button when [manage] remote allows
// "ack".
func writeProblems(w func(...string), d *pageData) {
	esc := escHTML
	w(`<h2>Problems</h2>
<div class="scroll"><table id="problems"><tr><th>since</th><th>severity</th><th>problem</th><th>acknowledged</th></tr>
`)
	tok := `<input type="hidden" name="csrf" value="` + esc(d.Token) + `">`
	for _, p := range d.Problems {
		w("<tr><td>", esc(p.Since), `</td><td class="firing">`, esc(p.Severity), "</td><td>", esc(p.Name), ": ", esc(p.Summary), "</td><td>")
		switch {
		case p.AckedBy != "":
			w(esc(p.AckedBy), " at ", esc(p.AckedAt))
		case d.CanAck:
			w(`<form method="post" action="/do/ack">`, tok, `<input type="hidden" name="target" value="`, esc(p.Target), `"><button class="ack">Acknowledge</button></form>`)
		default:
			w(`<span class="mute">no</span>`)
		}
		w("</td></tr>\n")
	}
	if len(d.Problems) == 0 {
		w("<tr><td colspan=\"4\">Nothing firing.</td></tr>\n")
	}
	w("</table></div>\n")
}

// writeProposals writes the rules the model proposed that wait for a
// person: the rule, the model's why (its text: escaped, never markup),
// the backtest, and Approve and Reject buttons when [manage] remote
// allows "rule" (else the command that approves it).
func writeProposals(w func(...string), d *pageData) {
	if len(d.Proposals) == 0 {
		return
	}
	esc := escHTML
	w(`<h2>Rules the model proposed</h2>
<div class="scroll"><table id="proposals"><tr><th>proposed</th><th>rule</th><th>why</th><th>backtest</th><th>decide</th></tr>
`)
	tok := `<input type="hidden" name="csrf" value="` + esc(d.Token) + `">`
	for _, p := range d.Proposals {
		w("<tr><td>", esc(p.At), "</td><td><code>", esc(p.Name), "</code>: ", esc(p.Rule), "</td><td class=\"note\">", esc(p.Why), "</td><td",
			pick(p.Noisy, ` class="err"`, ""), ">", esc(p.Backtest), "</td><td>")
		if d.CanRule {
			for _, op := range []string{"approve", "reject"} {
				w(`<form method="post" action="/do/rule">`, tok, `<input type="hidden" name="op" value="`, op, `"><input type="hidden" name="target" value="`, esc(p.ID), `"><button`,
					pick(op == "approve", ` class="primary">Approve`, `>Reject`), "</button></form> ")
			}
		} else {
			w(`<code>vigil rule approve `, esc(p.ID), "</code>")
		}
		w("</td></tr>\n")
	}
	w("</table></div>\n")
}

// writeRuntime writes the run-time settings (with the checklist in force)
// and the model's notes. A note is the model's text: escaped like every
// other value, never markup.
func writeRuntime(w func(...string), d *pageData) {
	esc := escHTML
	w(`<h2>Run-time settings</h2>
<div class="scroll"><table id="settings"><tr><th>key</th><th>value</th><th>origin</th></tr>
`)
	for _, st := range d.Settings {
		w("<tr><td><code>", esc(st.Key), "</code></td><td><code>", esc(st.Value), "</code></td><td>", esc(st.Origin), "</td></tr>\n")
	}
	if slices.Contains(d.Withheld, "get") {
		w("<tr><td colspan=\"3\" class=\"mute\">", esc(manage.HiddenText("get")), ".</td></tr>\n")
	} else if len(d.Settings) == 0 {
		w("<tr><td colspan=\"3\" class=\"mute\">None: every value comes from the config file or its default.</td></tr>\n")
	}
	if c := d.Checklist; c != nil {
		w(`<tr id="checklist"><td>checklist in force</td><td><code>`, esc(c.Path), "</code></td><td>", pick(c.FromAfar, "set from afar", "heartbeat.checklist"), "</td></tr>\n")
	}
	w(`</table></div>
<h2>Model's notes</h2>
<div class="scroll"><table id="notes"><tr><th>time</th><th>age</th><th>note</th></tr>
`)
	for _, n := range d.Notes {
		w("<tr><td>", esc(n.Time), "</td><td>", esc(n.Age), `</td><td class="note">`, esc(n.Text), "</td></tr>\n")
	}
	if slices.Contains(d.Withheld, "notes") {
		w("<tr><td colspan=\"3\" class=\"mute\">", esc(manage.HiddenText("notes")), ".</td></tr>\n")
	} else if len(d.Notes) == 0 {
		w("<tr><td colspan=\"3\" class=\"mute\">No notes.</td></tr>\n")
	}
	w("</table></div>\n")
}

// pick is a if c, else b.
func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

type readingView struct {
	Key, Value, Error string
	Usual             string // what is usual now (status.UsualText)
	Unusual           bool   // the reading is off its usual band
	Rules             []heartbeat.RuleStatus
	Chart             string // SVG
}

type alertView struct{ Time, Severity, Class, Source, Text string }

// problemView is a problem firing: Target is what its Acknowledge button
// names (its alert id, or its name when it has none).
type problemView struct{ Since, Severity, Name, Summary, Target, AckedBy, AckedAt string }

type noteView struct{ Time, Age, Text string }

// proposalView is a rule the model proposed, waiting for a person.
type proposalView struct {
	ID, Name, At, Rule, Why, Backtest string
	Noisy                             bool
}

type runView struct {
	Time, Outcome, Reason, Duration string
	Tokens                          int
}

type pageData struct {
	St                        heartbeat.Status
	Now, NextRun, PausedUntil string
	Paused                    bool
	Outbox                    []string
	CanPause, CanResume       bool
	CanCheck                  bool
	CanTestAlert              bool
	CanAck                    bool
	CanRule                   bool
	Proposals                 []proposalView
	Problems                  []problemView
	Token, Done               string
	Readings, Board           []readingView
	SensorErrors              []string
	SensorsAt                 string // when the sample they failed in was taken
	Alerts                    []alertView
	Runs                      []runView
	Runtime                   bool // the sections below are known
	Settings                  []manage.Setting
	Checklist                 *manage.Checklist
	Notes                     []noteView // newest first
	Withheld                  []string   // verbs whose sections a remote viewer may not see
}

var doneText = map[string]string{
	"pause":  "Heartbeats paused; the rules keep running.",
	"resume": "Heartbeats resumed.",
	"check":  "Check ran: see the runs below.",
	"ack":    "Acknowledged: no reminders until it resolves.",
	// The Approve and Reject buttons (verb rule).
	"approve": "Approved: the rule runs from the next sample, with no network.",
	"reject":  "Rejected: the model may not propose it again for 30 days.",
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	live := s.live()
	if refuse(w, live, "status") {
		return
	}
	var buf bytes.Buffer
	if err := s.render(r.Context(), &buf, live, r.URL.Query().Get("done")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// Render writes the page (done names the button just pressed, if any).
func (s *Server) Render(ctx context.Context, buf *bytes.Buffer, done string) error {
	return s.render(ctx, buf, s.live(), done)
}

// render is Render with the config in force the request took.
func (s *Server) render(ctx context.Context, buf *bytes.Buffer, live Live, done string) error {
	now := s.opts.Now()
	loc := live.Location
	from := now.Add(-chartWindow)
	v, err := s.gather(ctx, from)
	if err != nil {
		return err
	}
	st, series := v.Status, v.Series
	alerts, err := s.src.Alerts(ctx, timelineLen)
	if err != nil {
		return err
	}
	when := func(t time.Time) string { return stamp(t, now, loc) }
	d := pageData{St: st, Now: now.In(loc).Format("2006-01-02 15:04 MST"),
		Token: s.csrf, Done: doneText[done],
		CanPause: live.allows("pause"), CanResume: live.allows("resume"), CanCheck: live.allows("check"),
		CanTestAlert: live.allows("test-alert"), CanAck: live.allows("ack"), CanRule: live.allows("rule")}
	if v.RuleBook != nil {
		for _, p := range v.RuleBook.Pending {
			d.Proposals = append(d.Proposals, proposalView{ID: p.ID, Name: p.Name, At: when(p.At), Rule: transport.ProposedRule(p), Why: p.Why,
				Backtest: transport.BacktestText(p.Backtest, loc), Noisy: p.Backtest.Noisy})
		}
	}
	for _, p := range st.Problems {
		pv := problemView{Since: when(p.Time), Severity: p.Severity.String(), Name: p.Name(), Summary: p.Summary, Target: p.ID, AckedBy: p.AckedBy}
		if pv.Target == "" {
			pv.Target = pv.Name
		}
		if p.AckedBy != "" {
			pv.AckedAt = when(p.AckedAt)
		}
		d.Problems = append(d.Problems, pv)
	}
	if !st.NextRun.IsZero() {
		d.NextRun = when(st.NextRun)
	}
	if !st.PausedUntil.IsZero() {
		d.Paused, d.PausedUntil = true, when(st.PausedUntil)
	}
	for _, name := range sortedKeys(st.Outbox) {
		d.Outbox = append(d.Outbox, fmt.Sprintf("%s queue %d", name, st.Outbox[name]))
	}
	spans := firingSpans(st, alerts)
	byKey := map[string]heartbeat.Series{}
	for _, sr := range series {
		byKey[sr.Key] = sr
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	if st.Snapshot != nil {
		for k := range st.Snapshot.Readings {
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	// The status's own list: the last sample's, or the state file's.
	for _, name := range sortedKeys(st.SensorErrors) {
		d.SensorErrors = append(d.SensorErrors, name+": "+st.SensorErrors[name])
	}
	if len(d.SensorErrors) > 0 {
		d.SensorsAt = when(st.SensorsAt)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rv := readingView{Key: k, Value: "–"}
		if st.Snapshot != nil {
			if v, ok := st.Snapshot.Readings[k]; ok {
				rv.Value = heartbeat.FormatValue(v)
			}
		}
		if b, ok := st.Baselines[k]; ok {
			rv.Usual = status.UsualText(b, st.Unusual, now.In(loc))
			rv.Unusual = b.Ready && math.Abs(b.Z) >= st.Unusual
		}
		var lines []RuleLine
		var kspans []Span
		for _, ri := range live.Rules {
			if !slices.Contains(ri.Keys, k) {
				continue
			}
			disabled := false
			for _, rs := range st.Rules {
				if rs.Name == ri.Name {
					rv.Rules = append(rv.Rules, rs)
					disabled = rs.State == heartbeat.RuleDisabled
				}
			}
			for _, th := range ri.Thresholds {
				if th.Key == k && !disabled { // a disabled rule watches nothing
					lines = append(lines, RuleLine{Rule: ri.Name, Threshold: th})
				}
			}
			for _, sp := range spans {
				if sp.Rule == ri.Name {
					kspans = append(kspans, sp)
				}
			}
		}
		rv.Chart = Chart(byKey[k], lines, kspans, from, now, loc)
		if strings.HasPrefix(k, "board.") && len(rv.Rules) == 0 {
			d.Board = append(d.Board, rv) // the board's health, below the logs
		} else {
			d.Readings = append(d.Readings, rv)
		}
	}
	for _, a := range alerts {
		text := a.Summary
		class := pick(a.Severity == alert.Critical, "firing", "pending")
		switch {
		case a.State == alert.StateResolved:
			text = "resolved: " + text
		case a.IsNotice(): // an event: never styled as firing
			text, class = "notice: "+text, "notice"
		}
		d.Alerts = append(d.Alerts, alertView{Time: when(a.Time), Severity: a.Severity.String(),
			Class: class, Source: a.Source, Text: text})
	}
	for _, ru := range st.Runs {
		d.Runs = append(d.Runs, runView{Time: when(ru.Start), Outcome: ru.Outcome, Reason: ru.Reason,
			Tokens: ru.Tokens, Duration: (time.Duration(ru.DurationMS) * time.Millisecond).String()})
	}
	if v.Runtime != nil {
		rt := *v.Runtime
		d.Runtime, d.Settings, d.Checklist, d.Withheld = true, rt.Settings, rt.Checklist, rt.Withheld
		for _, n := range rt.Notes {
			d.Notes = append(d.Notes, noteView{Time: when(n.Time), Age: manage.Age(now.Sub(n.Time)) + " ago", Text: n.Text})
		}
	}
	writePage(buf, &d)
	return nil
}

// firingSpans pairs each rule's firing and resolved alerts from the alert
// log (newest first) into periods, and adds the period a rule is firing in
// now.
func firingSpans(st heartbeat.Status, alerts []alert.Alert) []Span {
	var out []Span
	open := map[string]time.Time{} // rule -> the resolve seen (walking back)
	for _, a := range alerts {
		if a.Source != alert.SourceRule || a.Rule == "" {
			continue
		}
		switch a.State {
		case alert.StateResolved:
			open[a.Rule] = a.Time
		case alert.StateFiring:
			if to, ok := open[a.Rule]; ok {
				out = append(out, Span{Rule: a.Rule, From: a.Time, To: to})
				delete(open, a.Rule)
			}
		}
	}
	for _, rs := range st.Rules {
		if rs.State == heartbeat.RuleFiring && !rs.Since.IsZero() {
			out = append(out, Span{Rule: rs.Name, From: rs.Since})
		}
	}
	return out
}

// stamp formats t in loc: the clock time today, else with the date.
func stamp(t, now time.Time, loc *time.Location) string {
	t = t.In(loc)
	y, m, dd := t.Date()
	if ny, nm, nd := now.In(loc).Date(); y == ny && m == nm && dd == nd {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
