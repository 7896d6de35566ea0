package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/goldentest"
	"github.com/vigil-iot/vigil/internal/seriestest"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// fakeEngine is a Source and Controller with a day of history for the sim
// board's readings.
type fakeEngine struct {
	now    time.Time
	series []heartbeat.Series
	paused time.Time
	calls  []string
	rules  []heartbeat.RuleStatus // beside too_hot firing
	// problems are the problems firing; Ack refuses the ids in resolved
	// with transport.ErrNotFiring.
	problems []alert.Alert
	// sensorErrors are the sensors that failed in the last sample.
	sensorErrors map[string]string
	resolved     []string
	// refused are the verbs the commands refuse with
	// alert.ErrNotAllowed, as the daemon's do once a reload took them
	// out of [manage] remote.
	refused []string
	// baselines are what is usual now, by reading.
	baselines map[string]heartbeat.BandStatus
}

func newFake(now time.Time, readings int) *fakeEngine {
	f := &fakeEngine{now: now}
	keys := []string{"air.temperature", "air.humidity", "air.pressure"}
	for i := 3; i < readings; i++ {
		keys = append(keys, "board.r"+string(rune('a'+i)))
	}
	for ki, k := range keys[:readings] {
		s := heartbeat.Series{Key: k, Unit: device.Celsius}
		for m := 24 * 60; m > 0; m-- {
			s.Points = append(s.Points, heartbeat.Point{Time: now.Add(-time.Duration(m) * time.Minute), Value: float64(ki) + float64(m%97)/10})
		}
		f.series = append(f.series, s)
	}
	return f
}

func (f *fakeEngine) Status(ctx context.Context) (heartbeat.Status, error) {
	snap := &device.Snapshot{Time: f.now, Readings: map[string]device.Value{}}
	for _, s := range f.series {
		snap.Readings[s.Key] = device.Value{Value: s.Points[len(s.Points)-1].Value, Unit: s.Unit}
	}
	return heartbeat.Status{Device: "fake", Mode: "rules-only", Now: f.now, PausedUntil: f.paused, Snapshot: snap,
		Outbox: map[string]int{"log": 0}, BudgetMax: 96, Problems: f.problems, SensorErrors: f.sensorErrors, SensorsAt: f.now,
		Baselines: f.baselines, Unusual: 3,
		Rules: append([]heartbeat.RuleStatus{{Name: "too_hot", State: heartbeat.RuleFiring, Since: f.now.Add(-time.Hour)}}, f.rules...)}, nil
}

func (f *fakeEngine) History(ctx context.Context, since time.Time) ([]heartbeat.Series, error) {
	return f.series, nil
}

func (f *fakeEngine) Alerts(ctx context.Context, n int) ([]alert.Alert, error) {
	return []alert.Alert{{ID: "a1", Time: f.now.Add(-time.Hour), Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "hot <b>"}}, nil
}

func (f *fakeEngine) Pause(ctx context.Context, d time.Duration) (string, error) {
	if slices.Contains(f.refused, "pause") {
		return "", fmt.Errorf("%w: \"pause\" is not in [manage] remote (web)", alert.ErrNotAllowed)
	}
	if err := transport.CheckPause(d); err != nil { // as the commands do
		return "", err
	}
	f.calls = append(f.calls, "pause "+d.String())
	f.paused = f.now.Add(d)
	return "paused", nil
}

func (f *fakeEngine) Resume(ctx context.Context) (string, error) {
	f.calls = append(f.calls, "resume")
	f.paused = time.Time{}
	return "resumed", nil
}

func (f *fakeEngine) Check(ctx context.Context) (string, error) {
	f.calls = append(f.calls, "check")
	return "ok", nil
}

func (f *fakeEngine) TestAlert(ctx context.Context) (string, error) {
	if transport.SourceOf(ctx).Channel != transport.ChannelWeb {
		return "", errors.New("the page's commands must carry the web source")
	}
	f.calls = append(f.calls, "test-alert")
	return "test alert queued", nil
}

func (f *fakeEngine) Ack(ctx context.Context, target string) (string, error) {
	if transport.SourceOf(ctx).Channel != transport.ChannelWeb {
		return "", errors.New("the page's commands must carry the web source")
	}
	if slices.Contains(f.resolved, target) {
		return "", fmt.Errorf("alert %s is no longer firing: %w", target, transport.ErrNotFiring)
	}
	f.calls = append(f.calls, "ack "+target)
	return "acknowledged", nil
}

