package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/redact"
)

// ErrLoop means the model did not reach a decision within the run's limits:
// max steps, the tool-call cap, or the breaker on repeated identical calls.
var ErrLoop = errors.New("no decision")

// Providers.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxSteps     = 6
	DefaultMaxToolCalls = 12
	DefaultMaxRetries   = 2
	DefaultRetryBase    = time.Second
	DefaultRetryMax     = 30 * time.Second
	DefaultMaxTokens    = 1024
	DefaultUserAgent    = "vigil"
	DefaultIntervalMin  = 10 * time.Minute
	DefaultIntervalMax  = 6 * time.Hour
)

// breakerLimit is how many identical tool calls (same name, same
// arguments) a run tolerates: the last one stops it.
const breakerLimit = 3

// Config configures an Agent. Zero values take the defaults above.
type Config struct {
	Provider   string // ProviderOpenAI (any OpenAI-compatible server) or ProviderAnthropic
	BaseURL    string // "https://api.openai.com/v1", "https://api.anthropic.com", "http://127.0.0.1:11434/v1"
	Model      string
	ScoutModel string // optional cheap triage model that may escalate to Model
	APIKey     string // may be empty for local servers; never logged

	Timeout      time.Duration // per HTTP request
	MaxSteps     int           // model calls per run (per model with a scout)
	MaxToolCalls int           // tool calls per run
	// MaxRetries is how often one request is sent again after 429, 5xx,
	// a timeout or a refused connection (llm.max_retries); 0 takes
	// DefaultMaxRetries, negative means none (llm.max_retries = 0).
	MaxRetries int
	UserAgent  string

	// RetryBase is the wait before the first retry (llm.retry_backoff),
	// doubled for each further one; a Retry-After or retry-after-ms from
	// the server replaces it.
	RetryBase time.Duration
	RetryMax  time.Duration // cap on a backoff; a longer Retry-After gives up at once
	MaxTokens int           // output tokens per call: max_tokens on both protocols

	// Memory remembers across restarts which models refused tools; nil
	// remembers them for the life of the Agent.
	Memory ModelMemory

	// ModelMay lists what the model may change about its own heartbeat
	// (heartbeat.model_may): MayPause offers pause_heartbeats, MayInterval
	// set_interval, MayNotes remember. nil means []string{MayPause}; an
	// empty non-nil list offers none of them.
	ModelMay []string
	// IntervalMin and IntervalMax bound set_interval (heartbeat.interval_min,
	// interval_max); zero takes DefaultIntervalMin, DefaultIntervalMax.
	IntervalMin, IntervalMax time.Duration
	// Self carries out set_interval and remember; nil: they answer "not
	// available".
	Self Self
	// Redactor removes secrets from what the agent returns, keeps or
	// logs: its errors, its Decision's text and the model's notes. The
	// agent adds APIKey to it. nil: one of the agent's own, which knows
	// APIKey only; the daemon's wiring passes the one the daemon shares
	// with its logs and engine, which knows every configured secret.
	Redactor *redact.Redactor
}

// ModelMemory keeps what the agent learned about a model. The daemon
// backs it with the state file (daemon/model.go).
type ModelMemory interface {
	TextOnly(model string) (bool, error)
	SetTextOnly(model string) error
}

// LogValue keeps the API key out of logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String(logProvider, c.Provider),
		slog.String("base_url", c.BaseURL),
		slog.String(logModel, c.Model),
		slog.String("scout_model", c.ScoutModel),
		slog.Bool("api_key_set", c.APIKey != ""),
	)
}

var _ slog.LogValuer = Config{}

// String keeps the API key out of fmt output.
func (c Config) String() string {
	return fmt.Sprintf("{%s %s model=%s scout=%s key_set=%t}", c.Provider, c.BaseURL, c.Model, c.ScoutModel, c.APIKey != "")
}

