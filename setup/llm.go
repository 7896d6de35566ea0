package setup

// The LLM check of `vigil init` (INIT-SPEC step 4): one small request
// through the agent's own provider code (package agent: the same URL,
// headers, body and error classes as a heartbeat) proves that provider,
// base URL, model and key work, and shows the model's answer. No LLM is a
// fine answer: vigil then runs rules-only.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/internal/tlshint"
	"github.com/vigil-iot/vigil/redact"
)

// Errors of the LLM check; test them with errors.Is.
var (
	// ErrModelUnreachable: nothing answered at the base URL (refused,
	// unknown host, a timeout, 5xx).
	ErrModelUnreachable = errors.New("the LLM did not answer")
	// ErrKeyRefused: the server refused the API key (401, 403).
	ErrKeyRefused = errors.New("the LLM refused the API key")
	// ErrModelRefused: the server answered and refused the request
	// otherwise (404: a wrong base URL or model name; 400), or answered
	// nothing usable.
	ErrModelRefused = errors.New("the LLM refused the request")
)

// DefaultModelTimeout bounds the check's one request: long enough for a
// local server to load a small model.
const DefaultModelTimeout = 90 * time.Second

// probeQuestion is what the check asks.
const probeQuestion = "vigil init is checking that you answer. In one short line, say hello to the person setting up this board."

// maxAnswer is how much of the answer's first line the check returns, in
// characters.
const maxAnswer = 200

// ModelAPI is how the wizard reaches a model.
type ModelAPI struct {
	// Provider is llm.provider: "openai" (any OpenAI-compatible server:
	// OpenAI, Ollama, llama.cpp, OpenRouter, vLLM) or "anthropic". "none"
	// or "" is rules-only: nothing to check.
	Provider string
	BaseURL  string // llm.base_url, as in http://127.0.0.1:11434/v1
	Model    string
	Key      string // "" for a local server
	// Timeout bounds the one request; zero is DefaultModelTimeout.
	Timeout time.Duration
	HTTP    *http.Client    // nil: a plain client (HTTPS_PROXY is honoured)
	Clock   clockwork.Clock // measures the latency; nil: the real clock
}

// ModelCheck is what a check proved.
type ModelCheck struct {
	// RulesOnly: no LLM was configured, and none was asked.
	RulesOnly bool
	// Answer is the first line of the model's answer, redacted (the key
	// and whatever looks like a credential), then cut to 200 characters.
	Answer  string
	Latency time.Duration
}

// RulesOnly reports whether provider means "no LLM": vigil then runs its
// local rules only.
func RulesOnly(provider string) bool {
	p := strings.TrimSpace(strings.ToLower(provider))
	return p == "" || p == "none"
}

// CheckModel sends the model one small request and returns its answer.
// It is sent once, without retries: the person is waiting. Errors wrap
// ErrModelUnreachable, ErrKeyRefused or ErrModelRefused, name the URL and
// say how to fix it; none carries the key.
func CheckModel(ctx context.Context, m ModelAPI) (ModelCheck, error) {
	if RulesOnly(m.Provider) {
		return ModelCheck{RulesOnly: true}, nil
	}
	if strings.TrimSpace(m.Model) == "" {
		return ModelCheck{}, fmt.Errorf("llm %s: no model name: give one with --llm-model (e.g. gpt-4o-mini, qwen2.5:3b)", shownURL(m))
	}
	red := redact.New(m.Key)
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultModelTimeout
	}
	clock := m.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	a, err := agent.New(agent.Config{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Model, APIKey: m.Key,
		Timeout: timeout, MaxRetries: -1, UserAgent: "vigil-init", Redactor: red}, m.HTTP, clock, nil)
	if err != nil {
		return ModelCheck{}, fmt.Errorf("llm %s: %w", shownURL(m), red.Error(err))
	}
	start := clock.Now()
	answer, err := a.Probe(ctx, probeQuestion)
	if err != nil {
		return ModelCheck{}, modelError(ctx, m, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(answer), "\n")
	return ModelCheck{Answer: red.Clip(strings.TrimSpace(line), maxAnswer), Latency: clock.Since(start)}, nil
}

// shownURL is the base URL as errors name it.
func shownURL(m ModelAPI) string {
	if m.BaseURL == "" {
		return "(" + m.Provider + "'s default URL)"
	}
	return m.BaseURL
}

// modelError says what a failed request means and how to fix it: "llm
// URL: what (the agent's error): the fix". err is the agent's, redacted
// already.
func modelError(ctx context.Context, m ModelAPI, err error) error {
	url := shownURL(m)
	var pe *agent.ProviderError
	errors.As(err, &pe)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("llm %s: %w", url, ctx.Err())
	case pe != nil && (pe.Status == http.StatusUnauthorized || pe.Status == http.StatusForbidden):
		fix := "copy the key again from the provider's console, and check that it may use " + m.Model
		if m.Key == "" {
			fix = "this server wants an API key: give it with --llm-key-file"
		}
		return fmt.Errorf("llm %s: %w (%d %s: %w): %s", url, ErrKeyRefused, pe.Status, http.StatusText(pe.Status), err, fix)
	case pe != nil && pe.Status == http.StatusNotFound:
		return fmt.Errorf("llm %s: %w (404 Not Found: %w): check the base URL (an OpenAI-compatible one usually ends in /v1) and the model name %q (Ollama: ollama pull %s)",
			url, ErrModelRefused, err, m.Model, m.Model)
	case errors.Is(err, agent.ErrUnreachable):
		hint := "is the server running, and is the URL right? For a local one: is Ollama running (systemctl status ollama)? The base URL usually ends in /v1, as in http://127.0.0.1:11434/v1"
		if h := tlshint.Hint(err); h != "" {
			hint = h
		}
		return fmt.Errorf("llm %s: %w (%w): %s", url, ErrModelUnreachable, err, hint)
	}
	return fmt.Errorf("llm %s: %w (%w)", url, ErrModelRefused, err)
}
