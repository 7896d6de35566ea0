package agent

// The providers are written by hand over net/http instead of using the
// vendors' SDKs: the SDKs would add megabytes to a binary meant for a Pi Zero,
// and vigil needs control over timeouts, retries, redaction of the API key and
// the exact request shape that every OpenAI-compatible server accepts.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/vigil-iot/vigil/redact"
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
	// response of its protocol, or one that carries no usable answer
	// (ErrNoAnswer).
	ErrMalformed = errors.New("malformed llm response")
	// ErrNoAnswer: a well-formed 2xx response without a usable answer: a
	// refusal, a content filter, an answer cut at max_output_tokens, a
	// provider error inside the 200 (OpenRouter), or nothing at all. The
	// error carries the provider's reason. Such a run is a failed
	// heartbeat, never an alert.
	ErrNoAnswer = errors.New("no usable llm answer")
	// ErrBudget: the run reached Input.MaxCalls, the caller's remaining
	// daily budget; no further request was sent.
	ErrBudget = errors.New("llm call budget spent")
	// ErrToolsUnsupported: the server refused the request because the
	// model (or the server as started) takes no tools. It also matches
	// ErrRejected; the agent asks again in the text contract.
	ErrToolsUnsupported = errors.New("llm takes no tools")
)

// ProviderError is an error from one LLM request. It matches ErrUnreachable,
// ErrRejected or ErrMalformed under errors.Is. It never contains the API key.
type ProviderError struct {
	Provider   string        // "openai" | "anthropic"
	Status     int           // HTTP status; 0 when no response arrived
	Retryable  bool          // network error, timeout, 408, 429 or 5xx
	RetryAfter time.Duration // from retry-after-ms or Retry-After, if any
	// Delivered: the whole request was written and the connection then
	// closed without a complete answer. The server may have read and
	// billed it, so the agent does not send it again (see complete).
	Delivered bool
	// NoAnswer: the response was well-formed but held no usable answer
	// (see ErrNoAnswer).
	NoAnswer bool
	// Timeout: no complete answer within Config.Timeout.
	Timeout bool
	// ToolsUnsupported: the server refused the tools for this model (see
	// ErrToolsUnsupported); never retried as it was.
	ToolsUnsupported bool
	Err              error
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
	case ErrNoAnswer:
		return e.NoAnswer
	case ErrToolsUnsupported:
		return e.ToolsUnsupported
	case ErrRejected:
		return !e.Retryable && (e.Status < 200 || e.Status >= 300)
	}
	return false
}

// ErrorClass sums up a Think error in a word for the meta snapshot of the
// next prompt: "timeout", "network", "http_429", "http_5xx", "http_4xx"
// (or the exact status for 401, 403, 404), "refusal", "no_answer",
// "malformed", "no_decision", "budget", "canceled" or "error"; "" for nil.
func ErrorClass(err error) string {
	var pe *ProviderError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBudget):
		return "budget"
	case errors.Is(err, ErrLoop):
		return "no_decision"
	case errors.As(err, &pe):
		switch {
		case pe.Timeout:
			return "timeout"
		case pe.NoAnswer:
			msg := strings.ToLower(pe.Err.Error()) // no typed error: OpenAI and OpenRouter say "refusal" or "content_filter" only in the answer's text
			if strings.Contains(msg, "refusal") || strings.Contains(msg, "content_filter") {
				return "refusal"
			}
			return "no_answer"
		case pe.Status == 0:
			return "network"
		case pe.Status >= 200 && pe.Status < 300:
			return "malformed"
		case pe.Status == statusTooManyRequests:
			return "http_429"
		case pe.Status >= 500:
			return "http_5xx"
		case pe.Status == http.StatusUnauthorized || pe.Status == http.StatusForbidden || pe.Status == http.StatusNotFound:
			return "http_" + strconv.Itoa(pe.Status)
		}
		return "http_4xx"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// maxBody bounds what is read from a response.
const maxBody = 1 << 20

// HTTP status codes the agent tells apart.
const (
	statusOK              = http.StatusOK
	statusRequestTimeout  = http.StatusRequestTimeout
	statusTooManyRequests = http.StatusTooManyRequests
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
	setHeaders(h http.Header, apiKey string)
	encode(r *request) ([]byte, error)
	decode(body []byte) (reply, error)
}