func newTestServer(t testing.TB, f *fakeEngine, opts Options) *Server {
	t.Helper()
	opts.Now = func() time.Time { return f.now }
	if opts.Clock == nil {
		opts.Clock = clockwork.NewFakeClockAt(f.now)
	}
	opts.Rules = []status.RuleInfo{{Name: "too_hot", Keys: []string{"air.temperature"}, Thresholds: []rule.Threshold{{Key: "air.temperature", Op: ">", Value: 35}}}}
	s, err := New(f, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do is request from the page's own listen address, with basic auth
// when user is set.
func do(t *testing.T, h http.Handler, method, target string, form url.Values, user, pass string) *http.Response {
	t.Helper()
	var hdr map[string]string
	if user != "" {
		hdr = map[string]string{"Authorization": basic(user, pass)}
	}
	return request(t, h, method, target, "127.0.0.1:8080", "", hdr, form)
}

func TestPageHeadersAndContent(t *testing.T) {
	f := newFake(t0, 3)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "pause", "resume", "check"}}})
	resp := do(t, s, "GET", "/", nil, "", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET / = %s", resp.Status)
	}
	if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options = %q", got)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'sha256-" + styleHash() + "'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(string(body), "<script") {
		t.Error("the page has a script")
	}
	for _, want := range []string{`<style>` + pageCSS + `</style>`, `class="threshold" data-rule="too_hot"`, `class="firing"`, "hot &lt;b&gt;", `name="csrf" value="` + s.Token() + `"`, `id="pause"`, `id="check"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(string(body), `<svg class="chart"`); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
}

func TestButtonsFollowManageRemote(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "resume"}}})
	body, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	if strings.Contains(string(body), `id="pause"`) || strings.Contains(string(body), `id="check"`) || !strings.Contains(string(body), `id="resume"`) {
		t.Error("the page shows buttons [manage] remote does not allow, or hides resume")
	}
	tok := url.Values{"csrf": {s.Token()}}
	tests := []struct {
		name, target string
		form         url.Values
		code         int
		calls        int
	}{
		{"not allowed", "/do/pause", tok, http.StatusForbidden, 0},
		{"unknown verb", "/do/reboot", tok, http.StatusNotFound, 0},
		{"no token", "/do/resume", url.Values{}, http.StatusForbidden, 0},
		{"wrong token", "/do/resume", url.Values{"csrf": {"x" + s.Token()}}, http.StatusForbidden, 0},
		{"too big", "/do/resume", url.Values{"csrf": {s.Token()}, "pad": {strings.Repeat("x", 5000)}}, http.StatusBadRequest, 0},
		{"allowed", "/do/resume", tok, http.StatusSeeOther, 1},
	}
	for _, tt := range tests {
		f.calls = nil
		resp := do(t, s, "POST", tt.target, tt.form, "", "")
		if resp.StatusCode != tt.code || len(f.calls) != tt.calls {
			t.Errorf("%s: POST %s = %d with calls %v, want %d and %d calls", tt.name, tt.target, resp.StatusCode, f.calls, tt.code, tt.calls)
		}
	}
	s2 := newTestServer(t, f, Options{Live: Live{Allowed: []string{"pause"}}})
	for _, p := range []string{"/", "/api/status", "/api/history", "/metrics"} {
		if resp := do(t, s2, "GET", p, nil, "", ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s without status in [manage] remote = %d, want 403", p, resp.StatusCode)
		}
	}
}

func TestPauseButton(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "pause"}}})
	resp := do(t, s, "POST", "/do/pause", url.Values{"csrf": {s.Token()}, "minutes": {"240"}}, "", "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?done=pause" {
		t.Fatalf("POST /do/pause = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if len(f.calls) != 1 || f.calls[0] != "pause 4h0m0s" {
		t.Errorf("calls = %v", f.calls)
	}
	body, _ := io.ReadAll(do(t, s, "GET", "/?done=pause", nil, "", "").Body)
	if !strings.Contains(string(body), `<span class="badge paused">paused</span>`) || !strings.Contains(string(body), "Heartbeats paused") {
		t.Error("the page does not show the pause")
	}
	if resp := do(t, s, "POST", "/do/pause", url.Values{"csrf": {s.Token()}, "minutes": {"-1"}}, "", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("pause -1 minutes = %d, want 400", resp.StatusCode)
	}
}

// TestRefusedByTheCommands: a command the daemon refuses because [manage]
// remote no longer allows it (a reload raced the open page) is answered
// 403 with the refusal, as the page's own refusals are, never 500.
func TestRefusedByTheCommands(t *testing.T) {
	f := newFake(t0, 1)
	f.refused = []string{"pause"}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "pause"}}})
	resp := do(t, s, "POST", "/do/pause", url.Values{"csrf": {s.Token()}}, "", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"pause" is not in [manage] remote`) {
		t.Errorf("POST /do/pause refused by the commands = %d %q, want 403 with the refusal", resp.StatusCode, body)
	}
	if len(f.calls) != 0 {
		t.Errorf("calls = %v, want none", f.calls)
	}
}

