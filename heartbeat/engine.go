package heartbeat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/redact"
	"github.com/vigil-iot/vigil/rule"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// Notifier delivers an alert and returns nil only once the far side has
// acknowledged it. An error wrapping transport.ErrPermanent drops the entry
// instead of retrying it forever.
type Notifier interface {
	Name() string
	Notify(ctx context.Context, a alert.Alert) error
}

// Connector is implemented by a Notifier that must connect before it can
// deliver (MQTT). Ready is closed once its first connection is up; until
// then, for at most firstConnectWait, a failed delivery is no outage.
type Connector interface {
	Ready() <-chan struct{}
}

// Reconnector is implemented by a Notifier that can say when its
// connection is back (MQTT): NextConnect is closed when the next
// connection comes up, and a delivery loop waiting out its backoff
// resumes at once.
type Reconnector interface {
	NextConnect() <-chan struct{}
}

// Publisher receives the retained state topics (heartbeat, sensors).
type Publisher interface {
	PublishHeartbeat(ctx context.Context, hb transport.Heartbeat) error
	PublishSensors(ctx context.Context, snap device.Snapshot) error
}

// Thinker is the LLM step. A nil Thinker means rules-only mode.
type Thinker interface {
	Think(ctx context.Context, in agent.Input) (agent.Decision, error)
}

// Rule is a local rule with its alert settings.
type Rule struct {
	Spec     rule.Spec
	Severity alert.Severity
	Message  string // template with {sensor.quantity}
	// Disabled rules are not evaluated (rule.<name>.enabled = false). One
	// that is firing when it gets disabled resolves at the next sample with
	// a resolved alert saying so, so no firing alert is left open.
	Disabled bool
}

// Config holds the engine's settings, resolved from config.toml by the
// daemon (daemon.EngineConfig).
type Config struct {
	DeviceID               string
	Interval               time.Duration // 0 disables the heartbeat loop
	Schedule               Schedule      // non-nil: runs at these wall-clock times instead of every Interval
	Off                    string        // with neither: the setting that turned heartbeats off, for Status
	SampleInterval         time.Duration
	SensorsPublishInterval time.Duration
	Active                 *Window // nil: always active
	Location               *time.Location
	MaxQuiet               time.Duration
	AlertCooldown          time.Duration
	FailureAlertAfter      int
	MaxLLMCallsPerDay      int
	Deadbands              map[string]float64 // "air.temperature" -> 0.5; missing keys use the unit's default
	// Gate is GateDeadband (the default, also for "") or GateUnusual
	// (usual.go); Unusual is the |z| that counts as unusual (default 3).
	Gate    string
	Unusual float64
	// Resolutions are the readings' noise floors for their baselines
	// ("air.temperature" -> 0.01, the driver's datasheet resolution);
	// missing keys use device.UnitResolution.
	Resolutions map[string]float64
	BuildTime   time.Time // wall clock before this is not plausible
	Rules       []Rule
	Checklist   ChecklistFunc
	FloodLimit  int           // alerts queued per FloodWindow before the guard holds them (default 30)
	FloodWindow time.Duration // default 1h
	HistoryStep time.Duration // spacing of persisted history samples (default 1m)
	MemHistory  int           // snapshots kept in memory for delta() (default 720)
}

// Deps are the engine's collaborators.
type Deps struct {
	Clock      clockwork.Clock
	Wall       func() time.Time // default Clock.Now
	DB         *store.DB
	Sensors    []device.Named
	Thinker    Thinker // nil: rules-only
	Notifiers  []Notifier
	Publishers []Publisher
	Log        *slog.Logger
	Progress   func() // called when a loop made progress (systemd watchdog)
	// Redactor removes secrets from the model's text and errors where the
	// engine keeps or hands them on: run records, alerts, notes in the
	// prompt. nil replaces only what looks like a credential.
	Redactor *redact.Redactor
}

