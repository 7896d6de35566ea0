package fleet

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

type msg struct {
	topic, payload string
	retained       bool
}

func feed(t *testing.T, v *View, msgs ...msg) {
	t.Helper()
	for _, m := range msgs {
		if err := v.Handle(m.topic, []byte(m.payload), m.retained); err != nil {
			t.Fatalf("Handle(%s) = %v", m.topic, err)
		}
	}
}

func hbJSON(at time.Time, interval time.Duration, outcome string) string {
	b, _ := json.Marshal(map[string]any{"time": at, "outcome": outcome, "reason": "unchanged", "duration_ms": 3, "next_at": at.Add(interval), "tokens": 0})
	return string(b)
}

func byID(devs []Device) map[string]Device {
	m := map[string]Device{}
	for _, d := range devs {
		m[d.ID] = d
	}
	return m
}

// table is what WriteTable writes for the snapshot of v at its clock's
// now, showing the devices f matches.
func table(t *testing.T, v *View, f Filter) string {
	t.Helper()
	var buf bytes.Buffer
	if err := NewSnapshot(v.clock.Now(), v.Devices(), f).WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// jsonSnapshot is the snapshot of v at its clock's now, showing the
// devices f matches, as WriteJSON writes it and read back.
func jsonSnapshot(t *testing.T, v *View, f Filter) Snapshot {
	t.Helper()
	var buf bytes.Buffer
	if err := NewSnapshot(v.clock.Now(), v.Devices(), f).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var snap Snapshot
	if err := json.Unmarshal(buf.Bytes(), &snap); err != nil {
		t.Fatalf("json: %v\n%s", err, buf.String())
	}
	return snap
}

func TestStates(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	info := `{"time":"2026-11-26T11:00:00Z","board":"sim","version":"v1","interval":"1m0s","sample_interval":"30s"}`
	feed(t, v,
		// a: retained online, info says interval 1m, heartbeat 30s ago.
		msg{"vigil/a/status", "online", true},
		msg{"vigil/a/info", info, true},
		msg{"vigil/a/heartbeat", hbJSON(t0.Add(-30*time.Second), time.Minute, "ok"), true},
		// b: online, no info, heartbeat 4m ago with next_at − time = 1m: stale.
		msg{"vigil/b/status", "online", true},
		msg{"vigil/b/heartbeat", hbJSON(t0.Add(-4*time.Minute), time.Minute, "skipped"), true},
		// c: online, heartbeat 2m59s ago, interval 1m: not yet stale.
		msg{"vigil/c/status", "online", true},
		msg{"vigil/c/heartbeat", hbJSON(t0.Add(-179*time.Second), time.Minute, "ok"), true},
		// d: retained offline.
		msg{"vigil/d/heartbeat", hbJSON(t0.Add(-time.Hour), time.Minute, "ok"), true},
		msg{"vigil/d/status", "offline", true},
		// e: heartbeats off (interval 0s), silent for a day: online, not stale.
		msg{"vigil/e/status", "online", true},
		msg{"vigil/e/info", `{"time":"2026-11-25T12:00:00Z","interval":"0s"}`, true},
		// not ours
		msg{"other/x/status", "online", false},
		msg{"vigil/f/cmd/result", `{}`, false},
	)
	got := byID(v.Devices())
	want := map[string]string{"a": Online, "b": Stale, "c": Online, "d": Offline, "e": Online}
	if len(got) != len(want) {
		t.Errorf("devices = %v, want %d", got, len(want))
	}
	for id, st := range want {
		if got[id].State != st {
			t.Errorf("device %s state = %q, want %q (%+v)", id, got[id].State, st, got[id])
		}
	}
	if a := got["a"]; a.Board != "sim" || a.Version != "v1" || a.Interval != Duration(time.Minute) ||
		!a.Since.Equal(time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)) || a.Heartbeat.Age != Duration(30*time.Second) {
		t.Errorf("device a = %+v", a)
	}
	if d := got["d"]; !d.Since.Equal(t0.Add(-time.Hour)) {
		t.Errorf("retained offline since = %v, want the last thing it said (%v)", d.Since, t0.Add(-time.Hour))
	}

	// c goes past 3 × 1m without a word: stale. Then a live sensors
	// message brings it back.
	clock.Advance(2 * time.Second)
	if got := byID(v.Devices())["c"].State; got != Stale {
		t.Errorf("c after 3m01s of silence = %q, want stale", got)
	}
	feed(t, v, msg{"vigil/c/sensors", `{"time":"2020-01-01T00:00:00Z","readings":{}}`, false})
	if got := byID(v.Devices())["c"].State; got != Online {
		t.Errorf("c after a live message = %q, want online", got)
	}

	// A live Last Will: offline since now.
	clock.Advance(time.Second)
	feed(t, v, msg{"vigil/a/status", "offline", false})
	if a := byID(v.Devices())["a"]; a.State != Offline || !a.Since.Equal(clock.Now()) {
		t.Errorf("a after its Last Will = %+v, want offline since %v", a, clock.Now())
	}
}