// complete sends one model call, retrying what may succeed on a second try.
// Every HTTP attempt is counted in dec.Calls, the tokens of the answer in
// dec.Tokens.
//
// Retry policy: a request is sent again after 408, 429 or 5xx (the server
// says it did not do the work; OpenRouter may say so inside a 200), after a network error that struck before
// the whole request was written (refused, DNS, TLS, proxy: the server
// cannot have read it), and after the per-request timeout (the agent gave
// up waiting; llama.cpp and Ollama go quiet while loading a model). It is
// never sent again when the server read the whole request and then closed
// the connection without a complete answer (ProviderError.Delivered): that
// server may have done the work, and a second POST could bill the call
// twice. The run then fails as ErrUnreachable and the heartbeat's own
// backoff decides when to ask again. Within one attempt, net/http re-sends
// a POST only when nothing of it was written to a reused connection.
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
			if err == nil && len(rep.calls) == 0 && strings.TrimSpace(rep.text) == "" {
				err = &answerError{reason: "empty answer: no text and no tool call"}
			}
			var ae *answerError
			var qe *quoteError
			switch {
			case errors.As(err, &ae):
				perr = &ProviderError{Provider: a.prov.name(), Status: statusOK, NoAnswer: true,
					Retryable: ae.code == statusTooManyRequests || ae.code == statusRequestTimeout || ae.code >= 500,
					Err:       errors.New(a.redact(ae.reason) + a.red.Clip(ae.detail, redact.CutError))}
				if !perr.Retryable {
					return reply{}, perr
				}
			case errors.As(err, &qe):
				return reply{}, &ProviderError{Provider: a.prov.name(), Status: statusOK,
					Err: errors.New("decode response: " + a.redact(qe.reason) + a.red.Clip(qe.quote, qe.n))}
			case err != nil:
				return reply{}, &ProviderError{Provider: a.prov.name(), Status: statusOK,
					Err: errors.New(a.redact(fmt.Sprintf("decode response: %v", err)))}
			default:
				return rep, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return reply{}, fmt.Errorf("%s request: %w", a.prov.name(), err)
		}
		if !perr.Retryable || perr.Delivered || attempt >= a.cfg.MaxRetries {
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

// answerError is a well-formed response without a usable answer; reason
// is vigil's words, detail the provider's (uncut: complete redacts, then
// cuts it), code its error code when it sent one (OpenRouter's in-200
// errors carry the HTTP status the request would have had; an Anthropic
// error event names a type that has one, see anthropicErrorCode).
type answerError struct {
	reason string
	detail string
	code   int
}

func (e *answerError) Error() string { return e.reason + e.detail }

// quoteError is a response that is not of the protocol, quoting what the
// provider sent (uncut: complete redacts, then cuts it at n characters).
type quoteError struct {
	reason, quote string
	n             int
}

func (e *quoteError) Error() string { return e.reason + e.quote }

// errorCode reads an error object's numeric "code" (OpenRouter); 0 when it
// has none or a string code (OpenAI).
func errorCode(raw json.RawMessage) int {
	var v struct {
		Code json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.Trim(string(v.Code), `"`))
	if err != nil {
		return 0
	}
	return n
}

// once makes one HTTP request under the per-request timeout.
func (a *Agent) once(ctx context.Context, body []byte) ([]byte, *ProviderError) {
	rctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	var wrote atomic.Bool // the whole request reached the connection
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) },
	})
	hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return nil, a.perr(0, false, fmt.Errorf("build request: %w", err))
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", a.cfg.UserAgent)
	a.prov.setHeaders(hreq.Header, a.cfg.APIKey)

	resp, err := a.hc.Do(hreq)
	if err != nil {
		if rctx.Err() != nil && ctx.Err() == nil {
			pe := a.perr(0, true, fmt.Errorf("no response within %v", a.cfg.Timeout))
			pe.Timeout = true
			return nil, pe
		}
		pe := a.perr(0, true, urlErr(err))
		pe.Delivered = wrote.Load() && ctx.Err() == nil
		return nil, pe
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		timedOut := rctx.Err() != nil && ctx.Err() == nil
		if timedOut {
			err = fmt.Errorf("response not complete within %v", a.cfg.Timeout)
		}
		pe := a.perr(resp.StatusCode, true, fmt.Errorf("read response: %w", err))
		pe.Delivered, pe.Timeout = !timedOut, timedOut
		return nil, pe
	}
	st := resp.StatusCode
	if st >= 200 && st < 300 {
		if len(raw) > maxBody {
			return nil, a.perr(st, false, fmt.Errorf("response larger than %d bytes", maxBody))
		}
		return raw, nil
	}
	retryable := st == statusTooManyRequests || st == statusRequestTimeout || st >= 500
	msg := errorMessage(raw)
	if st >= 300 && st < 400 {
		msg = "redirect to " + resp.Header.Get("Location") + " (check base_url)"
	}
	pe := a.perr(st, retryable, errors.New(a.red.Clip(msg, redact.CutError)))
	if toolsRefused(st, msg) {
		// A refusal, whatever its status: llama.cpp's server files it
		// as a 500, and asking again with tools gets the same answer.
		pe.Retryable, pe.ToolsUnsupported = false, true
		return nil, pe
	}
	if retryable {
		pe.RetryAfter = retryAfterMS(resp.Header.Get("Retry-After-Ms"))
		if pe.RetryAfter == 0 {
			pe.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), a.clock.Now())
		}
	}
	return nil, pe
}