// Engine runs the loops. Construct with New, start with Run.
type Engine struct {
	id   string // cfg.DeviceID, fixed at New: read without e.mu (Reconfigure replaces cfg under it)
	cfg  Config
	deps Deps
	log  *slog.Logger
	wake map[string]chan struct{} // per notifier

	runMu    sync.Mutex // held by a heartbeat run: no overlapping runs
	sampleMu sync.Mutex // held by a sample: Reconfigure swaps sensors between two

	mu           sync.Mutex // guards everything below
	state        store.State
	rules        map[string]*ruleRun
	hist         *history // in-memory history for delta()
	pending      []device.Snapshot
	lastPending  time.Time // mono time of the last pending sample
	last         *device.Snapshot
	lastAt       time.Time            // mono time of last
	lastGood     map[string]time.Time // mono
	start        time.Time            // mono
	llmSnap      *device.Snapshot     // snapshot at the last LLM run
	ruleChanged  bool                 // a rule changed state since the last LLM run
	pause        *store.Pause
	pauseEnd     time.Time // mono deadline of pause
	nextAt       time.Time // wall estimate of next tick
	nextMono     time.Time
	backoffTicks int    // ticks to skip for llm backoff
	lastErrClass string // agent.ErrorClass of the last failed LLM run, for the meta snapshot
	floodTimes   []time.Time
	floodHeld    bool
	pubSnap      *device.Snapshot
	commands     []Command // accepted remote commands, oldest first, at most commandRing
	pubAt        time.Time
	sensorsOut   *latest[device.Snapshot]
	heartbeatOut *latest[transport.Heartbeat]
	lost         *store.Lost                 // a reset whose state_lost alert is not queued yet (sample loop only)
	raised       map[string]alert.Alert      // system faults that never resolve (state_lost), raised by this process (Problems)
	acks         map[string]store.ProblemAck // acknowledged problems by key, as in the state file (ack.go)
	reconf       chan struct{}               // closed and replaced by Reconfigure: the loops re-read their timing
	base         *baseline.Set               // what is usual for each reading at each hour (usual.go)
	floors       *floorTable                 // each reading's noise floor, for base
	llmUnusual   map[string]bool             // the readings that were unusual at the last LLM run
}

type ruleRun struct {
	rule    Rule
	state   rule.State
	alertID string
}

// New builds an engine and loads its state from the store. It starts nothing.
func New(cfg Config, deps Deps) (*Engine, error) {
	if deps.Clock == nil {
		return nil, errors.New("heartbeat: no clock")
	}
	if deps.DB == nil {
		return nil, errors.New("heartbeat: no store")
	}
	if deps.Wall == nil {
		deps.Wall = deps.Clock.Now
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 30 * time.Second
	}
	if cfg.FloodLimit <= 0 {
		cfg.FloodLimit = 30
	}
	if cfg.FloodWindow <= 0 {
		cfg.FloodWindow = time.Hour
	}
	if cfg.HistoryStep <= 0 {
		cfg.HistoryStep = DefaultHistoryStep
	}
	if cfg.MemHistory <= 0 {
		cfg.MemHistory = 720
	}
	if cfg.Checklist == nil {
		cfg.Checklist = func() (string, bool, error) { return "", true, nil }
	}
	e := &Engine{
		id: cfg.DeviceID, cfg: cfg, deps: deps, log: deps.Log,
		wake:         map[string]chan struct{}{},
		rules:        map[string]*ruleRun{},
		lastGood:     map[string]time.Time{},
		raised:       map[string]alert.Alert{},
		acks:         map[string]store.ProblemAck{},
		hist:         newHistory(cfg.MemHistory),
		start:        deps.Clock.Now(),
		sensorsOut:   newLatest[device.Snapshot](),
		heartbeatOut: newLatest[transport.Heartbeat](),
		reconf:       make(chan struct{}),
		floors:       &floorTable{m: map[string]float64{}},
		llmUnusual:   map[string]bool{},
	}
	e.base = baseline.New(cfg.Location, e.floors.get)
	e.base.SetUnusual(cfg.Unusual)
	var baselines []byte
	for _, n := range deps.Notifiers {
		e.wake[n.Name()] = make(chan struct{}, 1)
	}
	var persisted map[string]store.RuleState
	load := func(tx *store.Tx) error {
		var err error
		if e.state, err = tx.State(); err != nil {
			return err
		}
		if persisted, err = tx.RuleStates(); err != nil {
			return err
		}
		if e.acks, err = tx.ProblemAcks(); err != nil {
			return err
		}
		baselines = tx.Baselines()
		p, ok, err := tx.Pause()
		if err != nil {
			return err
		}
		if ok {
			e.restorePause(p)
		}
		return nil
	}
	err := deps.DB.View(load)
	if errors.Is(err, store.ErrCorrupt) {
		// A store opened with Reset has replaced the file: load the fresh one.
		e.state, e.pause = store.State{}, nil
		err = deps.DB.View(load)
	}
	if err != nil {
		return nil, fmt.Errorf("load state: %w", err)
	}
	if e.state.Counters == nil {
		e.state.Counters = map[string]uint64{}
	}
	if err := e.base.UnmarshalBinary(baselines); err != nil {
		// Not worth refusing to start: they are learnt again.
		e.log.Warn("baselines in the state file unreadable; learning what is usual again", "err", err)
	}
	for _, r := range cfg.Rules {
		rr := &ruleRun{rule: r}
		if ps, ok := persisted[r.Spec.Name]; ok && ps.Firing {
			rr.state = rule.State{Firing: true, Since: ps.Since, LastNotified: ps.LastNotified}
			rr.alertID = ps.AlertID
		}
		e.rules[r.Spec.Name] = rr
	}
	return e, nil
}