func TestStaleAfter(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	v.StaleAfter = 5 * time.Second
	feed(t, v, msg{"vigil/e/status", "online", false}, msg{"vigil/e/info", `{"time":"2026-11-26T12:00:00Z","interval":"0s"}`, false})
	clock.Advance(5 * time.Second)
	if got := v.Devices()[0].State; got != Online {
		t.Errorf("after 5s = %q, want online", got)
	}
	clock.Advance(time.Millisecond)
	if got := v.Devices()[0].State; got != Stale {
		t.Errorf("after 5.001s with StaleAfter 5s = %q, want stale", got)
	}
}

func TestFiring(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	feed(t, v, msg{"vigil/a/problem/attributes", `{"firing":[{"severity":"warning","source":"rule","rule":"old","summary":"old one","time":"2026-11-26T10:00:00Z"},{"severity":"info","source":"rule","rule":"older","summary":"older one","time":"2026-11-26T09:00:00Z"}]}`, true})
	if la := v.Devices()[0].LastAlert; la == nil || la.Rule != "old" || la.State != alert.StateFiring || la.Severity != alert.Warning {
		t.Errorf("last alert from the retained attributes = %+v, want the newest firing one (old, warning)", la)
	}
	al := func(src, rule, state, sum string, sev alert.Severity, at time.Time) msg {
		b, _ := json.Marshal(alert.Alert{ID: rule + state, Device: "a", Time: at, Severity: sev, Source: src, Rule: rule, State: state, Summary: sum})
		return msg{"vigil/a/alert", string(b), false}
	}
	feed(t, v,
		msg{"vigil/a/problem/attributes", `{"firing":[{"severity":"warning","source":"rule","rule":"old","summary":"old one","time":"2026-11-26T10:00:00Z"}]}`, true},
		al(alert.SourceRule, "too_hot", alert.StateFiring, "Greenhouse at 36 °C", alert.Critical, t0),
		al(alert.SourceLLM, "", alert.StateFiring, "soil dry", alert.Warning, t0.Add(time.Second)),
	)
	d := v.Devices()[0]
	var rules []string
	for _, f := range d.Firing {
		rules = append(rules, f.Source+"/"+f.Rule)
	}
	if strings.Join(rules, " ") != "llm/ rule/old rule/too_hot" {
		t.Errorf("firing = %v, want llm/ rule/old rule/too_hot", rules)
	}
	if d.LastAlert == nil || d.LastAlert.Summary != "soil dry" || d.LastAlert.Severity != alert.Warning {
		t.Errorf("last alert = %+v, want the LLM's warning", d.LastAlert)
	}
	// Resolved clears the rule; an ok heartbeat clears the LLM's alerts.
	feed(t, v,
		al(alert.SourceRule, "too_hot", alert.StateResolved, "Greenhouse at 32 °C", alert.Critical, t0.Add(2*time.Second)),
		msg{"vigil/a/heartbeat", hbJSON(t0.Add(3*time.Second), time.Minute, "ok"), false},
	)
	d = v.Devices()[0]
	if len(d.Firing) != 1 || d.Firing[0].Rule != "old" {
		t.Errorf("firing after resolve and ok = %+v, want only rule/old", d.Firing)
	}
	if d.LastAlert.State != alert.StateResolved {
		t.Errorf("last alert = %+v, want the resolved one", d.LastAlert)
	}
}

