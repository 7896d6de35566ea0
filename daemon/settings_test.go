package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// infoAlerts lists the summaries of the info system alerts queued.
func queuedInfo(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	err := db.View(func(tx *store.Tx) error {
		es, err := tx.Pending("log", 100)
		for _, e := range es {
			if e.Alert.Source == alert.SourceSystem && e.Alert.Severity == alert.Info {
				out = append(out, e.Alert.Summary)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	mqttSet     = transport.Source{Channel: transport.ChannelMQTT, Topic: "vigil/e2e/cmd/set"}
	telegramSrc = transport.Source{Channel: transport.ChannelTelegram, Chat: 1, User: 123}
)

// TestRemoteSetGatedByManage: MQTT and Telegram may set only when
// [manage] remote lists "set" (toggle too), get only with "get"; the CLI
// and the socket always may. A refused change stores and queues nothing;
// an accepted one is stored with its source and queued as an info alert.
func TestRemoteSetGatedByManage(t *testing.T) {
	t.Run("default remote", func(t *testing.T) {
		a := newOverlayApp(t, "")
		ctx := transport.WithSource(context.Background(), mqttSet)
		if _, err := a.cmds.Set(ctx, "heartbeat.interval", "10m"); !errors.Is(err, alert.ErrNotAllowed) {
			t.Fatalf("mqtt Set with the default [manage] = %v, want ErrNotAllowed", err)
		}
		tctx := transport.WithSource(context.Background(), telegramSrc)
		if _, err := a.cmds.Toggle(tctx, "too_hot"); !errors.Is(err, alert.ErrNotAllowed) {
			t.Fatalf("telegram Toggle with the default [manage] = %v, want ErrNotAllowed", err)
		}
		for verb, call := range map[string]func(context.Context) (string, error){
			"get":       func(ctx context.Context) (string, error) { return a.cmds.Get(ctx, "") },
			"unset":     func(ctx context.Context) (string, error) { return a.cmds.Unset(ctx, "heartbeat.interval") },
			"checklist": func(ctx context.Context) (string, error) { return a.cmds.Checklist(ctx, transport.ChecklistShow, "") },
			"logs":      func(ctx context.Context) (string, error) { return a.cmds.Logs(ctx, 5) },
			"notes":     func(ctx context.Context) (string, error) { return a.cmds.Notes(ctx, false) },
		} {
			if _, err := call(tctx); !errors.Is(err, alert.ErrNotAllowed) {
				t.Errorf("telegram %s with the default [manage] = %v, want ErrNotAllowed", verb, err)
			}
		}
		if st, _ := a.db.Settings(); len(st) != 0 {
			t.Errorf("a refused set stored %+v", st)
		}
		if got := queuedInfo(t, a.db); len(got) != 0 {
			t.Errorf("a refused set queued %q", got)
		}
		// The local socket may, whatever [manage] says.
		sctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
		if _, err := a.cmds.Set(sctx, "heartbeat.interval", "10m"); err != nil {
			t.Fatalf("socket Set: %v", err)
		}
	})
	t.Run("remote allows set", func(t *testing.T) {
		a := newOverlayApp(t, "\n[manage]\nremote = [\"status\", \"get\", \"set\"]\n")
		ctx := transport.WithSource(context.Background(), mqttSet)
		txt, err := a.cmds.Set(ctx, "heartbeat.interval", "10m")
		if err != nil || !strings.Contains(txt, "set to 10m") {
			t.Fatalf("mqtt Set = %q, %v", txt, err)
		}
		tctx := transport.WithSource(context.Background(), telegramSrc)
		if _, err := a.cmds.Toggle(tctx, "too_hot"); err != nil {
			t.Fatalf("telegram Toggle: %v", err)
		}
		if _, err := a.cmds.Set(tctx, "heartbeat.interval", "30s"); err == nil || !strings.Contains(err.Error(), `heartbeat.interval: must be at least 1m (got "30s")`) {
			t.Fatalf("telegram Set 30s = %v, want the validator's message", err)
		}
		got, err := a.cmds.Get(tctx, "")
		if err != nil || !strings.Contains(got, "by mqtt vigil/e2e/cmd/set") || !strings.Contains(got, "rule.too_hot.enabled") {
			t.Fatalf("telegram Get = %q, %v", got, err)
		}
		st, _ := a.db.Settings()
		if len(st) != 2 || st[0].Key != "heartbeat.interval" || st[0].By != "mqtt vigil/e2e/cmd/set" ||
			st[1].Key != "rule.too_hot.enabled" || st[1].Value != "false" || st[1].By != "telegram chat 1 user 123" {
			t.Fatalf("stored %+v", st)
		}
		want := []string{"heartbeat.interval set to 10m by mqtt vigil/e2e/cmd/set", "rule.too_hot.enabled set to false by telegram chat 1 user 123"}
		if got := queuedInfo(t, a.db); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("info alerts %q, want %q", got, want)
		}
		if _, err := a.cmds.Unset(tctx, "heartbeat.interval"); !errors.Is(err, alert.ErrNotAllowed) {
			t.Errorf("telegram Unset without \"unset\" = %v, want ErrNotAllowed", err)
		}
	})
}

// TestModelSetBounded: the model may set only heartbeat.interval, only
// when model_may lists "interval", and only within interval_min..max.
func TestModelSetBounded(t *testing.T) {
	ctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelModel})
	a := newOverlayApp(t, "")
	if _, err := a.cmds.Set(ctx, "heartbeat.interval", "20m"); !errors.Is(err, alert.ErrNotAllowed) {
		t.Fatalf("model Set with model_may = [pause] = %v, want ErrNotAllowed", err)
	}
	a = newOverlayApp(t, "")
	a.cfg.Heartbeat.ModelMay = []string{"pause", "interval"}
	for _, tt := range []struct {
		key, value string
		ok         bool
	}{
		{"heartbeat.interval", "20m", true},
		{"heartbeat.interval", "5m", false},
		{"heartbeat.interval", "7h", false},
		{"llm.model", "gpt-4o", false},
	} {
		_, err := a.cmds.Set(ctx, tt.key, tt.value)
		if (err == nil) != tt.ok {
			t.Errorf("model Set(%s, %s) = %v, want ok %v", tt.key, tt.value, err, tt.ok)
		}
	}
	if st, _ := a.db.Settings(); len(st) != 1 || st[0].By != "model" || st[0].Value != "20m" {
		t.Errorf("stored %+v, want the one 20m by model", st)
	}
}

// TestRemoteCannotRaiseTheBudget: with "set" in [manage] remote, MQTT and
// Telegram may lower heartbeat.max_llm_calls_per_day but not raise it above
// both the configured value and the value in force; the CLI and the socket
// (local root) may set any value. A refusal stores and queues nothing and
// says why, not "add set to [manage] remote".
func TestRemoteCannotRaiseTheBudget(t *testing.T) {
	const key = "heartbeat.max_llm_calls_per_day"
	a := newOverlayApp(t, "\n[manage]\nremote = [\"status\", \"get\", \"set\"]\n")
	mctx := transport.WithSource(context.Background(), mqttSet)
	tctx := transport.WithSource(context.Background(), telegramSrc)
	sctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	step := func(ctx context.Context, value, wantErr string) {
		t.Helper()
		before, _ := a.db.Settings()
		queued := len(queuedInfo(t, a.db))
		_, err := a.cmds.Set(ctx, key, value)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s Set(%s) = %v, want ok", transport.SourceOf(ctx), value, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s Set(%s) = %v, want an error with %q", transport.SourceOf(ctx), value, err, wantErr)
		}
		if errors.Is(err, alert.ErrNotAllowed) {
			t.Errorf("%s Set(%s) = %v: ErrNotAllowed makes the transports answer \"add set to [manage] remote\", which is not why", transport.SourceOf(ctx), value, err)
		}
		if after, _ := a.db.Settings(); !slices.Equal(before, after) {
			t.Errorf("a refused Set(%s) changed the stored settings: %+v, was %+v", value, after, before)
		}
		if n := len(queuedInfo(t, a.db)); n != queued {
			t.Errorf("a refused Set(%s) queued an info alert", value)
		}
	}
	const above = "may lower the daily LLM budget, not raise it: at most 96, the configured value"
	step(mctx, "2000000000", above+" (got 2000000000)")
	step(mctx, "0x7fffffff", above+" (got 2147483647)")
	step(tctx, "97", above+" (got 97)")
	step(mctx, "10", "")
	step(tctx, "96", "")  // back up to the file's value
	step(sctx, "500", "") // the device's own CLI may raise it
	step(mctx, "400", "") // and then a remote may lower it again
	step(tctx, "401", "may lower the daily LLM budget, not raise it: at most 400, the value in force (got 401)")
	step(mctx, "many", `heartbeat.max_llm_calls_per_day: must be an integer (got "many")`)
	if v, _ := a.current().Get(key); v != "400" {
		t.Errorf("%s in force = %s, want 400", key, v)
	}
}