// TestPageFollowsCurrent: with Options.Current the page takes the verbs,
// the rules and the time zone from it on every request, so a reload
// changes an open page: the button it took away is gone, and a post from
// before is refused 403.
func TestPageFollowsCurrent(t *testing.T) {
	f := newFake(t0, 3)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	live := Live{Allowed: []string{"status", "pause"}}
	s := newTestServer(t, f, Options{Current: func() Live { return live }})
	body, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	if !strings.Contains(string(body), `id="pause"`) || strings.Contains(string(body), `class="threshold"`) || !strings.Contains(string(body), " UTC</span>") {
		t.Fatalf("page before the change lacks Pause or UTC, or draws a rule Current does not give:\n%s", body)
	}
	live = Live{Allowed: []string{"status"}, Location: tokyo,
		Rules: []status.RuleInfo{{Name: "dry_air", Keys: []string{"air.humidity"}, Thresholds: []rule.Threshold{{Key: "air.humidity", Op: "<", Value: 30}}}}}
	body, _ = io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	if strings.Contains(string(body), `id="pause"`) || !strings.Contains(string(body), `class="threshold" data-rule="dry_air"`) || !strings.Contains(string(body), " JST</span>") {
		t.Errorf("page after the change shows Pause, or lacks dry_air's line or Tokyo time:\n%s", body)
	}
	if resp := do(t, s, "POST", "/do/pause", url.Values{"csrf": {s.Token()}}, "", ""); resp.StatusCode != http.StatusForbidden || len(f.calls) != 0 {
		t.Errorf("POST /do/pause after Current dropped it = %d, calls %v; want 403 and none", resp.StatusCode, f.calls)
	}
}

func TestBasicAuth(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}, Username: "vigil", Password: "s3cret"})
	tests := []struct {
		path, user, pass string
		code             int
	}{
		{"/", "", "", 401},
		{"/", "vigil", "wrong", 401},
		{"/", "other", "s3cret", 401},
		{"/", "vigil", "s3cret", 200},
		{"/metrics", "", "", 401},
		{"/healthz", "", "", 200},
	}
	for i, tt := range tests {
		var hdr map[string]string
		if tt.user != "" {
			hdr = map[string]string{"Authorization": basic(tt.user, tt.pass)}
		}
		// One client each: a second wrong password from one is held back
		// (TestBasicAuthFailuresSlowDownAndLog).
		if resp := request(t, s, "GET", tt.path, "127.0.0.1:8080", fmt.Sprintf("192.0.2.%d:1234", i+1), hdr, nil); resp.StatusCode != tt.code {
			t.Errorf("GET %s as %q/%q = %d, want %d", tt.path, tt.user, tt.pass, resp.StatusCode, tt.code)
		}
	}
}

