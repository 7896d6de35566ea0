package daemon

// Reload policy (SIGHUP, `systemctl reload vigil`). The config file and the
// checklist are read and validated by the same code as at start, so an error
// names the file and line. An invalid config changes nothing: the daemon
// runs on with the old one and logs one ERROR line. A valid one is applied
// at once, touching only what changed:
//   - heartbeat settings and rules go to the running engine (rules keep
//     their state by name);
//   - sensors are reopened only when a [[sensor]] changed; one whose
//     driver, bus, address, path or serial changed also forgets what is
//     usual for it (its baseline), with a notice (baseline.go);
//   - the LLM client is rebuilt only when [llm] changed;
//   - a transport is restarted only when its own section changed (MQTT
//     publishes "offline", disconnects and reconnects with "online";
//     Telegram restarts its poller).
//   - the status page shows and runs what the config in force says
//     ([manage] remote, the rules, device.timezone) from the next request.
// What cannot change under a running daemon (the device ID, the state
// directory, the board, turning a transport on or off, which would add
// or remove an outbox, and the status page's [http] listener and login)
// keeps its old value with a WARN line saying that a restart applies it.

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// liveTransport is a network transport as the engine sees it for the whole
// life of the daemon: a reload that changes the transport's section
// replaces what it forwards to and restarts its connection loop.
type liveTransport struct {
	name string
	log  *slog.Logger

	mu     sync.RWMutex
	cur    Transport
	cancel context.CancelFunc
	done   chan struct{}

	bg *sync.WaitGroup // the App's: owns the announcements
}

var (
	_ heartbeat.Notifier    = (*liveTransport)(nil)
	_ heartbeat.Publisher   = (*liveTransport)(nil)
	_ heartbeat.Connector   = (*liveTransport)(nil)
	_ heartbeat.Reconnector = (*liveTransport)(nil)
)

func (t *liveTransport) Name() string { return t.name }

func (t *liveTransport) current() Transport {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.cur
}

func (t *liveTransport) Notify(ctx context.Context, a alert.Alert) error {
	return t.current().Notifier.Notify(ctx, a)
}

// Ready is the current transport's first connection; one that does not
// connect (Telegram) is ready at once.
func (t *liveTransport) Ready() <-chan struct{} {
	if c, ok := t.current().Notifier.(heartbeat.Connector); ok {
		return c.Ready()
	}
	now := make(chan struct{})
	close(now)
	return now
}

// NextConnect is the current transport's next connection; one that does
// not connect (Telegram) has none: the channel is never closed. A transport
// a reload replaces meanwhile leaves the delivery loop to its backoff once.
func (t *liveTransport) NextConnect() <-chan struct{} {
	if r, ok := t.current().Notifier.(heartbeat.Reconnector); ok {
		return r.NextConnect()
	}
	return nil
}

func (t *liveTransport) PublishHeartbeat(ctx context.Context, hb transport.Heartbeat) error {
	if p := t.current().Publisher; p != nil {
		return p.PublishHeartbeat(ctx, hb)
	}
	return nil
}

func (t *liveTransport) PublishSensors(ctx context.Context, snap device.Snapshot) error {
	if p := t.current().Publisher; p != nil {
		return p.PublishSensors(ctx, snap)
	}
	return nil
}

// start runs the current transport's connection loop until stop or until
// parent ends.
func (t *liveTransport) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	run := t.current().Run
	t.mu.Lock()
	t.cancel, t.done = cancel, done
	t.mu.Unlock()
	go func() {
		defer close(done)
		if err := run(ctx); err != nil && ctx.Err() == nil {
			t.log.Error("transport stopped", "transport", t.name, "err", err)
		}
	}()
}

// stop ends the connection loop and waits for its shutdown work (MQTT's
// "offline").
func (t *liveTransport) stop() {
	t.mu.RLock()
	cancel, done := t.cancel, t.done
	t.mu.RUnlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// replace stops the running transport and starts next in its place.
func (t *liveTransport) replace(parent context.Context, next Transport) {
	t.stop()
	t.mu.Lock()
	t.cur = next
	t.mu.Unlock()
	t.start(parent)
}

// infoAnnouncer is a transport that tells its watchers about the config
// in force (MQTT's retained info topic: the intervals, the tags, the
// config's digest).
type infoAnnouncer interface {
	SetInfo(ctx context.Context, in transport.DeviceInfo) error
}

// announce tells the transport's watchers about the config in force, in
// the background: a publish may wait for the broker, and apply runs under
// the daemon's locks.
func (t *liveTransport) announce(ctx context.Context, in transport.DeviceInfo) {
	ann, ok := t.current().Notifier.(infoAnnouncer)
	if !ok {
		return
	}
	t.bg.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := ann.SetInfo(ctx, in); err != nil {
			t.log.Warn("announce the config in force", "transport", t.name, "err", err)
		}
	})
}