// TestModelNamesBounded: llm.model and llm.scout_model are names, from
// every channel: a path, a space or a control character is refused with
// the validator's message and nothing is stored.
func TestModelNamesBounded(t *testing.T) {
	// [manage] models lets a remote channel choose the last name below.
	a := newOverlayApp(t, "\n[manage]\nremote = [\"status\", \"get\", \"set\"]\nmodels = [\"meta-llama/Llama-3.1-8B-Instruct:q4\"]\n")
	for _, src := range []transport.Source{mqttSet, telegramSrc, {Channel: transport.ChannelSocket}} {
		ctx := transport.WithSource(context.Background(), src)
		for key, tt := range map[string][2]string{
			"llm.model":       {"../../etc/passwd", `llm.model: must be a model name, not a path with . or .. in it (got "../../etc/passwd")`},
			"llm.scout_model": {"tiny\x1b[2J", `llm.scout_model: must be printable ASCII without spaces (got "tiny\x1b[2J")`},
		} {
			if _, err := a.cmds.Set(ctx, key, tt[0]); err == nil || !strings.Contains(err.Error(), tt[1]) {
				t.Errorf("%s Set(%s, %q) = %v, want %q", src, key, tt[0], err, tt[1])
			}
		}
		if _, err := a.cmds.Set(ctx, "llm.model", strings.Repeat("m", 129)); err == nil || !strings.Contains(err.Error(), "llm.model: must be at most 128 bytes (got 129)") {
			t.Errorf("%s Set(llm.model, 129 bytes) = %v", src, err)
		}
	}
	if st, _ := a.db.Settings(); len(st) != 0 {
		t.Errorf("refused model names stored %+v", st)
	}
	if _, err := a.cmds.Set(transport.WithSource(context.Background(), mqttSet), "llm.model", "meta-llama/Llama-3.1-8B-Instruct:q4"); err != nil {
		t.Errorf("a model name with a slash and a colon: %v", err)
	}
}