func TestAPIHistory(t *testing.T) {
	f := newFake(t0, 3)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}})
	resp := do(t, s, "GET", "/api/history?reading=air.pressure&format=csv", nil, "", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte("time,reading,value,unit\n")) || bytes.Contains(body, []byte("air.temperature")) {
		t.Errorf("csv: %d %.200s", resp.StatusCode, body)
	}
	if resp := do(t, s, "GET", "/api/history?since=1s", nil, "", ""); resp.StatusCode != 400 {
		t.Errorf("since=1s = %d, want 400", resp.StatusCode)
	}
	// The page reaches back as far as vigil history does: the history kept.
	if resp := do(t, s, "GET", "/api/history?since=48h", nil, "", ""); resp.StatusCode != 200 {
		t.Errorf("since=48h = %d, want 200", resp.StatusCode)
	}
	resp = do(t, s, "GET", "/api/history?since=168h", nil, "", "")
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !bytes.Contains(body, []byte("at most 48h")) {
		t.Errorf("since=168h = %d %q, want 400 naming the 48h kept", resp.StatusCode, body)
	}
}

func TestChartGolden(t *testing.T) {
	h := seriestest.KnownHistory()
	svg := Chart(h[1], []RuleLine{{Rule: "too_hot", Threshold: rule.Threshold{Key: "air.temperature", Op: ">", Value: 30}}},
		[]Span{{Rule: "too_hot", From: t0.Add(50 * time.Minute)}}, t0, t0.Add(time.Hour), time.UTC)
	goldentest.Check(t, "chart.svg", []byte(svg+"\n"))
	gap := Chart(h[0], nil, nil, t0, t0.Add(time.Hour), time.UTC)
	if n := strings.Count(gap, "M"); n != 2 {
		t.Errorf("humidity with a 10-minute gap: %d line starts, want 2", n)
	}
}

// BenchmarkRenderStatusPage renders / for the sim board: 16 readings with
// a day of one-minute history each.
func BenchmarkRenderStatusPage(b *testing.B) {
	f := newFake(t0, 16)
	s := newTestServer(b, f, Options{Live: Live{Allowed: []string{"status", "pause", "resume", "check"}}})
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := s.Render(context.Background(), &buf, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "page-bytes")
}

// TestTestAlertButton: the button shows only when [manage] remote allows
// test-alert, and a press queues one test alert under the web source.
func TestTestAlertButton(t *testing.T) {
	f := newFake(t0, 1)
	off := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "pause", "resume", "check"}}})
	if body, _ := io.ReadAll(do(t, off, "GET", "/", nil, "", "").Body); strings.Contains(string(body), `id="test-alert"`) {
		t.Error("the test-alert button shows although [manage] remote does not allow it")
	}
	if resp := do(t, off, "POST", "/do/test-alert", url.Values{"csrf": {off.Token()}}, "", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /do/test-alert not allowed = %d, want 403", resp.StatusCode)
	}
	on := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "test-alert"}}})
	if body, _ := io.ReadAll(do(t, on, "GET", "/", nil, "", "").Body); !strings.Contains(string(body), `id="test-alert"`) {
		t.Error("no test-alert button although [manage] remote allows it")
	}
	f.calls = nil
	resp := do(t, on, "POST", "/do/test-alert", url.Values{"csrf": {on.Token()}}, "", "")
	if resp.StatusCode != http.StatusSeeOther || len(f.calls) != 1 || f.calls[0] != "test-alert" {
		t.Errorf("POST /do/test-alert = %d with calls %v, want 303 and one test-alert", resp.StatusCode, f.calls)
	}
}

// knownRuntime has a setting from Telegram, one from the environment, a
// checklist set from afar and two notes, one of them markup.
func knownRuntime() manage.Runtime {
	return manage.Runtime{
		Settings: []manage.Setting{
			{Key: "heartbeat.interval", Value: "10m", Origin: "set 2026-03-14 10:02:03 +00:00 by telegram chat 1 user 2"},
			{Key: "rule.dry_air.enabled", Value: "false", Origin: "env"},
		},
		Checklist: &manage.Checklist{Path: "/var/lib/vigil/HEARTBEAT.md", FromAfar: true},
		Notes: []store.Note{
			{Time: t0.Add(-2 * time.Hour), Text: "<script>alert(1)</script>"},
			{Time: t0.Add(-26 * time.Hour), Text: "door & window \"open\""},
		},
	}
}