// Agent runs heartbeats against one LLM provider. It keeps no state between
// runs; Think may be called concurrently.
type Agent struct {
	cfg   Config
	prov  provider
	url   string
	hc    *http.Client
	clock clockwork.Clock
	log   *slog.Logger

	tools []toolDef // the main model's, following ModelMay
	red   *redact.Redactor

	mu   sync.Mutex
	text map[string]bool // model -> speaks the text contract (no tools)
}

// New returns an Agent. hc, clock and log may be nil (defaults: a plain
// http.Client, the real clock, discard). hc is copied; redirects are not
// followed, so the key is never sent to another host.
func New(cfg Config, hc *http.Client, clock clockwork.Clock, log *slog.Logger) (*Agent, error) {
	if cfg.Model == "" {
		return nil, errors.New("agent: model is empty")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxToolCalls <= 0 {
		cfg.MaxToolCalls = DefaultMaxToolCalls
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.ModelMay == nil {
		cfg.ModelMay = []string{MayPause}
	}
	if cfg.IntervalMin <= 0 {
		cfg.IntervalMin = DefaultIntervalMin
	}
	if cfg.IntervalMax <= 0 {
		cfg.IntervalMax = DefaultIntervalMax
	}
	if cfg.IntervalMax < cfg.IntervalMin {
		return nil, fmt.Errorf("agent: interval max %v is below interval min %v", cfg.IntervalMax, cfg.IntervalMin)
	}
	a := &Agent{cfg: cfg, clock: clock, log: log, text: map[string]bool{}, red: cfg.Redactor}
	if a.red == nil {
		a.red = redact.New()
	}
	a.red.Add(cfg.APIKey)
	a.tools = mainTools(cfg)
	base := strings.TrimRight(cfg.BaseURL, "/")
	switch cfg.Provider {
	case ProviderOpenAI, "":
		a.cfg.Provider = ProviderOpenAI
		a.prov = openAI{maxTokens: cfg.MaxTokens}
		if base == "" {
			base = "https://api.openai.com/v1"
		}
	case ProviderAnthropic:
		a.prov = anthropic{maxTokens: cfg.MaxTokens}
		if base == "" {
			base = "https://api.anthropic.com"
		}
		base = strings.TrimSuffix(base, "/v1")
	default:
		return nil, fmt.Errorf("agent: unknown provider %q (want openai or anthropic)", cfg.Provider)
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("agent: base url %q: want http:// or https://", base)
	}
	a.url = base + a.prov.path()
	c := http.Client{}
	if hc != nil {
		c = *hc
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	a.hc = &c
	if a.clock == nil {
		a.clock = clockwork.NewRealClock()
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a, nil
}

// outcomeEscalate is the scout's third answer.
const outcomeEscalate = "escalate"

// Think runs one heartbeat: the scout first if one is configured, then the
// main model with all tools. It returns the decision, or an error matching
// ErrUnreachable, ErrRejected, ErrMalformed or ErrLoop (or ctx's error). On
// error the returned Decision still carries Calls, Tokens, ToolCalls and
// Escalated, so the budget counts what was spent. The model's text in the
// Decision (tool calls and their arguments, summary, escalation) and the
// error's text are redacted.
func (a *Agent) Think(ctx context.Context, in Input) (Decision, error) {
	dec, err := a.think(ctx, in)
	dec.Summary, dec.Escalation = a.red.String(dec.Summary), a.red.String(dec.Escalation)
	for i, c := range dec.ToolCalls {
		dec.ToolCalls[i] = a.red.String(c)
	}
	return dec, a.red.Error(err)
}

func (a *Agent) think(ctx context.Context, in Input) (Decision, error) {
	// A run's requests come in one burst and the next run is minutes away,
	// past any server's idle timeout: keep no connection, with its TLS
	// buffers, open in between.
	defer a.hc.CloseIdleConnections()
	dec := Decision{ToolCalls: []string{}}
	system, user := buildPrompt(in, a.red)
	if a.cfg.ScoutModel != "" {
		r := &run{a: a, in: in, dec: &dec, scout: true}
		err := r.loop(ctx, a.cfg.ScoutModel, scoutPrompt, user, []toolDef{respondTool(true)})
		switch {
		case errors.Is(err, ErrLoop):
			dec.Outcome, dec.Summary = outcomeEscalate, a.red.Clip("the scout gave no decision: "+err.Error(), summaryMax)
		case err != nil:
			return a.failed(dec, fmt.Errorf("scout %s: %w", a.cfg.ScoutModel, err))
		}
		if dec.Outcome != outcomeEscalate {
			a.log.Debug("heartbeat decided", logModel, a.cfg.ScoutModel, logOutcome, dec.Outcome, logCalls, dec.Calls, logTokens, dec.Tokens)
			return dec, nil
		}
		dec.Escalated, dec.Escalation = true, dec.Summary
		dec.Outcome, dec.Summary = "", ""
		user += "\n\nThe triage model escalated this heartbeat to you: " + dec.Escalation
	}
	r := &run{a: a, in: in, dec: &dec}
	if err := r.loop(ctx, a.cfg.Model, system, user, a.tools); err != nil {
		return a.failed(dec, fmt.Errorf("model %s: %w", a.cfg.Model, err))
	}
	a.log.Debug("heartbeat decided", logModel, a.cfg.Model, logOutcome, dec.Outcome, logCalls, dec.Calls, logTokens, dec.Tokens)
	return dec, nil
}

// failed returns what was spent alongside err, without a half-made outcome.
func (a *Agent) failed(dec Decision, err error) (Decision, error) {
	dec.Outcome, dec.Severity, dec.Summary, dec.Pause = "", 0, "", 0
	return dec, err
}

// run is one model's tool loop.
type run struct {
	a     *Agent
	in    Input
	dec   *Decision
	scout bool
	seen  map[string]int
	calls int
}

// loop calls the model until it decides, at most MaxSteps times. The
// decision is written to r.dec.
func (r *run) loop(ctx context.Context, model, system, user string, tools []toolDef) error {
	if r.a.textOnly(model) {
		tools = nil
	}
	req := &request{model: model, system: system, tools: tools,
		msgs: []message{{role: roleUser, text: user}}}
	r.seen = map[string]int{}
	for step := 0; step < r.a.cfg.MaxSteps; step++ {
		rep, err := r.a.complete(ctx, req, r.dec, r.in.MaxCalls)
		if err != nil && len(req.tools) > 0 && len(req.msgs) == 1 && errors.Is(err, ErrToolsUnsupported) {
			// The system prompt already says how to answer without tools.
			r.a.setTextOnly(model, err)
			req.tools = nil
			continue
		}
		if err != nil {
			return err
		}
		if len(rep.calls) == 0 {
			d, kind := parseText(rep.text, r.a.red)
			r.dec.Outcome, r.dec.Severity, r.dec.Summary = d.Outcome, d.Severity, d.Summary
			if r.scout && kind == textOther {
				// A scout that cannot follow the protocol hands over rather than alerting.
				r.dec.Outcome, r.dec.Severity = outcomeEscalate, 0
				r.dec.Summary = r.a.red.Clip("the scout answered in free text: "+d.Summary, summaryMax)
			}
			return nil
		}
		req.msgs = append(req.msgs, message{role: roleAssistant, text: rep.text, calls: rep.calls})
		results := make([]toolResult, 0, len(rep.calls))
		// Policy: a call that ends the run (heartbeat_respond,
		// pause_heartbeats) does not end the turn. Every call of the turn
		// is recorded, the other deciding calls are weighed too, and the
		// most severe decision wins (see severer): a critical alert in a
		// second heartbeat_respond is never dropped. After a decision no
		// other tool runs, and the limits on calls no longer fail the run:
		// the calls beyond them are counted, not listed.
		var final *Decision
		extra := 0
		for _, c := range rep.calls {
			r.calls++
			if final != nil && r.calls > r.a.cfg.MaxToolCalls {
				extra++
			} else {
				r.dec.ToolCalls = append(r.dec.ToolCalls, r.a.red.Clip(c.name, redact.CutName)+" "+r.a.red.Clip(canonicalJSON(c.args), redact.CutToolCall))
			}
			r.a.log.Debug("llm tool call", logModel, model, logTool, c.name)
			if final != nil {
				if c.name == ToolRespond || c.name == ToolPause {
					if _, d := r.exec(ctx, c.name, c.args); d != nil && severer(*d, *final) {
						final = d
					}
				}
				continue
			}
			if r.calls > r.a.cfg.MaxToolCalls {
				return fmt.Errorf("%w: more than %d tool calls", ErrLoop, r.a.cfg.MaxToolCalls)
			}
			key := c.name + " " + canonicalArgs(c.args)
			r.seen[key]++
			if r.seen[key] >= breakerLimit {
				return fmt.Errorf("%w: %s called %d times with the same arguments", ErrLoop, c.name, breakerLimit)
			}
			res, d := r.exec(ctx, c.name, c.args)
			if d != nil {
				final = d
				continue
			}
			res.id = c.id
			results = append(results, res)
		}
		if final != nil {
			if extra > 0 {
				r.dec.ToolCalls = append(r.dec.ToolCalls, fmt.Sprintf("… and %d more tool calls in the same turn", extra))
			}
			r.dec.Outcome, r.dec.Severity, r.dec.Summary, r.dec.Pause = final.Outcome, final.Severity, final.Summary, final.Pause
			return nil
		}
		req.msgs = append(req.msgs, message{role: roleTool, results: results})
	}
	return fmt.Errorf("%w after %d steps", ErrLoop, r.a.cfg.MaxSteps)
}

// severer reports whether decision d outweighs cur: an alert beats
// anything else, and a more severe alert a less severe one; then escalate
// (the scout's doubt), then a pause, then ok. On a tie the earlier call
// stays.
func severer(d, cur Decision) bool {
	rank := func(d Decision) int {
		switch d.Outcome {
		case OutcomeAlert:
			return 10 + int(d.Severity)
		case outcomeEscalate:
			return 3
		case OutcomePaused:
			return 2
		}
		return 1
	}
	return rank(d) > rank(cur)
}

// textOnly reports whether model speaks the text contract.
func (a *Agent) textOnly(model string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.text[model]; ok {
		return t
	}
	t := false
	if a.cfg.Memory != nil {
		var err error
		if t, err = a.cfg.Memory.TextOnly(model); err != nil {
			a.log.Warn("llm text-only flag unreadable; trying tools", logModel, model, logError, err)
			return false // ask the state file again next run
		}
	}
	a.text[model] = t
	return t
}

// setTextOnly switches model to the text contract for good, logging once.
func (a *Agent) setTextOnly(model string, cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.text[model] {
		return
	}
	a.text[model] = true
	a.log.Warn("llm model does not support tools; it answers HEARTBEAT_OK or ALERT: in text from now on",
		logModel, model, logError, cause.Error())
	if a.cfg.Memory != nil {
		if err := a.cfg.Memory.SetTextOnly(model); err != nil {
			a.log.Warn("llm text-only flag not saved; it is found again after a restart", logModel, model, logError, err)
		}
	}
}

// canonicalArgs returns the arguments as compact JSON ("{}" when empty), or
// as sent when they are not JSON, cut at 500 characters: as a request
// carries them back to the model.
func canonicalArgs(s string) string { return clip(canonicalJSON(s), redact.CutToolCall) }

// canonicalJSON is canonicalArgs uncut, for redact.Clip.
func canonicalJSON(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return "{}"
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil { // sorts object keys
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}
