package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/vigil-iot/vigil/redact"
)

// anthropicVersion is the Messages API version vigil speaks.
const anthropicVersion = "2023-06-01"

// anthropic speaks POST {base_url}/v1/messages: system at the top level,
// tool_use blocks answered by tool_result blocks in the next user message.
type anthropic struct {
	maxTokens int
}

func (anthropic) name() string { return ProviderAnthropic }
func (anthropic) path() string { return "/v1/messages" }

func (anthropic) setHeaders(h http.Header, key string) {
	if key != "" {
		h.Set("x-api-key", key)
	}
	h.Set("anthropic-version", anthropicVersion)
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (p anthropic) encode(r *request) ([]byte, error) {
	req := anRequest{Model: r.model, MaxTokens: p.maxTokens, System: r.system}
	for _, m := range r.msgs {
		switch m.role {
		case roleUser:
			req.Messages = append(req.Messages, anMessage{Role: "user", Content: []anBlock{{Type: "text", Text: m.text}}})
		case roleAssistant:
			am := anMessage{Role: "assistant"}
			if strings.TrimSpace(m.text) != "" { // empty text blocks are rejected
				am.Content = append(am.Content, anBlock{Type: "text", Text: m.text})
			}
			for _, c := range m.calls {
				in := canonicalArgs(c.args)
				if !strings.HasPrefix(in, "{") || !json.Valid([]byte(in)) {
					in = "{}" // input must be an object
				}
				am.Content = append(am.Content, anBlock{Type: "tool_use", ID: c.id, Name: c.name, Input: json.RawMessage(in)})
			}
			req.Messages = append(req.Messages, am)
		case roleTool:
			um := anMessage{Role: "user"}
			for _, res := range m.results {
				um.Content = append(um.Content, anBlock{Type: "tool_result", ToolUseID: res.id, Content: res.content, IsError: res.isError})
			}
			req.Messages = append(req.Messages, um)
		}
	}
	for _, t := range r.tools {
		req.Tools = append(req.Tools, anTool{Name: t.name, Description: t.description, InputSchema: json.RawMessage(t.schema)})
	}
	return json.Marshal(req)
}

type anResponse struct {
	Type        string `json:"type"`
	StopReason  string `json:"stop_reason"`
	StopDetails *struct {
		Category    string `json:"category"`
		Explanation string `json:"explanation"`
	} `json:"stop_details"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage *struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func (anthropic) decode(body []byte) (reply, error) {
	return decodeAnthropic(body)
}

// decodeAnthropic parses a Messages API response.
func decodeAnthropic(body []byte) (reply, error) {
	var resp anResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return reply{}, fmt.Errorf("not a message: %w", err)
	}
	var rep reply
	if u := resp.Usage; u != nil {
		rep.tokens = max(u.InputTokens+u.OutputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, 0)
	}
	switch resp.Type {
	case "message":
	case "error":
		// An error event inside a 200 (a stream that failed after it began,
		// a proxy): the same outage as that status would be, retried and
		// classed alike, as OpenRouter's errors inside a 200 are.
		return rep, &answerError{reason: "error in response: ", detail: errorMessage(body), code: anthropicErrorCode(body)}
	default:
		return rep, &quoteError{reason: "response type, want message: ", quote: resp.Type, n: redact.CutType}
	}
	if resp.Content == nil {
		return rep, errors.New("no content in message")
	}
	switch resp.StopReason {
	case "refusal":
		reason := "stop_reason refusal: the model declined"
		detail := ""
		if d := resp.StopDetails; d != nil && strings.TrimSpace(d.Explanation+d.Category) != "" {
			reason += ": "
			detail = oneLine(strings.TrimSpace(d.Category + " " + d.Explanation))
		}
		return rep, &answerError{reason: reason, detail: detail}
	case "max_tokens":
		return rep, &answerError{reason: "stop_reason max_tokens: the answer was cut at max_output_tokens"}
	case "model_context_window_exceeded":
		return rep, &answerError{reason: "stop_reason model_context_window_exceeded: the answer was cut at the context window"}
	}
	var text strings.Builder
	for i, b := range resp.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			c := toolCall{id: b.ID, name: b.Name, args: string(b.Input)}
			if c.id == "" {
				c.id = "toolu_" + strconv.Itoa(i)
			}
			rep.calls = append(rep.calls, c)
		}
	}
	rep.text = text.String()
	return rep, nil
}

// anthropicErrorCode returns the HTTP status Anthropic documents for the
// type of an error event ({"type":"error","error":{"type":...}}), so that
// one inside a 200 is retried and classed as that status would be; 0 for
// a type it does not know.
func anthropicErrorCode(body []byte) int {
	var v struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return 0
	}
	switch v.Error.Type {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "api_error":
		return http.StatusInternalServerError
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return 0
}