// TestPageRuntimeSections: the run-time settings, the checklist in force
// and the model's notes (newest first, escaped) show on the page, a
// disabled rule shows dimmed with the word, and the style sheet still
// matches the CSP's hash.
func TestPageRuntimeSections(t *testing.T) {
	f := newFake(t0, 3)
	f.rules = []heartbeat.RuleStatus{{Name: "dry_air", State: heartbeat.RuleDisabled}}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}, Runtime: func(context.Context) (manage.Runtime, error) { return knownRuntime(), nil }})
	s.opts.Rules = append(s.opts.Rules, status.RuleInfo{Name: "dry_air", Keys: []string{"air.humidity"}, Thresholds: []rule.Threshold{{Key: "air.humidity", Op: "<", Value: 30}}})
	resp := do(t, s, "GET", "/", nil, "", "")
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	if strings.Contains(body, "<script") {
		t.Error("a note's markup reached the page unescaped")
	}
	if strings.Contains(body, `data-rule="dry_air"`) {
		t.Error("the disabled rule's threshold is drawn")
	}
	for _, want := range []string{
		`<span class="badge disabled" title="">dry_air: disabled</span>`,
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		".disabled{",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	from := strings.Index(body, "<h2>Run-time settings</h2>")
	to := strings.Index(body, "</main>")
	if from < 0 || to < from {
		t.Fatalf("no run-time settings section:\n%s", body)
	}
	goldentest.Check(t, "runtime.html", []byte(body[from:to]))

	// The CSP hash is the hash of the style sheet the page really carries.
	_, css, _ := strings.Cut(body, "<style>")
	css, _, _ = strings.Cut(css, "</style>")
	sum := sha256.Sum256([]byte(css))
	if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(resp.Header.Get("Content-Security-Policy"), want) {
		t.Errorf("CSP %q lacks the hash of the page's style sheet, %q", resp.Header.Get("Content-Security-Policy"), want)
	}

	var v struct {
		Settings  []manage.Setting  `json:"settings"`
		Checklist *manage.Checklist `json:"checklist"`
		Notes     []store.Note      `json:"notes"`
		Rules     []heartbeat.RuleStatus
	}
	resp = do(t, s, "GET", "/api/status", nil, "", "")
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("decode /api/status: %v", err)
	}
	want := knownRuntime()
	if len(v.Settings) != 2 || v.Settings[0] != want.Settings[0] || v.Checklist == nil || *v.Checklist != *want.Checklist ||
		len(v.Notes) != 2 || v.Notes[0].Text != "<script>alert(1)</script>" {
		t.Errorf("/api/status = settings %v checklist %v notes %v, want %v", v.Settings, v.Checklist, v.Notes, want)
	}
}