// Run runs the sample loop, the heartbeat loop, one delivery loop per
// notifier and one publishing loop per publisher until ctx is done.
func (e *Engine) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return e.sampleLoop(ctx) })
	// The heartbeat loop idles while the interval is 0: a reload may set one.
	g.Go(func() error { return e.heartbeatLoop(ctx) })
	for _, n := range e.deps.Notifiers {
		g.Go(func() error { return e.deliveryLoop(ctx, n) })
	}
	if len(e.deps.Publishers) > 0 {
		g.Go(func() error { return e.publishLoop(ctx) })
	}
	return g.Wait()
}

func (e *Engine) progress() {
	if e.deps.Progress != nil {
		e.deps.Progress()
	}
}

// newAlert fills the common fields of an alert. IDs are random, so they are
// unique per alert and, being stored with it, stable across redelivery.
func (e *Engine) newAlert(sev alert.Severity, source, ruleName, state, summary string) alert.Alert {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return alert.Alert{
		ID:       e.id + "-" + hex.EncodeToString(b[:]),
		Device:   e.id,
		Time:     e.deps.Wall().UTC().Round(time.Millisecond),
		Severity: sev,
		Source:   source,
		Rule:     ruleName,
		State:    state,
		Summary:  e.deps.Redactor.String(summary),
	}
}

// admit applies the flood guard to an alert about to be queued. It returns
// the alerts to queue: the alert itself, nothing (dropped, for every
// transport, and counted in alerts_held), or a single notice that the
// guard engaged (a notice: it never resolves). Resolved messages always
// pass. Caller holds e.mu.
func (e *Engine) admit(a alert.Alert, now time.Time) []alert.Alert {
	if a.State == alert.StateResolved {
		return []alert.Alert{a}
	}
	cut := now.Add(-e.cfg.FloodWindow)
	kept := e.floodTimes[:0]
	for _, t := range e.floodTimes {
		if t.After(cut) && !t.After(now) {
			kept = append(kept, t)
		}
	}
	e.floodTimes = kept
	if len(e.floodTimes) < e.cfg.FloodLimit {
		e.floodTimes = append(e.floodTimes, now)
		e.floodHeld = false
		return []alert.Alert{a}
	}
	e.state.Counters["alerts_held"]++
	if e.floodHeld {
		return nil
	}
	e.floodHeld = true
	return []alert.Alert{e.newAlert(alert.Warning, alert.SourceSystem, alert.RuleFloodGuard, alert.StateNotice,
		fmt.Sprintf("more than %d alerts in %s: dropping further rule alerts until the rate drops; resolutions still go out (latest: %s)",
			e.cfg.FloodLimit, e.cfg.FloodWindow, a.Summary))}
}

func (e *Engine) wakeAll() {
	for _, ch := range e.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (e *Engine) notifierNames() []string {
	names := make([]string, 0, len(e.deps.Notifiers))
	for _, n := range e.deps.Notifiers {
		names = append(names, n.Name())
	}
	return names
}