// DeviceInfo is what the transports announce about cfg, the config in
// force (with the checklist in force in its digest).
func DeviceInfo(cfg *config.Config) transport.DeviceInfo {
	return transport.DeviceInfo{Interval: HeartbeatSpacing(cfg), SampleInterval: cfg.Heartbeat.SampleInterval.Duration,
		Tags: cfg.Device.Tags, Config: manage.Digest(cfg)}
}

// announceInfo tells every running transport's watchers about cfg, the
// config in force, after an accepted change; each says nothing when
// nothing it shows changed. Outside the daemon nothing runs.
func (a *App) announceInfo(cfg *config.Config) {
	if a.runCtx == nil {
		return
	}
	in := DeviceInfo(cfg)
	for _, lt := range a.live {
		lt.announce(a.runCtx, in)
	}
}

// Reload re-reads and applies the config with the run-time overlay (see
// the policy at the top and in package manage), as SIGHUP does.
func (a *App) Reload(ctx context.Context) {
	a.reload(ctx, a.log)
}

func (a *App) reload(ctx context.Context, log *slog.Logger) {
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	cfg, base, gen, err := a.loadForReload(log)
	if err == nil {
		err = a.apply(cfg, log, "config reloaded")
	}
	if err != nil {
		log.Error("config reload rejected: still running on the previous config", "err", err)
		return
	}
	defer a.dropShadowed(ctx, cfg) // after setMu is unlocked
	a.setMu.Lock()
	defer a.setMu.Unlock()
	a.base, a.latest = base, cfg
	if a.gen != gen {
		// A change was stored while the reload applied: it was validated
		// against the previous base, and applies once this reload is done
		// (its apply waits for applyMu). Resolve what is stored now.
		stored, err := a.db.Settings()
		if err == nil {
			a.latest, _, err = base.Resolve(stored, log)
		}
		if err != nil {
			a.latest = cfg
			log.Error("read the run-time settings after the reload: a change stored meanwhile applies at the next one", "err", err)
		}
	}
}

// applyChange puts the latest stored config in force in the running
// daemon, after a set or unset stored its change (the caller no longer
// holds setMu), and returns a note for the answer: "" when it applied,
// else why not yet. Applying waits for a heartbeat run in progress
// (Reconfigure), so it runs in the background and takes the latest config
// under applyMu: whichever change applies last applies every stored one,
// in any order. A change the model made comes from inside a run, which
// cannot end while the model waits: it is not waited for. Outside the
// daemon (the CLI on the state file) there is nothing running: the latest
// config just becomes the App's.
func (a *App) applyChange(ctx context.Context) string {
	if a.runCtx == nil {
		a.setMu.Lock()
		a.cfg = a.latest
		a.setMu.Unlock()
		return ""
	}
	done := make(chan error, 1)
	a.bg.Go(func() { done <- a.applyLatest() })
	wait := a.applyWait
	if transport.SourceOf(ctx).Channel == transport.ChannelModel {
		wait = 0
	}
	select {
	case err := <-done:
		if err != nil {
			return "stored, but not applied: " + err.Error() + "; a restart or SIGHUP applies it"
		}
		return ""
	case <-a.clock.After(wait):
		return "stored; it applies when the heartbeat in progress ends"
	}
}

// applyLatest applies config.toml's base with the stored overlay, as the
// last change stored left it.
func (a *App) applyLatest() error {
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	a.setMu.Lock()
	cfg := a.latest
	a.setMu.Unlock()
	err := a.apply(cfg, a.log, "setting applied")
	if err != nil {
		a.log.Error("setting stored, but applying it failed: a restart or SIGHUP applies it", "err", err)
	}
	return err
}