// TestPageWithoutRuntime: with no Runtime the sections are left out and
// /api/status carries empty lists.
func TestPageWithoutRuntime(t *testing.T) {
	f := newFake(t0, 1)
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}})
	b, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	if strings.Contains(string(b), "Run-time settings") || strings.Contains(string(b), "Model's notes") {
		t.Error("the page shows run-time sections it knows nothing of")
	}
	empty := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}, Runtime: func(context.Context) (manage.Runtime, error) {
		return manage.Runtime{Checklist: &manage.Checklist{Path: "/etc/vigil/HEARTBEAT.md"}}, nil
	}})
	b, _ = io.ReadAll(do(t, empty, "GET", "/", nil, "", "").Body)
	for _, want := range []string{"None: every value comes from the config file or its default.", "No notes.", "<code>/etc/vigil/HEARTBEAT.md</code></td><td>heartbeat.checklist</td>"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestPageWithheldSections: sections cmd withheld (a [manage] remote
// without get or notes) say so and how to allow them, in place of their
// rows; the checklist row stays.
func TestPageWithheldSections(t *testing.T) {
	f := newFake(t0, 3)
	rt := manage.Runtime{Checklist: &manage.Checklist{Path: "/etc/vigil/HEARTBEAT.md"}, Withheld: []string{"get", "notes"}}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}, Runtime: func(context.Context) (manage.Runtime, error) { return rt, nil }})
	resp := do(t, s, "GET", "/", nil, "", "")
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, want := range []string{
		`not shown here: add &#34;get&#34; to [manage] remote.`,
		`not shown here: add &#34;notes&#34; to [manage] remote.`,
		`<code>/etc/vigil/HEARTBEAT.md</code>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, gone := range []string{"No notes.", "None: every value comes from the config file"} {
		if strings.Contains(body, gone) {
			t.Errorf("page says %q for a withheld section", gone)
		}
	}
}

// TestAckButton: the page lists the problems firing, each with who
// acknowledged it or, when [manage] remote allows "ack", its Acknowledge
// button, a POST with the form token naming the problem's alert id; one
// that resolved meanwhile is answered 409.
func TestAckButton(t *testing.T) {
	f := newFake(t0, 1)
	f.problems = []alert.Alert{
		{ID: "fake-01", Time: t0.Add(-time.Hour), Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot", State: alert.StateFiring, Summary: "air at 40 °C"},
		{ID: "fake-02", Time: t0.Add(-time.Minute), Severity: alert.Warning, Source: alert.SourceLLM, State: alert.StateFiring, Summary: "door <open>",
			AckedBy: "telegram chat 1 user 2 (@ann)", AckedAt: t0.Add(-30 * time.Second)},
	}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status", "ack"}}})
	body, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	for _, want := range []string{`<table id="problems">`, "too_hot: air at 40 °C", "llm: door &lt;open&gt;",
		`<form method="post" action="/do/ack"><input type="hidden" name="csrf" value="` + s.Token() + `"><input type="hidden" name="target" value="fake-01"><button class="ack">Acknowledge</button></form>`,
		"telegram chat 1 user 2 (@ann) at 11:59"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(string(body), `action="/do/ack"`); n != 1 {
		t.Errorf("%d Acknowledge buttons, want 1 (the other is acknowledged)", n)
	}

	tok := func(target string) url.Values { return url.Values{"csrf": {s.Token()}, "target": {target}} }
	resp := do(t, s, "POST", "/do/ack", tok("fake-01"), "", "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?done=ack" || !slices.Equal(f.calls, []string{"ack fake-01"}) {
		t.Errorf("POST /do/ack = %d to %q, calls %v; want 303 to /?done=ack and the ack run", resp.StatusCode, resp.Header.Get("Location"), f.calls)
	}
	f.resolved = []string{"fake-03"}
	for _, tt := range []struct {
		name string
		form url.Values
		code int
	}{
		{"no target", tok(""), http.StatusBadRequest},
		{"two words", tok("too hot"), http.StatusBadRequest},
		{"resolved meanwhile", tok("fake-03"), http.StatusConflict},
		{"no token", url.Values{"target": {"fake-01"}}, http.StatusForbidden},
	} {
		if resp := do(t, s, "POST", "/do/ack", tt.form, "", ""); resp.StatusCode != tt.code {
			t.Errorf("%s: POST /do/ack = %d, want %d", tt.name, resp.StatusCode, tt.code)
		}
	}
	if len(f.calls) != 1 {
		t.Errorf("calls = %v, want only the first ack", f.calls)
	}

	s2 := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}})
	body, _ = io.ReadAll(do(t, s2, "GET", "/", nil, "", "").Body)
	if strings.Contains(string(body), `action="/do/ack"`) {
		t.Error("the page shows an Acknowledge button [manage] remote does not allow")
	}
	if resp := do(t, s2, "POST", "/do/ack", url.Values{"csrf": {s2.Token()}, "target": {"fake-01"}}, "", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /do/ack without ack in [manage] remote = %d, want 403", resp.StatusCode)
	}
}

// TestPageSensorErrors: the page and /api/status list every sensor that
// failed in the last sample, escaped, whether or not a reading of it was
// ever seen.
func TestPageSensorErrors(t *testing.T) {
	f := newFake(t0, 3)
	f.sensorErrors = map[string]string{"rack": `hwmon: no device named "lm75" <x>`, "air": "tmp102: i2c bus 7: not found"}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}}})
	b, _ := io.ReadAll(do(t, s, "GET", "/", nil, "", "").Body)
	for _, want := range []string{`<ul class="err" id="sensor-errors"><li>air: tmp102: i2c bus 7: not found</li><li>rack: hwmon: no device named &#34;lm75&#34; &lt;x&gt;</li></ul>`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	var v struct {
		SensorErrors map[string]string `json:"sensor_errors"`
	}
	if err := json.NewDecoder(do(t, s, "GET", "/api/status", nil, "", "").Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if len(v.SensorErrors) != 2 || v.SensorErrors["rack"] != f.sensorErrors["rack"] {
		t.Errorf("/api/status sensor_errors = %v, want %v", v.SensorErrors, f.sensorErrors)
	}
}