// toolsRefused classifies an error response: it reports whether the
// server refused the request's tools for the model. This is the one place
// a provider's words are read for it; the agent sees ErrToolsUnsupported.
// Ollama answers 400 "... does not support tools"; llama.cpp's server
// started without --jinja answers 500 (400 in some builds) "tools param
// requires --jinja flag"; vLLM without a tool parser 400 "... requires
// --enable-auto-tool-choice"; OpenRouter 404 "No endpoints found that
// support tool use".
func toolsRefused(status int, msg string) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusInternalServerError:
	default:
		return false
	}
	msg = strings.ToLower(msg) // no typed error: Ollama, llama.cpp, vLLM and OpenRouter say it only in the text of their error answer
	for _, s := range []string{
		"does not support tools",
		"tools param requires --jinja",
		"tool choice requires --enable-auto-tool-choice",
		"no endpoints found that support tool use",
		"tool use is not supported",
		"tools are not supported",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// urlErr shortens net/http's *url.Error, which quotes the whole URL, to
// the method and host: "post api.openai.com: dial tcp ...".
func urlErr(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	host := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		host = u.Host
	}
	return fmt.Errorf("%s %s: %w", strings.ToLower(ue.Op), host, ue.Err)
}

// perr builds a ProviderError whose text has the secrets redacted.
func (a *Agent) perr(status int, retryable bool, err error) *ProviderError {
	return &ProviderError{Provider: a.prov.name(), Status: status, Retryable: retryable, Err: a.red.Error(err)}
}

func (a *Agent) redact(s string) string { return a.red.String(s) }

// backoff returns the wait before retry attempt+1: RetryBase doubled for
// each earlier retry (1s, 2s, 4s with the default llm.retry_backoff),
// capped at RetryMax. It is exact, as documented for llm.retry_backoff: a
// board's heartbeats are minutes apart and phased by its device id, so
// there is no herd of retries to spread.
func (a *Agent) backoff(attempt int) time.Duration {
	d := a.cfg.RetryBase
	for i := 0; i < attempt && d < a.cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, a.cfg.RetryMax)
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
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// retryAfterMS parses retry-after-ms, the millisecond form OpenAI and
// Azure OpenAI send beside Retry-After; it wins when both are present.
func retryAfterMS(v string) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 || n > 1e9 {
		return 0
	}
	return time.Duration(n * float64(time.Millisecond))
}

// errorMessage extracts the reason from an error body, on one line and
// uncut (cut it with redact.Clip): OpenAI's and Anthropic's
// {"error":{"message":...}}, Ollama's {"error":"..."}, or the body.
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
	return msg
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
