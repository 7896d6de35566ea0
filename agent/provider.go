package agent

// The providers are written by hand over internal/httpc instead of using the
// vendors' SDKs: the SDKs would add megabytes to a binary meant for a Pi Zero,
// and vigil needs control over timeouts, retries, redaction of the API key and
// the exact request shape that every OpenAI-compatible server accepts.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vigil-iot/vigil/internal/httpc"
)

// Classes of provider errors; test them with errors.Is.
var (
	// ErrUnreachable: network error, timeout, 429 or 5xx, still failing after
	// the retries. The heartbeat puts the LLM into backoff.
	ErrUnreachable = errors.New("llm unreachable")
	// ErrRejected: the provider refused the request (400, 401, 403, 404, ...).
	// Retrying does not help; it is a configuration problem.
	ErrRejected = errors.New("llm rejected the request")
	// ErrMalformed: the provider answered 2xx with a body that is not a
	// response of its protocol.
	ErrMalformed = errors.New("malformed llm response")
	// ErrBudget: the run reached Input.MaxCalls, the caller's remaining
	// daily budget; no further request was sent.
	ErrBudget = errors.New("llm call budget spent")
)

// ProviderError is an error from one LLM request. It matches ErrUnreachable,
// ErrRejected or ErrMalformed under errors.Is. It never contains the API key.
type ProviderError struct {
	Provider   string        // "openai" | "anthropic"
	Status     int           // HTTP status; 0 when no response arrived
	Retryable  bool          // network error, timeout, 408, 429 or 5xx
	RetryAfter time.Duration // from the Retry-After header, if any
	Err        error
}

func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: http %d: %v", e.Provider, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Provider, e.Err)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Is reports the class of the error: ErrUnreachable, ErrRejected or ErrMalformed.
func (e *ProviderError) Is(target error) bool {
	switch target {
	case ErrUnreachable:
		return e.Retryable
	case ErrMalformed:
		return !e.Retryable && e.Status >= 200 && e.Status < 300
	case ErrRejected:
		return !e.Retryable && (e.Status < 200 || e.Status >= 300)
	}
	return false
}

// maxBody bounds what is read from a response.
const maxBody = 1 << 20

// HTTP status codes the agent tells apart.
const (
	statusOK              = 200
	statusRequestTimeout  = 408
	statusTooManyRequests = 429
)

// Conversation roles, provider-neutral.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool" // results of the previous assistant's tool calls
)

// message is one turn of a conversation, provider-neutral.
type message struct {
	role    string
	text    string
	calls   []toolCall   // roleAssistant
	results []toolResult // roleTool
}

type toolCall struct {
	id   string
	name string
	args string // JSON text as the model sent it; may be invalid
}

type toolResult struct {
	id      string
	content string
	isError bool
}

type toolDef struct {
	name        string
	description string
	schema      string // JSON schema of the arguments
}

type request struct {
	model  string
	system string
	tools  []toolDef
	msgs   []message
}

type reply struct {
	text   string
	calls  []toolCall
	tokens int
}

// provider is one LLM wire protocol.
type provider interface {
	name() string
	path() string // appended to the base URL
	setHeaders(h *httpc.Header, apiKey string)
	encode(r *request) ([]byte, error)
	decode(body []byte) (reply, error)
}

// complete sends one model call, retrying what may succeed on a second try.
// Every HTTP attempt is counted in dec.Calls, the tokens of the answer in
// dec.Tokens.
// maxCalls > 0 caps dec.Calls: the request is not sent once it is reached.
func (a *Agent) complete(ctx context.Context, req *request, dec *Decision, maxCalls int) (reply, error) {
	body, err := a.prov.encode(req)
	if err != nil {
		return reply{}, fmt.Errorf("encode request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return reply{}, fmt.Errorf("%s request: %w", a.prov.name(), err)
		}
		if maxCalls > 0 && dec.Calls >= maxCalls {
			return reply{}, fmt.Errorf("%w: %d calls", ErrBudget, dec.Calls)
		}
		dec.Calls++
		start := a.clock.Now()
		raw, perr := a.once(ctx, body)
		if perr == nil {
			rep, err := a.prov.decode(raw)
			dec.Tokens += rep.tokens
			a.log.Debug("llm call", logProvider, a.prov.name(), logModel, req.model,
				logAttempt, attempt+1, logRequestBytes, len(body), logResponseBytes, len(raw),
				logTokens, rep.tokens, logDuration, a.clock.Since(start))
			if err != nil {
				return reply{}, &ProviderError{Provider: a.prov.name(), Status: statusOK,
					Err: errors.New(a.redact(fmt.Sprintf("decode response: %v", err)))}
			}
			return rep, nil
		}
		if err := ctx.Err(); err != nil {
			return reply{}, fmt.Errorf("%s request: %w", a.prov.name(), err)
		}
		if !perr.Retryable || attempt >= a.cfg.MaxRetries {
			return reply{}, perr
		}
		wait := a.backoff(attempt)
		if perr.RetryAfter > 0 {
			if perr.RetryAfter > a.cfg.RetryMax {
				return reply{}, perr // the heartbeat's backoff covers such waits
			}
			wait = perr.RetryAfter
		}
		a.log.Info("llm retry", logProvider, a.prov.name(), logModel, req.model,
			logAttempt, attempt+1, logError, perr.Error(), logWait, wait)
		if !a.sleep(ctx, wait) {
			return reply{}, perr
		}
	}
}