// TestOverlayEntryNoLongerValid: a stored entry for a rule the file no
// longer has is left out with one ERROR naming it and who set it; the
// config still loads, and the entry stays stored.
func TestOverlayEntryNoLongerValid(t *testing.T) {
	a := newOverlayApp(t, "")
	sctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	for _, kv := range [][2]string{{"rule.too_hot.enabled", "false"}, {"heartbeat.interval", "10m"}} {
		if _, err := a.cmds.Set(sctx, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	stored, _ := a.db.Settings()
	path := a.base.Name
	b, _ := os.ReadFile(path)
	noRule := strings.Replace(string(b), "[[rule]]\nname = \"too_hot\"\nwhen = \"air.temperature > 100\"\n", "", 1)
	if noRule == string(b) {
		t.Fatal("could not remove the rule from the test config")
	}
	base := &manage.Base{Name: filepath.Join(t.TempDir(), "config.toml"), Data: []byte(noRule)}
	var logBuf strings.Builder
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	cfg, used, err := base.Resolve(stored, log)
	if err != nil {
		t.Fatalf("resolve with a stale entry: %v", err)
	}
	if v, _ := cfg.Get("heartbeat.interval"); v != "10m" || len(used) != 1 {
		t.Errorf("interval %s, used %+v: want the valid entry kept", v, used)
	}
	if n := strings.Count(logBuf.String(), "level=ERROR"); n != 1 ||
		!strings.Contains(logBuf.String(), "key=rule.too_hot.enabled") || !strings.Contains(logBuf.String(), "set_by=socket") {
		t.Errorf("want one ERROR naming rule.too_hot.enabled and socket, got:\n%s", logBuf.String())
	}
}

// TestChecklistLogsNotes: the checklist set from afar is what the engine
// reads while it exists, an empty one says so, reset goes back; logs lists
// the accepted commands; notes lists and clears the model's notes.
func TestChecklistLogsNotes(t *testing.T) {
	a := newOverlayApp(t, "")
	ctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	fileText := "# file\n- the file's item\n"
	if err := os.WriteFile(a.cfg.Heartbeat.Checklist, []byte(fileText), 0o644); err != nil {
		t.Fatal(err)
	}
	read := manage.ChecklistFunc(a.cfg)
	if txt, _, err := read(); err != nil || !strings.Contains(txt, "the file's item") {
		t.Fatalf("checklist before set = %q, %v", txt, err)
	}
	out, err := a.cmds.Checklist(ctx, transport.ChecklistSet, "# afar\n- the remote item\n")
	if err != nil || strings.Contains(out, "will not call the LLM") {
		t.Fatalf("Checklist set = %q, %v", out, err)
	}
	over := filepath.Join(a.cfg.Device.StateDir, "HEARTBEAT.md")
	if fi, err := os.Stat(over); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat %s = %v, %v; want mode 0644", over, fi, err)
	}
	if txt, _, err := read(); err != nil || !strings.Contains(txt, "the remote item") {
		t.Fatalf("checklist after set = %q, %v; want the one set from afar", txt, err)
	}
	if out, err := a.cmds.Checklist(ctx, transport.ChecklistShow, ""); err != nil || !strings.Contains(out, over) || !strings.Contains(out, "the remote item") {
		t.Fatalf("Checklist show = %q, %v", out, err)
	}
	if out, err := a.cmds.Checklist(ctx, transport.ChecklistSet, "# only a heading\n<!-- and a comment -->\n"); err != nil || !strings.Contains(out, "will not call the LLM") {
		t.Fatalf("Checklist set of a comment-only text = %q, %v; want it to say the LLM is not called", out, err)
	}
	if _, err := a.cmds.Checklist(ctx, transport.ChecklistSet, strings.Repeat("- x\n", 5000)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Checklist set of 20 KB = %v, want the size limit", err)
	}
	if out, err := a.cmds.Checklist(ctx, transport.ChecklistReset, ""); err != nil || !strings.Contains(out, a.cfg.Heartbeat.Checklist) {
		t.Fatalf("Checklist reset = %q, %v", out, err)
	}
	if txt, _, err := read(); err != nil || !strings.Contains(txt, "the file's item") {
		t.Fatalf("checklist after reset = %q, %v; want the file's", txt, err)
	}

	logs, err := a.cmds.Logs(ctx, 5)
	if err != nil || !strings.Contains(logs, "no runs yet") || !strings.Contains(logs, "command checklist set by socket") {
		t.Fatalf("Logs = %q, %v", logs, err)
	}

	if err := a.db.AddNote(store.Note{Time: a.clock.Now().Add(-time.Hour), Text: "fan was noisy"}); err != nil {
		t.Fatal(err)
	}
	if out, err := a.cmds.Notes(ctx, false); err != nil || !strings.Contains(out, "(1h0m0s ago) fan was noisy") {
		t.Fatalf("Notes = %q, %v", out, err)
	}
	if out, err := a.cmds.Notes(ctx, true); err != nil || out != "1 notes cleared" {
		t.Fatalf("Notes clear = %q, %v", out, err)
	}
	if ns, _ := a.db.Notes(); len(ns) != 0 {
		t.Fatalf("notes after clear: %+v", ns)
	}
}

// intervalThinker is a model that sets its own interval during the run,
// as the agent's set_interval tool does.
type intervalThinker struct {
	set  func(context.Context, time.Duration) (string, error)
	ds   []time.Duration // set in turn, in one run
	got  string
	gerr error
}

func (m *intervalThinker) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	for _, d := range m.ds {
		if m.got, m.gerr = m.set(ctx, d); m.gerr != nil {
			break
		}
	}
	return agent.Decision{Outcome: agent.OutcomeOK}, nil
}