// TestNoticesNeverFire: notices (a setting changed, the checklist
// replaced, notes cleared, a test alert) arrive on the alert topic, new
// and old form (a firing system alert with a notice rule, as a vigil from
// before "notice" sends), and in an old device's retained attributes; none
// of them is listed as firing, nor as the last alert, in the table or the
// JSON. A problem next to them still is.
func TestNoticesNeverFire(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	al := func(id, src, rule, state string, sev alert.Severity, at time.Time) msg {
		b, _ := json.Marshal(alert.Alert{ID: id, Device: "a", Time: at, Severity: sev, Source: src, Rule: rule, State: state, Summary: rule + " " + state})
		return msg{"vigil/a/alert", string(b), false}
	}
	feed(t, v,
		msg{"vigil/a/status", "online", true},
		msg{"vigil/a/problem/attributes", `{"firing":[{"severity":"info","source":"system","rule":"setting","summary":"heartbeat.interval set to 10m by cli","time":"2026-11-26T10:00:00Z"}]}`, true},
		al("r1", alert.SourceRule, "too_hot", alert.StateFiring, alert.Critical, t0),
		al("n1", alert.SourceSystem, alert.RuleSetting, alert.StateNotice, alert.Info, t0.Add(time.Second)),
		al("n2", alert.SourceSystem, alert.RuleChecklist, alert.StateFiring, alert.Info, t0.Add(2*time.Second)),
		al("n3", alert.SourceSystem, alert.RuleNotes, alert.StateFiring, alert.Info, t0.Add(3*time.Second)),
		al("n4", alert.SourceSystem, alert.RuleTest, alert.StateFiring, alert.Critical, t0.Add(4*time.Second)),
	)
	d := v.Devices()[0]
	if len(d.Firing) != 1 || d.Firing[0].Rule != "too_hot" {
		t.Errorf("firing = %+v, want only rule/too_hot", d.Firing)
	}
	if d.LastAlert == nil || d.LastAlert.ID != "r1" {
		t.Errorf("last alert = %+v, want r1 (a notice is no alert)", d.LastAlert)
	}
	tab := table(t, v, Filter{})
	for _, bad := range []string{"setting", "checklist", "notes", "test"} {
		if strings.Contains(tab, bad) {
			t.Errorf("table names %q:\n%s", bad, tab)
		}
	}

	// Only notices: nothing fires, no last alert.
	v = New("vigil", clock)
	feed(t, v,
		msg{"vigil/b/problem/attributes", `{"firing":[{"severity":"info","source":"system","rule":"checklist","summary":"checklist set by cli (12 bytes)","time":"2026-11-26T10:00:00Z"}]}`, true},
		msg{"vigil/b/alert", `{"id":"n5","device":"b","time":"2026-11-26T12:00:00Z","severity":"info","source":"system","rule":"setting","state":"firing","summary":"x"}`, false},
	)
	if d := v.Devices()[0]; len(d.Firing) != 0 || d.LastAlert != nil {
		t.Errorf("device with notices only: firing %+v, last alert %+v; want none", d.Firing, d.LastAlert)
	}
}

