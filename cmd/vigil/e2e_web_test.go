package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/chromiumtest"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/store"
)

// webConfig is a sim board with the status page on a free loopback port.
func webConfig(t *testing.T, dir string, port int) string {
	t.Helper()
	cfg := fmt.Sprintf(`
[device]
id = "greenhouse"
board = "sim"
state_dir = "state"
timezone = "Europe/Berlin"

[heartbeat]
interval = "30m"
sample_interval = "1s"
checklist = "HEARTBEAT.md"

[http]
listen = "127.0.0.1:%d"

[[sensor]]
name = "air"
driver = "bme280"

[[rule]]
name = "too_hot"
when = "air.temperature > 35"
clear = "air.temperature < 33"
severity = "critical"
message = "greenhouse at {air.temperature}"

[[rule]]
name = "too_dry"
when = "air.humidity < 30"
severity = "warning"
message = "air at {air.humidity}"

[[rule]]
name = "soc_warm"
when = "board.soc_temperature > 40"
severity = "warning"
message = "SoC at {board.soc_temperature}"

[manage]
remote = ["status", "pause", "resume", "check", "get", "notes", "ack"]  # the page shows settings and notes, and acknowledges
`, port)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// seedDay writes the day before now into a fresh state file: a temperature
// that peaked at 38 °C twelve hours ago (too_hot fired from 14.5 h to 8 h
// ago), humidity and pressure to match, the board's temperature and load,
// the two alerts and a few LLM runs. The daemon then adds its own samples.
func seedDay(t *testing.T, dir string, now time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "state", "vigil.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var snaps []device.Snapshot
	for m := 24 * 60; m >= 1; m-- {
		ago := float64(m) / 60 // hours
		c := math.Cos(2 * math.Pi * ago / 24)
		wob := 0.4 * math.Sin(float64(m)/7)
		snaps = append(snaps, device.Snapshot{Time: now.Add(-time.Duration(m) * time.Minute), Readings: map[string]device.Value{
			"air.temperature":       {Value: math.Round((28-10*c+wob)*100) / 100, Unit: device.Celsius},
			"air.humidity":          {Value: math.Round((50+15*c-2*wob)*100) / 100, Unit: device.Percent},
			"air.pressure":          {Value: math.Round((1013.1+2.5*math.Cos(2*math.Pi*ago/30))*100) / 100, Unit: device.HectoPascal},
			"board.soc_temperature": {Value: math.Round((46-3*c+wob)*100) / 100, Unit: device.Celsius},
			"board.load1":           {Value: math.Round((0.2+0.15*math.Abs(math.Sin(float64(m)/23)))*100) / 100, Unit: device.Count},
		}})
	}
	hot := now.Add(-14*time.Hour - 30*time.Minute)
	err = db.Update(func(tx *store.Tx) error {
		if err := tx.AppendHistory(snaps); err != nil {
			return err
		}
		for _, a := range []alert.Alert{
			{ID: "seed-1", Device: "greenhouse", Time: hot, Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "greenhouse at 35.2 °C"},
			{ID: "seed-2", Device: "greenhouse", Time: hot.Add(20 * time.Minute), Severity: alert.Warning, Source: alert.SourceLLM, State: alert.StateFiring, Summary: "Vents look stuck closed: temperature rose 6 °C in an hour while humidity fell"},
			{ID: "seed-3", Device: "greenhouse", Time: now.Add(-8 * time.Hour), Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateResolved, Summary: "greenhouse at 32.9 °C"},
		} {
			if _, _, err := tx.Enqueue(a); err != nil {
				return err
			}
		}
		for i, r := range []store.Run{
			{Start: now.Add(-150 * time.Minute), Outcome: "ok", DurationMS: 2140, Tokens: 1830, LLMCalls: 1},
			{Start: now.Add(-120 * time.Minute), Outcome: "ok", DurationMS: 1890, Tokens: 1795, LLMCalls: 1},
			{Start: now.Add(-90 * time.Minute), Outcome: "skipped", Reason: "nothing_changed"},
			{Start: now.Add(-60 * time.Minute), Outcome: "ok", DurationMS: 2410, Tokens: 2011, LLMCalls: 2},
			{Start: now.Add(-30 * time.Minute), Outcome: "skipped", Reason: "nothing_changed"},
		} {
			if _, err := tx.AppendRun(r); err != nil {
				return fmt.Errorf("run %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedNotes writes the model's notes into the state file: what the
// remember tool leaves for the next heartbeats, one of them with markup the
// page must show as text.
func seedNotes(t *testing.T, dir string, now time.Time) {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "state", "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, n := range []store.Note{
		{Time: now.Add(-14 * time.Hour), Text: "Vents stuck closed around noon; the temperature rose 6 °C in an hour. Watch the afternoon peak."},
		{Time: now.Add(-7 * time.Hour), Text: "Humidity recovers within 2 h after the vents open: a dip below 40 % after noon is normal here."},
		{Time: now.Add(-2*time.Hour - 10*time.Minute), Text: "Pressure falling slowly since the morning <b>(front coming?)</b>: no alert, just watch it."},
	} {
		if err := db.AddNote(n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStatusPageInChromium loads the status page of a daemon on the sim
// board in headless Chromium: one chart per reading, the rule's threshold
// on its reading's chart, pause and resume through the buttons, the
// run-time settings (a `vigil set` value, a disabled rule dimmed without
// its threshold line) and the model's notes with their markup shown as
// text, and the screenshots at phone and desktop widths (into docs/img
// with VIGIL_SCREENSHOTS=1; the desktop one is the whole page). It also
// checks /metrics with promtool.
func TestStatusPageInChromium(t *testing.T) {
	chromiumtest.Bin(t)
	dir := t.TempDir()
	port := mosquittotest.FreePort(t)
	cfg := webConfig(t, dir, port)
	seedDay(t, dir, time.Now())
	seedNotes(t, dir, time.Now())
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	seedBaselines(t, dir, time.Now(), berlin, 3, dayCurves(time.Now())) // three days seen: the bands are ready
	for _, kv := range [][2]string{{"heartbeat.interval", "15m"}, {"rule.too_dry.enabled", "false"}} {
		if out, errOut, code := runVigil(t, "-c", cfg, "set", kv[0], kv[1]); code != 0 {
			t.Fatalf("set %s %s: exit %d: %s %s", kv[0], kv[1], code, out, errOut)
		}
	}
	// Started from its directory with a relative -c, as `make run` does, so
	// the page (and its screenshot) shows the checklist as HEARTBEAT.md.
	d := startChildIn(t, dir, nil, "-c", filepath.Base(cfg), "run")
	d.waitLog(t, regexp.MustCompile(`msg="status page" url=http://127\.0\.0\.1:\d+/`), 20*time.Second)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	// Wait for a sample, so every reading is in the snapshot.
	var st struct {
		Snapshot *struct {
			Readings map[string]any `json:"readings"`
		} `json:"snapshot"`
		PausedUntil string `json:"paused_until"`
		Series      []struct {
			Key    string `json:"key"`
			Points []any  `json:"points"`
		} `json:"series"`
	}
	// unseeded is how many readings the daemon's own samples hold of a
	// series the seed left out: a fresh device's.
	unseeded := func() int {
		for _, s := range st.Series {
			if s.Key == "board.clock_synced" {
				return len(s.Points)
			}
		}
		return 0
	}
	apiStatus := func() {
		t.Helper()
		st.PausedUntil = ""
		body := get(t, base+"/api/status")
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("/api/status: %v\n%s", err, body)
		}
	}
	// Wait for two samples, so the readings the seed left out have a few
	// seconds of history, as on a device that just started.
	for deadline := time.Now().Add(20 * time.Second); ; {
		apiStatus()
		if st.Snapshot != nil && len(st.Snapshot.Readings) > 0 && unseeded() >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no two samples in /api/status within 20s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(st.Series) == 0 {
		t.Error("/api/status has no series")
	}
	// vigil status asks the daemon, which answers with the same run-time
	// block as the page.
	out, errOut, code := runVigil(t, "-c", cfg, "status")
	for _, re := range []string{`(?m)^  air\.temperature\s+[\d.]+ °C\s+\(usual [\d.]+–[\d.]+ now`, `(?m)^notes:    3 \(newest 2h ago\)$`, `(?m)^  heartbeat\.interval    15m    set .* by cli$`, `(?m)^  too_dry\s+disabled`} {
		if code != 0 || !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("status from the daemon: exit %d, no line matching %s:\n%s%s", code, re, out, errOut)
		}
	}
	// vigil sensors reads the sensors itself, and what is usual from the
	// daemon.
	out, errOut, code = runVigil(t, "-c", cfg, "sensors")
	if code != 0 || !regexp.MustCompile(`(?m)^air\s+temperature\s+[\d.]+\s+°C\s+usual [\d.]+–[\d.]+ now`).MatchString(out) {
		t.Errorf("sensors with a daemon running: exit %d, no usual band for air.temperature:\n%s%s", code, out, errOut)
	}
	// vigil history asks the daemon: the seeded day plus its own samples,
	// and in JSON the usual band an hour.
	out, errOut, code = runVigil(t, "-c", cfg, "history", "air.temperature", "--since", "6h", "--json")
	if n := strings.Count(out, `"low":`); code != 0 || n < 6 || n > 7 {
		t.Errorf("history --json from the daemon: exit %d, %d usual hours in 6h, want 6 or 7: %s", code, n, errOut)
	}
	out, errOut, code = runVigil(t, "-c", cfg, "history", "air.temperature", "--csv")
	if rows := strings.Count(out, "\n") - 1; code != 0 || rows < 1440 {
		t.Errorf("history from the daemon: exit %d, %d rows, want >= 1440; %s", code, rows, errOut)
	}

	b := chromiumtest.Start(t)
	b.Size(1280, 900, false)
	b.Navigate(base + "/")
	b.WaitFor(`document.querySelectorAll('svg.chart').length > 0`, 10*time.Second)

	// The inline style sheet is allowed by its hash in the CSP: applied.
	var margin string
	b.Eval(`getComputedStyle(document.body).marginTop`, &margin)
	if margin != "0px" {
		t.Errorf("body margin = %q: the style sheet was blocked (CSP hash?)", margin)
	}
	var charts int
	b.Eval(`document.querySelectorAll('svg.chart').length`, &charts)
	if charts != len(st.Snapshot.Readings) {
		t.Errorf("%d charts for %d readings", charts, len(st.Snapshot.Readings))
	}
	for key := range st.Snapshot.Readings {
		var n int
		b.Eval(fmt.Sprintf(`document.querySelectorAll('.reading[data-key=%q] svg.chart').length`, key), &n)
		if n != 1 {
			t.Errorf("reading %s has %d charts, want 1", key, n)
		}
	}
	var th []string
	b.Eval(`[...document.querySelectorAll('.reading[data-key="air.temperature"] line.threshold')].map(l => l.dataset.rule)`, &th)
	if len(th) != 1 || th[0] != "too_hot" {
		t.Errorf("air.temperature thresholds = %v, want [too_hot]", th)
	}
	var shaded int
	b.Eval(`document.querySelectorAll('.reading[data-key="air.temperature"] rect.firing').length`, &shaded)
	if shaded != 1 {
		t.Errorf("air.temperature has %d firing periods shaded, want 1 (the seeded one)", shaded)
	}
	// A reading with seconds of history (the daemon's own) and a constant
	// one draw their line across the plot, not a sliver at its right edge.
	for _, key := range []string{"board.clock_synced", "board.mem_available", "air.temperature"} {
		var width float64
		b.Eval(fmt.Sprintf(`(() => { const p = document.querySelector('.reading[data-key=%q] path.line'); return p ? p.getBBox().width : 0; })()`, key), &width)
		if width < 400 {
			t.Errorf("%s: the line is %.0f units wide, want it across the plot (422)", key, width)
		}
	}
	// The usual band is drawn behind the line of every reading with a
	// baseline, across the day, and the card says what is usual now.
	for _, key := range []string{"air.temperature", "air.humidity", "board.soc_temperature"} {
		var band struct {
			N      int     `json:"n"`
			Width  float64 `json:"width"`
			Behind bool    `json:"behind"`
			Fill   string  `json:"fill"`
			Usual  string  `json:"usual"`
		}
		b.Eval(fmt.Sprintf(`(() => { const c = document.querySelector('.reading[data-key=%q]'); const bs = [...c.querySelectorAll('path.band')]; const line = c.querySelector('path.line');
			return {n: bs.length, width: bs.reduce((w, p) => w + p.getBBox().width, 0), fill: bs.length ? getComputedStyle(bs[0]).fill : '',
				behind: bs.length > 0 && line !== null && bs.every(p => p.compareDocumentPosition(line) & Node.DOCUMENT_POSITION_FOLLOWING),
				usual: (c.querySelector('.usual') || {}).innerText || ''}; })()`, key), &band)
		if band.N == 0 || band.Width < 400 || !band.Behind || band.Fill == "" || band.Fill == "none" {
			t.Errorf("%s: %d usual bands %.0f units wide, behind the line %v, fill %q: want the band across the plot (422), behind the line, filled", key, band.N, band.Width, band.Behind, band.Fill)
		}
		if !regexp.MustCompile(`^usual [\d.]+–[\d.]+ now`).MatchString(band.Usual) {
			t.Errorf("%s's card says %q, want what is usual now", key, band.Usual)
		}
	}
	b.Eval(`document.querySelectorAll('.reading[data-key="board.clock_synced"] path.band').length`, &charts)
	if charts != 0 {
		t.Errorf("board.clock_synced (on or off) has %d usual bands, want none", charts)
	}
	b.Eval(`document.querySelectorAll('.reading[data-key="air.humidity"] line.threshold').length`, &charts)
	if charts != 0 {
		t.Errorf("air.humidity has %d threshold lines, want none (too_dry is disabled)", charts)
	}

	// The disabled rule: its badge says so and is dimmed.
	var dis struct {
		Text    string `json:"text"`
		Opacity string `json:"opacity"`
	}
	b.Eval(`(() => { const e = document.querySelector('.reading[data-key="air.humidity"] .badge.disabled'); return e ? {text: e.innerText, opacity: getComputedStyle(e).opacity} : {}; })()`, &dis)
	if dis.Text != "too_dry: disabled" || dis.Opacity == "" || dis.Opacity == "1" {
		t.Errorf("too_dry's badge = %q with opacity %q, want \"too_dry: disabled\", dimmed", dis.Text, dis.Opacity)
	}

	// The run-time settings and the model's notes are on screen, newest
	// note first, its markup as text.
	visible := func(sel string) string {
		t.Helper()
		var text string
		b.Eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.offsetHeight > 0 && getComputedStyle(e).visibility === 'visible' ? e.innerText : ''; })()`, sel), &text)
		if text == "" {
			t.Errorf("%s is not visible on the page", sel)
		}
		return text
	}
	settings := visible("#settings")
	for _, re := range []string{`heartbeat\.interval\s+15m\s+set \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0[12]:00 by cli`, `rule\.too_dry\.enabled\s+false\s+set .* by cli`,
		`checklist in force\s+HEARTBEAT\.md\s+heartbeat\.checklist`} {
		if !regexp.MustCompile(re).MatchString(settings) {
			t.Errorf("run-time settings lack %s:\n%s", re, settings)
		}
	}
	notes := visible("#notes")
	if first, _, _ := strings.Cut(strings.SplitN(notes, "\n", 3)[1], "\n"); !strings.Contains(first, "2h ago") || !strings.Contains(first, "<b>(front coming?)</b>") {
		t.Errorf("the newest note, first, with its markup as text: got %q in\n%s", first, notes)
	}
	var bold int
	b.Eval(`document.querySelectorAll('#notes b, script').length`, &bold)
	if bold != 0 {
		t.Errorf("a note's markup became %d elements", bold)
	}

	// A problem firing (soc_warm: the sim SoC runs above 40 °C) has its
	// Acknowledge button on screen.
	b.WaitFor(`!!document.querySelector('#problems button.ack')`, 10*time.Second)
	if problems := visible("#problems"); !strings.Contains(problems, "soc_warm") || !strings.Contains(problems, "Acknowledge") {
		t.Errorf("the problems table does not show soc_warm with its Acknowledge button:\n%s", problems)
	}

	shots := t.TempDir()
	if os.Getenv("VIGIL_SCREENSHOTS") != "" {
		shots = filepath.Join("..", "..", "docs", "img")
	}
	shoot := func(name string) {
		t.Helper()
		var buf bytes.Buffer
		b.Screenshot(&buf, false)
		if buf.Len() < 1000 || !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG")) {
			t.Fatalf("screenshot %s: %d bytes, not a PNG", name, buf.Len())
		}
		if err := os.WriteFile(filepath.Join(shots, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s: %d KB", name, buf.Len()/1024)
	}
	var height int
	b.Eval(`document.documentElement.scrollHeight`, &height)
	b.Size(1280, min(height, 2400), false) // the whole page, down to the notes and the board
	shoot("status-desktop.png")
	b.Size(390, 844, true)
	b.Navigate(base + "/")
	shoot("status-phone.png")
	b.Size(1280, 560, false) // the first rows of charts, each with its usual band
	b.Navigate(base + "/")
	shoot("status-band.png")

	// Pause through the button, see it, then resume.
	b.Size(1280, 900, false)
	b.Navigate(base + "/")
	b.Eval(`document.getElementById('pause').click()`, nil)
	b.WaitFor(`location.search === '?done=pause' && document.querySelector('#pause-state .paused')`, 10*time.Second)
	apiStatus()
	if st.PausedUntil == "" {
		t.Error("after clicking pause, /api/status has no paused_until")
	}
	b.Eval(`document.getElementById('resume').click()`, nil)
	b.WaitFor(`location.search === '?done=resume' && document.querySelector('#pause-state .ok')`, 10*time.Second)
	apiStatus()
	if st.PausedUntil != "" {
		t.Errorf("after clicking resume, paused_until = %q", st.PausedUntil)
	}
	d.waitLog(t, regexp.MustCompile(`msg="status page command" cmd=pause`), 5*time.Second)

	// A POST without the token is refused.
	resp, err := http.PostForm(base+"/do/pause", map[string][]string{"minutes": {"5"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /do/pause without csrf: %s, want 403", resp.Status)
	}

	t.Run("metrics parse", func(t *testing.T) {
		checkMetrics(t, get(t, base+"/metrics"))
	})
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	return body
}

// checkMetrics runs promtool check metrics. promtool also lints, and the
// library's process metrics carry no HELP text: those lint lines are
// expected, anything else (a parse error above all) fails.
func checkMetrics(t *testing.T, body []byte) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found and CI is set: install prometheus (make test-deps)")
		}
		t.Skip("promtool not found: apt-get install prometheus")
	}
	for _, want := range []string{`vigil_reading{reading="air.temperature",unit="°C"}`, `vigil_rule_firing{rule="too_hot"}`, "vigil_paused 0", "process_resident_memory_bytes"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && !strings.HasSuffix(line, " no help text") {
			t.Errorf("promtool: %s", line)
		}
	}
	if code != 0 && code != 3 { // 3: lint problems only
		t.Errorf("promtool check metrics exit %d:\n%s", code, out)
	}
}

// TestStatusPageOffLoopbackNeedsPassword: listening beyond loopback without
// http.password_file is a config error, exit 78, before anything starts.
func TestStatusPageOffLoopbackNeedsPassword(t *testing.T) {
	dir := t.TempDir()
	cfg := webConfig(t, dir, 18080)
	raw, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, bytes.Replace(raw, []byte(`listen = "127.0.0.1:18080"`), []byte(`listen = "0.0.0.0:18080"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runVigil(t, "-c", cfg, "run")
	if code != 78 {
		t.Fatalf("vigil run exit %d, want 78; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, `http.listen: "0.0.0.0:18080" is reachable from the network: set http.password_file`) {
		t.Errorf("stderr does not name the key and the fix:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Error("a config error created the state directory")
	}
}

// TestHistoryExport reads the seeded day from the state file with no
// daemon running: CSV, JSON and a filter, and the file is left as it was.
func TestHistoryExport(t *testing.T) {
	dir := t.TempDir()
	cfg := webConfig(t, dir, 18081)
	seedDay(t, dir, time.Now())
	db := filepath.Join(dir, "state", "vigil.db")
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runVigil(t, "-c", cfg, "history", "air.temperature", "--since", "6h", "--csv")
	if code != 0 {
		t.Fatalf("history --csv exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "time,reading,value,unit" || len(lines) < 359 || len(lines) > 361 {
		t.Errorf("history --csv: header %q and %d rows, want 360 one-minute rows", lines[0], len(lines)-1)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00,air\.temperature,[0-9.]+,°C$`).MatchString(lines[1]) {
		t.Errorf("history --csv row %q: want Europe/Berlin times", lines[1])
	}
	out, errOut, code = runVigil(t, "-c", cfg, "history", "air", "--json")
	if code != 0 {
		t.Fatalf("history --json exit %d: %s", code, errOut)
	}
	var h struct {
		Series []struct {
			Key    string `json:"key"`
			Points []any  `json:"points"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 3 || h.Series[0].Key != "air.humidity" || len(h.Series[0].Points) < 1439 {
		t.Errorf("history air --json: %d series, first %q", len(h.Series), h.Series[0].Key)
	}
	if _, errOut, code = runVigil(t, "-c", cfg, "history", "soil"); code != 1 || !strings.Contains(errOut, `no reading "soil"`) {
		t.Errorf("history soil: exit %d, %s", code, errOut)
	}
	after, _ := os.ReadFile(db)
	if !bytes.Equal(before, after) {
		t.Error("vigil history changed the state file")
	}
}

// TestStatusPageRefusesOtherHostsAndCrossSitePosts: the real daemon's page
// answers 421 to a Host it does not know (a page rebound to it by DNS never
// sees the form token), serves localhost and a name in [http]
// allowed_hosts, and refuses a POST from a foreign Origin or a cross-site
// fetch with 403 though it carries the token; its own POST pauses.
func TestStatusPageRefusesOtherHostsAndCrossSitePosts(t *testing.T) {
	dir := t.TempDir()
	port := mosquittotest.FreePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
[http]
listen = "127.0.0.1:%d"
allowed_hosts = ["vigil.test"]
`, port))
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg="status page" url=http://127\.0\.0\.1:\d+/`), 20*time.Second)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	send := func(method, path, host string, hdr map[string]string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := send("GET", "/", "", nil, nil)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("GET / = %d without a form token:\n%.300s", code, page)
	}
	token := m[1]

	for _, host := range []string{"attacker.example", fmt.Sprintf("attacker.example:%d", port)} {
		code, body := send("GET", "/", host, nil, nil)
		if code != http.StatusMisdirectedRequest || strings.Contains(body, token) {
			t.Errorf("GET / with Host %s = %d (token shown: %v), want 421 without it", host, code, strings.Contains(body, token))
		}
	}
	for _, host := range []string{fmt.Sprintf("localhost:%d", port), "vigil.test", fmt.Sprintf("VIGIL.test:%d", port)} {
		if code, _ := send("GET", "/", host, nil, nil); code != 200 {
			t.Errorf("GET / with Host %s = %d, want 200", host, code)
		}
	}

	paused := func() bool {
		t.Helper()
		_, body := send("GET", "/api/status", "", nil, nil)
		return strings.Contains(body, `"paused_until"`)
	}
	pause := url.Values{"csrf": {token}, "minutes": {"1440"}}
	for _, tt := range []struct {
		name, host string
		hdr        map[string]string
		code       int
	}{
		{"rebound page", "attacker.example", map[string]string{"Origin": "http://attacker.example", "Sec-Fetch-Site": "same-origin"}, http.StatusMisdirectedRequest},
		{"foreign origin", "", map[string]string{"Origin": "http://attacker.example"}, http.StatusForbidden},
		{"cross-site fetch", "", map[string]string{"Origin": "http://attacker.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	} {
		if code, body := send("POST", "/do/pause", tt.host, tt.hdr, pause); code != tt.code {
			t.Errorf("%s: POST /do/pause = %d %q, want %d", tt.name, code, body, tt.code)
		}
		if paused() {
			t.Fatalf("%s: the refused POST paused the daemon", tt.name)
		}
	}
	own := map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}
	if code, body := send("POST", "/do/pause", "", own, pause); code != http.StatusSeeOther || !paused() {
		t.Errorf("the page's own POST /do/pause = %d %q, paused %v; want 303 and paused", code, body, paused())
	}
}