// apply puts a validated config into the running daemon, touching only what
// changed, and logs msg with what changed. An error changes nothing.
func (a *App) apply(cfg *config.Config, log *slog.Logger, msg string) error {
	old := a.cfg
	copied := *cfg // what cannot change under a running daemon is put back on a copy: cfg may be shared
	cfg = &copied
	var later []string
	keep := func(name string, changed bool, restore func()) {
		if changed {
			later = append(later, name)
			restore()
		}
	}
	keep("device.id", cfg.Device.ID != old.Device.ID, func() { cfg.Device.ID = old.Device.ID })
	keep("device.state_dir", cfg.Device.StateDir != old.Device.StateDir, func() { cfg.Device.StateDir = old.Device.StateDir })
	keep("device.board", cfg.Device.Board != old.Device.Board, func() { cfg.Device.Board = old.Device.Board })
	keep("mqtt (enabled/disabled)", cfg.MQTTEnabled() != old.MQTTEnabled(), func() { cfg.MQTT = old.MQTT })
	keep("telegram (enabled/disabled)", cfg.TelegramEnabled() != old.TelegramEnabled(), func() { cfg.Telegram = old.Telegram })
	// The status page's listener and login are set up at start (listenWeb).
	h, oh := &cfg.HTTP, old.HTTP
	keep("http.listen", h.Listen != oh.Listen, func() { h.Listen = oh.Listen })
	keep("http.username", h.Username != oh.Username, func() { h.Username = oh.Username })
	keep("http.password", h.Password.Value() != oh.Password.Value() || h.PasswordFile != oh.PasswordFile,
		func() { h.Password, h.PasswordFile = oh.Password, oh.PasswordFile })
	keep("http.allowed_hosts", !slices.Equal(h.AllowedHosts, oh.AllowedHosts), func() { h.AllowedHosts = oh.AllowedHosts })
	if len(later) > 0 {
		log.Warn("config reload: these changes take effect only at the next restart", "keys", strings.Join(later, ", "))
	}
	ec, err := a.engineConfig(cfg)
	if err != nil {
		return err
	}
	changed := diffConfig(old, cfg)
	if len(changed) == 0 {
		a.announceInfo(cfg) // a reload may bring an edited checklist file
		log.Info(msg, "changed", "nothing")
		return nil
	}

	// Build everything that can fail before touching the running daemon.
	thinker := a.thinker
	if thinkerChanged(old, cfg) && a.opts.Wiring.Thinker != nil {
		if thinker, err = a.opts.Wiring.Thinker(cfg, a.modelSelf(), modelMemory{a.db}, log); err != nil {
			return err
		}
	}
	var next map[string]Transport
	// A transport is rebuilt when its section changed; Telegram shows
	// alert times in device.timezone.
	section := map[string]bool{
		"mqtt":     !reflect.DeepEqual(old.MQTT, cfg.MQTT),
		"telegram": !reflect.DeepEqual(old.Telegram, cfg.Telegram) || old.Device.Timezone != cfg.Device.Timezone,
	}
	if (section["mqtt"] || section["telegram"]) && a.opts.Wiring.Transports != nil {
		ts, err := a.opts.Wiring.Transports(a.runCtx, cfg, a.db, a.cmds, engineProblems{a}, log)
		if err != nil {
			return err
		}
		next = map[string]Transport{}
		for _, t := range ts {
			next[t.Notifier.Name()] = t
		}
	}
	sensors, closeSensors := a.sensors, func() error { return nil }
	reopen := !sameSensors(old.Sensors, cfg.Sensors) && a.opts.Wiring.Sensors != nil
	if reopen {
		sensors, closeSensors = a.opts.Wiring.Sensors(cfg, log)
	}

	a.engine.Reconfigure(ec, sensors, thinker)
	if reopen {
		if err := a.closeSensors(); err != nil {
			log.Warn("close the previous sensors", "err", err)
		}
		a.sensors, a.closeSensors = sensors, closeSensors
	}
	a.resetMoved(a.runCtx, old.Sensors, cfg.Sensors, log)
	a.thinker = thinker
	// A transport rebuilt from cfg announces it when it connects; the
	// others are told now, so a fleet view sees the change at once.
	info := DeviceInfo(cfg)
	for _, lt := range a.live {
		if t, ok := next[lt.name]; ok && section[lt.name] {
			lt.replace(a.runCtx, t)
		} else {
			lt.announce(a.runCtx, info)
		}
	}
	a.setMu.Lock()
	a.cfg = cfg
	a.setMu.Unlock()
	log.Info(msg, "changed", strings.Join(changed, ", "))
	return nil
}