func TestBadPayloads(t *testing.T) {
	v := New("vigil", clockwork.NewFakeClockAt(t0))
	for _, m := range []msg{
		{"vigil/a/status", "maybe", true},
		{"vigil/a/heartbeat", "{", true},
		{"vigil/a/alert", `{"severity":"apocalyptic"}`, false},
		{"vigil/a/info", `{"interval":"soon"}`, true},
		{"vigil/a/problem/attributes", `[`, true},
	} {
		err := v.Handle(m.topic, []byte(m.payload), m.retained)
		if err == nil || !strings.Contains(err.Error(), m.topic) {
			t.Errorf("Handle(%s, %q) = %v, want an error naming the topic", m.topic, m.payload, err)
		}
	}
	if devs := v.Devices(); len(devs) != 0 {
		t.Errorf("devices after only bad payloads = %+v, want none", devs)
	}
}

func TestWriteTableAndJSON(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	feed(t, v,
		msg{"vigil/greenhouse-pi/status", "online", true},
		msg{"vigil/greenhouse-pi/info", `{"time":"2026-11-26T11:00:00Z","board":"pi4","version":"v1.0.0","interval":"30m0s"}`, true},
		msg{"vigil/greenhouse-pi/heartbeat", hbJSON(t0.Add(-5*time.Minute), 30*time.Minute, "ok"), true},
		msg{"vigil/freezer/status", "offline", true},
		msg{"vigil/freezer/problem/attributes", `{"firing":[{"severity":"critical","source":"rule","rule":"too_warm","summary":"-12 °C","time":"2026-11-26T11:50:00Z"}]}`, true},
	)
	want := "2 devices: 1 online, 1 offline, 0 stale, 1 firing  12:00:00Z\n" +
		"DEVICE         STATE    SINCE   HEARTBEAT  FIRING\n" +
		"freezer        offline  -       -          critical too_warm\n" +
		"greenhouse-pi  online   1h ago  ok 5m ago  -\n"
	if got := table(t, v, Filter{}); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if got, want := table(t, v, Filter{Stale: true}), "2 devices: 1 online, 1 offline, 0 stale, 1 firing  12:00:00Z\nno device is stale\n"; got != want {
		t.Errorf("table with nothing to show:\n%s\nwant:\n%s", got, want)
	}
	snap := jsonSnapshot(t, v, Filter{Firing: true})
	if len(snap.Devices) != 1 || snap.Devices[0].ID != "freezer" || snap.Devices[0].State != Offline ||
		snap.Summary != (Summary{Devices: 2, Online: 1, Offline: 1, Firing: 1}) || snap.Filter == nil || !snap.Filter.Firing {
		t.Errorf("json round trip = %+v", snap)
	}
	if all := jsonSnapshot(t, v, Filter{}); len(all.Devices) != 2 || all.Devices[1].Interval != Duration(30*time.Minute) || all.Filter != nil {
		t.Errorf("json round trip without a filter = %+v", all)
	}
}