// once makes one HTTP request under the per-request timeout.
func (a *Agent) once(ctx context.Context, body []byte) ([]byte, *ProviderError) {
	rctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	h := httpc.Header{
		{"Content-Type", "application/json"},
		{"Accept", "application/json"},
		{"User-Agent", a.cfg.UserAgent},
	}
	a.prov.setHeaders(&h, a.cfg.APIKey)

	resp, err := a.hc.Post(rctx, a.url, h, body, maxBody)
	tooLarge := errors.Is(err, httpc.ErrBodyTooLarge)
	if err != nil && !tooLarge {
		if resp == nil { // no response header
			if rctx.Err() != nil && ctx.Err() == nil {
				return nil, a.perr(0, true, fmt.Errorf("no response within %v", a.cfg.Timeout))
			}
			if errors.Is(err, httpc.ErrInvalidRequest) {
				return nil, a.perr(0, false, fmt.Errorf("build request: %w", err))
			}
			return nil, a.perr(0, true, err)
		}
		if rctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("response not complete within %v", a.cfg.Timeout)
		}
		return nil, a.perr(resp.Status, true, fmt.Errorf("read response: %w", err))
	}
	st, raw := resp.Status, resp.Body
	if st >= 200 && st < 300 {
		if tooLarge {
			return nil, a.perr(st, false, fmt.Errorf("response larger than %d bytes", maxBody))
		}
		return raw, nil
	}
	retryable := st == statusTooManyRequests || st == statusRequestTimeout || st >= 500
	msg := errorMessage(raw)
	if st >= 300 && st < 400 {
		msg = "redirect to " + resp.Header.Get("Location") + " (check base_url)"
	}
	pe := a.perr(st, retryable, errors.New(msg))
	if retryable {
		pe.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), a.clock.Now())
	}
	return nil, pe
}

// perr builds a ProviderError whose text has the API key redacted.
func (a *Agent) perr(status int, retryable bool, err error) *ProviderError {
	return &ProviderError{Provider: a.prov.name(), Status: status, Retryable: retryable,
		Err: &redactedError{msg: a.redact(err.Error()), err: err}}
}

// redactedError shows a message with secrets removed and still unwraps to
// the original error for errors.Is.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func (a *Agent) redact(s string) string {
	if len(a.cfg.APIKey) >= 4 {
		s = strings.ReplaceAll(s, a.cfg.APIKey, "[redacted]")
	}
	return s
}

// backoff returns the wait before retry attempt+1: exponential from
// RetryBase, capped at RetryMax, with equal jitter.
func (a *Agent) backoff(attempt int) time.Duration {
	d := a.cfg.RetryBase
	for i := 0; i < attempt && d < a.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, a.cfg.RetryMax)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d on the injected clock; false if ctx ended first.
func (a *Agent) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := a.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.Chan():
		return true
	}
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP-date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 || n > 1e6 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := httpc.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// errorMessage extracts a short reason from an error body: OpenAI's and
// Anthropic's {"error":{"message":...}}, Ollama's {"error":"..."}, or the
// start of the body.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
			if obj.Type != "" {
				msg = obj.Type + ": " + msg
			}
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case v.Message != "":
			msg = v.Message
		}
	}
	if msg == "" {
		msg = string(body)
	}
	msg = strings.Join(strings.FieldsFunc(msg, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if msg == "" {
		return "empty response body"
	}
	return clip(msg, 300)
}

// Log attribute keys.
const (
	logProvider = "provider"
	logModel    = "model"
	logAttempt  = "attempt"
	logTokens   = "tokens"
	logDuration = "duration"

	logRequestBytes  = "request_bytes"
	logResponseBytes = "response_bytes"
	logError         = "err"
	logWait          = "wait"
	logTool          = "tool"
	logOutcome       = "outcome"
	logCalls         = "calls"
)