// TestModelSetsIntervalDuringRun: the model's set_interval, called inside
// a heartbeat run of a running daemon, is stored, audited and applied
// once the run ends (applying waits for the run: no deadlock, even when
// the model sets it twice in one run).
func TestModelSetsIntervalDuringRun(t *testing.T) {
	a := newOverlayApp(t, "")
	a.cfg.Heartbeat.ModelMay = []string{"pause", "interval"}
	m := &intervalThinker{set: a.cmds.setModelInterval, ds: []time.Duration{15 * time.Minute, 20 * time.Minute}}
	done := startRun(t, a, m)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a heartbeat whose model set its interval did not finish: deadlock")
	}
	if m.gerr != nil || !strings.Contains(m.got, "heartbeat.interval set to 20m") {
		t.Fatalf("set_interval = %q, %v", m.got, m.gerr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		a.applyMu.Lock()
		v, _ := a.cfg.Get("heartbeat.interval")
		a.applyMu.Unlock()
		if v == "20m" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("interval still %s after the run, want 20m applied", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := queuedInfo(t, a.db); strings.Join(got, "|") != "heartbeat.interval set to 15m by model|heartbeat.interval set to 20m by model" {
		t.Errorf("info alerts %q", got)
	}
}

// The verbs that came before the overlay follow [manage] remote too: a
// device whose remote list is ["status"] answers status (and /sensors, part
// of status) over MQTT and Telegram but refuses check, pause, resume and
// test-alert there, while the control socket may still do all of them.
func TestOlderVerbsFollowManageRemote(t *testing.T) {
	a := newOverlayApp(t, "\n[manage]\nremote = [\"status\"]\n")
	for _, src := range []transport.Source{mqttSet, telegramSrc} {
		ctx := transport.WithSource(context.Background(), src)
		if _, err := a.cmds.Status(ctx); err != nil {
			t.Errorf("%s status with remote = [status]: %v", src.Channel, err)
		}
		if _, err := a.cmds.Sensors(ctx); err != nil {
			t.Errorf("%s sensors with remote = [status]: %v", src.Channel, err)
		}
		for verb, call := range map[string]func(context.Context) (string, error){
			"check":      a.cmds.Check,
			"pause":      func(ctx context.Context) (string, error) { return a.cmds.Pause(ctx, 30*time.Minute) },
			"resume":     a.cmds.Resume,
			"test-alert": a.cmds.TestAlert,
		} {
			if _, err := call(ctx); !errors.Is(err, alert.ErrNotAllowed) {
				t.Errorf("%s %s with remote = [status] = %v, want ErrNotAllowed", src.Channel, verb, err)
			}
		}
	}
	if p, _ := a.engine.Status(context.Background()); !p.PausedUntil.IsZero() {
		t.Errorf("a refused pause paused heartbeats until %s", p.PausedUntil)
	}
	sock := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	if _, err := a.cmds.Pause(sock, 30*time.Minute); err != nil {
		t.Errorf("socket pause: %v; the local socket may do everything", err)
	}
}

// TestOlderVerbsReadConfigUnderLock: pause and the socket's test-alert,
// sent while sets are applied, read the config in force under the lock
// that apply replaces it under (go test -race finds the read otherwise).
func TestOlderVerbsReadConfigUnderLock(t *testing.T) {
	a := newOverlayApp(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.runCtx = ctx // as cmdRun: a set applies to the running engine
	sock := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelSocket})
	stateDir := a.cfg.Device.StateDir
	srv := &ctlServer{cmds: a.cmds, log: slog.New(slog.DiscardHandler), stateDir: stateDir}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10 {
			if _, err := a.cmds.Set(sock, "heartbeat.interval", []string{"15m", "20m"}[i%2]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 10 {
		if _, err := a.cmds.Pause(sock, 30*time.Minute); err != nil {
			t.Fatal(err)
		}
		if r := srv.do(sock, control.Request{Cmd: "test-alert", Severity: "info", StateDir: stateDir}); r.Error != "" {
			t.Fatal(r.Error)
		}
	}
	<-done
}

// blockingThinker holds a heartbeat run until release is closed.
type blockingThinker struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingThinker) Think(ctx context.Context, in agent.Input) (agent.Decision, error) {
	close(b.started)
	<-b.release
	return agent.Decision{Outcome: agent.OutcomeOK}, nil
}

// startRun starts a forced heartbeat on a, as a running daemon does
// (changes apply to the engine), with th as its model; done gets the run's
// error.
func startRun(t *testing.T, a *App, th heartbeat.Thinker) (done chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a.runCtx = ctx
	writeFile(t, a.cfg.Heartbeat.Checklist, "- check the air\n")
	ec, err := a.engineConfig(a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.engine.Reconfigure(ec, nil, th)
	done = make(chan error, 1)
	go func() {
		_, err := a.cmds.CheckWith(ctx, heartbeat.CheckOptions{}, nil)
		done <- err
	}()
	return done
}

// blockedRun starts a forced heartbeat (startRun) whose model holds the
// run until th.release is closed; done gets the run's error.
func blockedRun(t *testing.T, a *App) (th *blockingThinker, done chan error) {
	t.Helper()
	a.applyWait = 300 * time.Millisecond // the run holds every change back: don't wait 5 s each
	th = &blockingThinker{started: make(chan struct{}), release: make(chan struct{})}
	done = startRun(t, a, th)
	<-th.started
	return th, done
}

// TestToggleTwiceDuringARunCancelsOut: two toggles while a run holds the
// first back flip what is stored, not what is in force, so they cancel
// out instead of both turning the rule off.
func TestToggleTwiceDuringARunCancelsOut(t *testing.T) {
	a := newOverlayApp(t, "")
	th, done := blockedRun(t, a)
	sock := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	var answers []string
	for range 2 {
		out, err := a.cmds.Toggle(sock, "too_hot")
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, firstLine(out))
	}
	close(th.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"rule.too_hot.enabled set to false (was true)", "rule.too_hot.enabled set to true (was false)"}
	if !slices.Equal(answers, want) {
		t.Errorf("two toggles answered %q, want %q", answers, want)
	}
	if st, _ := a.db.Settings(); len(st) != 1 || st[0].Value != "true" {
		t.Errorf("stored %+v, want rule.too_hot.enabled back to true", st)
	}
}

// TestSetDuringARunAnswersAtOnce: a person's set while a heartbeat run is
// in progress (an LLM call can take a minute) is stored and answered
// within applyWait, saying it applies when the run ends, instead of
// holding the control socket (or MQTT's one-at-a-time commands) for the
// whole run; it is applied once the run ends.
func TestSetDuringARunAnswersAtOnce(t *testing.T) {
	a := newOverlayApp(t, "")
	th, done := blockedRun(t, a)
	sock := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	answered := make(chan string, 1)
	go func() {
		out, err := a.cmds.Set(sock, "heartbeat.interval", "20m")
		if err != nil {
			out = "error: " + err.Error()
		}
		answered <- out
	}()
	select {
	case out := <-answered:
		if !strings.Contains(out, "heartbeat.interval set to 20m") || !strings.Contains(out, "applies when the heartbeat in progress ends") {
			t.Errorf("set during a run answered %q, want the value and that it applies when the run ends", out)
		}
	case <-time.After(a.applyWait + 5*time.Second):
		t.Fatal("set during a run did not answer while the run went on")
	}
	if st, _ := a.db.Settings(); len(st) != 1 || st[0].Value != "20m" {
		t.Errorf("stored %+v, want 20m stored before the run ends", st)
	}
	close(th.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for v, _ := a.current().Get("heartbeat.interval"); v != "20m"; v, _ = a.current().Get("heartbeat.interval") {
		if time.Now().After(deadline) {
			t.Fatalf("interval %s after the run ended, want 20m applied", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRemoteStatusWithholdsSettingsAndNotes: status is not a way around
// the get and notes verbs. Over Telegram (and MQTT, and the page) with the
// default [manage] remote, status says the settings and notes are not
// shown and how to allow them; the socket shows them; a remote list with
// get and notes shows them remotely too.
func TestRemoteStatusWithholdsSettingsAndNotes(t *testing.T) {
	a := newOverlayApp(t, "")
	sock := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	if _, err := a.cmds.Set(sock, "heartbeat.interval", "20m"); err != nil {
		t.Fatal(err)
	}
	if err := a.db.AddNote(store.Note{Time: time.Now(), Text: "vents stick after rain"}); err != nil {
		t.Fatal(err)
	}
	tg := transport.WithSource(context.Background(), telegramSrc)
	out, err := a.cmds.Status(tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`notes:    not shown here: add "notes" to [manage] remote`, `settings: not shown here: add "get" to [manage] remote`} {
		if !strings.Contains(out, want) {
			t.Errorf("telegram status lacks %q:\n%s", want, out)
		}
	}
	// The settings row (the accepted-commands audit still lists the set,
	// as the info alert about it went to every transport).
	row := regexp.MustCompile(`heartbeat\.interval\s+20m\s+set `)
	if row.MatchString(out) {
		t.Errorf("telegram status shows a setting although get is not allowed:\n%s", out)
	}
	out, _ = a.cmds.Status(sock)
	if !row.MatchString(out) || !strings.Contains(out, "notes:    1 (newest") {
		t.Errorf("socket status should show the setting and the notes:\n%s", out)
	}
	a.cfg.Manage.Remote = append(a.cfg.Manage.Remote, "get", "notes")
	out, _ = a.cmds.Status(tg)
	if !row.MatchString(out) || strings.Contains(out, "not shown here") {
		t.Errorf("with get and notes allowed, telegram status should show both:\n%s", out)
	}
}

// TestChecklistControlCharactersRefused: a checklist with a terminal
// escape, a bell or a NUL is refused on every channel (the CLI through the
// socket, MQTT's cmd/checklist, Telegram, the page), naming its line and
// the character, and nothing is written; the file in force with one is an
// error at the run that reads it.
func TestChecklistControlCharactersRefused(t *testing.T) {
	a := newOverlayApp(t, "\n[manage]\nremote = [\"status\", \"checklist\"]\n")
	over := filepath.Join(a.cfg.Device.StateDir, "HEARTBEAT.md")
	for _, ch := range []string{transport.ChannelSocket, transport.ChannelMQTT, transport.ChannelTelegram, transport.ChannelWeb} {
		ctx := transport.WithSource(context.Background(), transport.Source{Channel: ch})
		for text, want := range map[string]string{
			"# afar\n- red \x1b[31malert\n": "checklist line 2: must not contain U+001B (ESC)",
			"- a\x00b\n":                    "checklist line 1: must not contain U+0000 (NUL)",
			"- ring\a\n":                    "checklist line 1: must not contain U+0007 (BEL)",
		} {
			out, err := a.cmds.Checklist(ctx, transport.ChecklistSet, text)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Checklist set %q from %s = %q, %v; want %q", text, ch, out, err, want)
			}
			if _, err := os.Stat(over); err == nil {
				t.Fatalf("Checklist set %q from %s wrote %s", text, ch, over)
			}
		}
	}
	if err := os.WriteFile(a.cfg.Heartbeat.Checklist, []byte("- a\x1b]0;owned\a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if txt, _, err := manage.ChecklistFunc(a.cfg)(); err == nil || !strings.Contains(err.Error(), "checklist line 1: must not contain U+001B (ESC)") {
		t.Errorf("checklist file with an escape = %q, %v; want it refused", txt, err)
	}
}

// TestSetHoldsTheConfigBounds: a run-time set, from any channel, is held
// to the bounds the file is (config's one table of them), with the same
// message, and the refused value is not kept.
func TestSetHoldsTheConfigBounds(t *testing.T) {
	a := newOverlayApp(t, "\n[manage]\nremote = [\"status\", \"get\", \"set\"]\n")
	for _, ch := range []string{transport.ChannelSocket, transport.ChannelMQTT, transport.ChannelTelegram, transport.ChannelWeb} {
		ctx := transport.WithSource(context.Background(), transport.Source{Channel: ch})
		for _, tt := range []struct{ key, value, want string }{
			{"heartbeat.interval", "25h", `heartbeat.interval: must be at most 24h (got "25h"); allowed: "0" (off) or 1m to 24h`},
			{"heartbeat.max_quiet", "200h", `heartbeat.max_quiet: must be at most 168h (got "200h"); allowed: "0" (never force a call) or 1s to 168h`},
			{"heartbeat.alert_cooldown", "1s", `heartbeat.alert_cooldown: must be at least 1m (got "1s"); allowed: "0" (no cooldown) or 1m to 168h`},
		} {
			if out, err := a.cmds.Set(ctx, tt.key, tt.value); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Set(%s, %s) from %s = %q, %v; want %q", tt.key, tt.value, ch, out, err, tt.want)
			}
		}
	}
	if st, _ := a.db.Settings(); len(st) != 0 {
		t.Errorf("settings kept after refusals: %+v", st)
	}
}