// thinkerChanged reports whether cfg changes what Wiring.Thinker builds the
// agent from: [llm], and what the model may do about its own heartbeat
// (heartbeat.model_may and the interval's bounds), which decide its tools.
// A changed secret elsewhere needs no new agent: the app's Redactor, which
// the agent shares, learned it when the config was resolved.
func thinkerChanged(old, cfg *config.Config) bool {
	o, n := old.Heartbeat, cfg.Heartbeat
	return !reflect.DeepEqual(old.LLM, cfg.LLM) || !slices.Equal(o.ModelMay, n.ModelMay) ||
		o.IntervalMin != n.IntervalMin || o.IntervalMax != n.IntervalMax
}

// loadForReload reads config.toml and the environment once, applies the
// overlay from the daemon's state file, and checks the checklist the way
// start and `vigil config check` do. gen is the stored changes' count the
// overlay was read at.
func (a *App) loadForReload(log *slog.Logger) (*config.Config, *manage.Base, uint64, error) {
	base, err := a.opts.Wiring.Load()
	if err != nil {
		return nil, nil, 0, err
	}
	a.setMu.Lock()
	overlay, err := a.db.Settings()
	gen := a.gen
	a.setMu.Unlock()
	if err != nil {
		log.Error("read the run-time settings: reloading without them", "err", err)
		overlay = nil
	}
	cfg, _, err := base.Resolve(overlay, log)
	if err != nil {
		return nil, nil, 0, err
	}
	if path, _ := manage.InForce(cfg); manage.FileExists(path) {
		if _, _, err := manage.ChecklistFunc(cfg)(); err != nil {
			return nil, nil, 0, err
		}
	}
	return cfg, base, gen, nil
}

// sameSensors reports whether two [[sensor]] lists open the same sensors;
// a sensor that only moved in the file is the same.
func sameSensors(a, b []config.Sensor) bool {
	strip := func(ss []config.Sensor) []config.Sensor {
		out := slices.Clone(ss)
		for i := range out {
			out[i].Line = 0
		}
		return out
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// secretKeys name the resolved secrets in a diff; their values never appear.
var secretKeys = map[string]string{"APIKey": "api_key", "Password": "password", "Token": "token"}

// diffConfig lists what differs between two configs, for the reload log
// line: "heartbeat.sample_interval 1s→2s", "rule.too_hot", "sensor.air
// (added)". Secrets are named, never shown.
func diffConfig(a, b *config.Config) []string {
	var out []string
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		f := va.Type().Field(i)
		sec := tomlName(f)
		if !f.IsExported() || sec == "" {
			continue
		}
		fa, fb := va.Field(i), vb.Field(i)
		switch f.Type.Kind() {
		case reflect.Struct:
			for j := range fa.NumField() {
				sf := f.Type.Field(j)
				x, y := fa.Field(j), fb.Field(j)
				if !sf.IsExported() || reflect.DeepEqual(x.Interface(), y.Interface()) {
					continue
				}
				if name, ok := secretKeys[sf.Name]; ok {
					out = append(out, sec+"."+name)
					continue
				}
				key := tomlName(sf)
				if key == "" {
					continue // derived from a key listed on its own (location, active)
				}
				if strings.HasSuffix(key, "password") || strings.HasSuffix(key, "token") {
					out = append(out, sec+"."+key)
					continue
				}
				out = append(out, fmt.Sprintf("%s.%s %s→%s", sec, key, showValue(x), showValue(y)))
			}
		case reflect.Slice:
			out = append(out, diffNamed(sec, fa, fb)...)
		}
	}
	return out
}

// diffNamed compares [[sensor]] or [[rule]] lists by name.
func diffNamed(sec string, a, b reflect.Value) []string {
	byName := func(v reflect.Value) (map[string]any, []string) {
		m := map[string]any{}
		var names []string
		for i := range v.Len() {
			e := reflect.New(v.Index(i).Type()).Elem()
			e.Set(v.Index(i))
			if l := e.FieldByName("Line"); l.IsValid() {
				l.SetInt(0)
			}
			name := e.FieldByName("Name").String()
			m[name] = e.Interface()
			names = append(names, name)
		}
		return m, names
	}
	ma, na := byName(a)
	mb, nb := byName(b)
	var out []string
	for _, n := range nb {
		x, ok := ma[n]
		switch {
		case !ok:
			out = append(out, sec+"."+n+" (added)")
		case !reflect.DeepEqual(x, mb[n]):
			out = append(out, sec+"."+n)
		}
	}
	for _, n := range na {
		if _, ok := mb[n]; !ok {
			out = append(out, sec+"."+n+" (removed)")
		}
	}
	return out
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func showValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case config.Duration:
		return x.Duration.String()
	case string:
		return manage.ShowSetting(x)
	}
	return fmt.Sprint(v.Interface())
}