// TestAcknowledgedInTable: a problem acknowledged on its device (the
// problem attributes' acked_by) is marked ✓ after its name; a device whose
// every problem is acknowledged comes after those with one nobody
// acknowledged, and the summary counts it; --json has who and when. No
// line is wider than 80 columns.
func TestAcknowledgedInTable(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	feed(t, v,
		msg{"vigil/barn/status", "online", true},
		msg{"vigil/barn/problem/attributes", `{"firing":[{"id":"barn-1","severity":"critical","source":"rule","rule":"too_warm","summary":"-12 °C","time":"2026-11-26T11:50:00Z","acked_by":"telegram chat 1 user 2 (@ann)","acked_at":"2026-11-26T11:55:00Z"}]}`, true},
		msg{"vigil/coop/status", "online", true},
		msg{"vigil/coop/problem/attributes", `{"firing":[{"severity":"warning","source":"llm","summary":"door open","time":"2026-11-26T11:40:00Z"},{"severity":"warning","source":"rule","rule":"damp","summary":"91 %","time":"2026-11-26T11:41:00Z","acked_by":"cli","acked_at":"2026-11-26T11:42:00Z"}]}`, true},
	)
	tab := table(t, v, Filter{})
	want := "2 devices: 2 online, 0 offline, 0 stale, 2 firing (1 acknowledged)  12:00:00Z\n" +
		"DEVICE  STATE   SINCE  HEARTBEAT  FIRING\n" +
		"coop    online  -      -          warning llm,damp✓\n" +
		"barn    online  -      -          critical too_warm✓\n"
	if tab != want {
		t.Errorf("table:\n%s\nwant:\n%s", tab, want)
	}
	for _, l := range strings.Split(tab, "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	snap := jsonSnapshot(t, v, Filter{})
	barn := snap.Devices[1].Firing[0]
	if snap.Summary.Acked != 1 || barn.ID != "barn-1" || barn.AckedBy != "telegram chat 1 user 2 (@ann)" || !barn.AckedAt.Equal(time.Date(2026, 11, 26, 11, 55, 0, 0, time.UTC)) {
		t.Errorf("json: summary %+v, barn's problem %+v; want it acknowledged, with who and when", snap.Summary, barn)
	}
}

// The last alert read from the retained problem attributes is the
// firing entry itself: its id (what consumers drop duplicates by, and
// what cmd/ack names) and its acknowledgement come with it.
func TestLastAlertFromFiringKeepsIDAndAck(t *testing.T) {
	v := New("vigil", clockwork.NewFakeClockAt(t0))
	feed(t, v, msg{"vigil/a/problem/attributes", `{"firing":[{"severity":"warning","source":"rule","rule":"hot","summary":"too hot","time":"2026-11-26T10:00:00Z","id":"a-1","acked_by":"mqtt vigil/a/cmd/ack","acked_at":"2026-11-26T10:05:00Z"}]}`, true})
	want := alert.Alert{ID: "a-1", Device: "a", Time: t0.Add(-2 * time.Hour), Severity: alert.Warning, Source: alert.SourceRule, Rule: "hot", State: alert.StateFiring, Summary: "too hot", AckedBy: "mqtt vigil/a/cmd/ack", AckedAt: t0.Add(-115 * time.Minute)}
	if la := jsonSnapshot(t, v, Filter{}).Devices[0].LastAlert; la == nil || *la != want {
		t.Errorf("last alert = %+v, want %+v", la, want)
	}
}

// TestTableEscapesControlCharacters (issue 28, finding 11): what another
// device sends (its id in the topic, its rule names, its heartbeat's
// outcome) reaches the table with control characters escaped, never raw
// on a person's terminal; --json keeps the text as sent, in \u escapes.
func TestTableEscapesControlCharacters(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	feed(t, v,
		msg{"vigil/ev\x1b[31mil/status", "online", true},
		msg{"vigil/ev\x1b[31mil/heartbeat", hbJSON(t0.Add(-time.Minute), 30*time.Minute, "ok\x1b]0;owned\x07"), true},
		msg{"vigil/ev\x1b[31mil/problem/attributes", `{"firing":[{"severity":"critical","source":"rule","rule":"x\u001b[2J\u0000\u009b1m","summary":"s","time":"2026-11-26T11:50:00Z"}]}`, true},
	)
	tab := table(t, v, Filter{})
	for _, r := range tab {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
			t.Errorf("table has the control character %U raw:\n%q", r, tab)
			break
		}
	}
	for _, want := range []string{`ev\x1b[31mil`, `x\x1b[2J\x00\u009b1m`, `ok\x1b]0;`} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %s:\n%s", want, tab)
		}
	}
	if snap := jsonSnapshot(t, v, Filter{}); len(snap.Devices) != 1 || snap.Devices[0].Firing[0].Rule != "x\x1b[2J\x00\u009b1m" {
		t.Errorf("json = %+v, want the rule name as sent", snap.Devices)
	}
	var buf bytes.Buffer
	if err := NewSnapshot(v.clock.Now(), v.Devices(), Filter{}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `x\u001b[2J\u0000\u009b1m`) {
		t.Errorf("--json does not write the rule name with its control characters escaped:\n%s", buf.String())
	}
}
