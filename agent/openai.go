package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// openAI speaks POST {base_url}/chat/completions, as served by OpenAI,
// OpenRouter, Ollama, llama.cpp's server and vLLM. tool_choice is never
// sent: Ollama rejects it, and "auto" is everyone's default.
type openAI struct {
	maxTokens int
}

func (openAI) name() string { return ProviderOpenAI }
func (openAI) path() string { return "/chat/completions" }

func (openAI) setHeaders(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

type oaRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens,omitempty"` // what every compatible server takes; OpenAI's reasoning models want max_completion_tokens
	Messages  []oaMessage `json:"messages"`
	Tools     []oaTool    `json:"tools,omitempty"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    string       `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // a JSON document as a string
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func (p openAI) encode(r *request) ([]byte, error) {
	req := oaRequest{Model: r.model, MaxTokens: p.maxTokens, Messages: []oaMessage{{Role: "system", Content: r.system}}}
	for _, m := range r.msgs {
		switch m.role {
		case roleUser:
			req.Messages = append(req.Messages, oaMessage{Role: "user", Content: m.text})
		case roleAssistant:
			om := oaMessage{Role: "assistant", Content: m.text}
			for _, c := range m.calls {
				var tc oaToolCall
				tc.ID, tc.Type = c.id, "function"
				tc.Function.Name = c.name
				// Echo the arguments; invalid JSON would make some servers
				// (llama.cpp) reject the whole conversation, and the tool
				// result already tells the model what was wrong.
				tc.Function.Arguments = canonicalArgs(c.args)
				if !json.Valid([]byte(tc.Function.Arguments)) {
					tc.Function.Arguments = "{}"
				}
				om.ToolCalls = append(om.ToolCalls, tc)
			}
			req.Messages = append(req.Messages, om)
		case roleTool:
			for _, res := range m.results {
				req.Messages = append(req.Messages, oaMessage{Role: "tool", ToolCallID: res.id, Content: res.content})
			}
		}
	}
	for _, t := range r.tools {
		var ot oaTool
		ot.Type = "function"
		ot.Function.Name, ot.Function.Description = t.name, t.description
		ot.Function.Parameters = json.RawMessage(t.schema)
		req.Tools = append(req.Tools, ot)
	}
	return json.Marshal(req)
}

type oaResponse struct {
	Choices []struct {
		FinishReason string          `json:"finish_reason"`
		Error        json.RawMessage `json:"error"` // OpenRouter: the provider failed mid-answer
		Message      struct {
			Content   json.RawMessage `json:"content"`
			Refusal   string          `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (openAI) decode(body []byte) (reply, error) {
	return decodeOpenAI(body)
}

// decodeOpenAI parses a chat.completion object. It tolerates content as a
// string, null or an array of parts, and arguments as a string or an object.
func decodeOpenAI(body []byte) (reply, error) {
	var resp oaResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return reply{}, fmt.Errorf("not a chat completion: %w", err)
	}
	var rep reply
	if u := resp.Usage; u != nil {
		rep.tokens = u.TotalTokens
		if rep.tokens <= 0 {
			rep.tokens = u.PromptTokens + u.CompletionTokens
		}
		rep.tokens = max(rep.tokens, 0)
	}
	if len(resp.Choices) == 0 {
		if present(resp.Error) {
			// OpenRouter answers 200 once the model started, and reports a
			// failure after that in the body.
			return rep, &answerError{reason: "error in response: ", detail: errorMessage(body), code: errorCode(resp.Error)}
		}
		return rep, errors.New("no choices in response")
	}
	ch := resp.Choices[0]
	msg := ch.Message
	switch {
	case present(ch.Error):
		return rep, &answerError{reason: "error in response: ", detail: errorMessage([]byte(`{"error":` + string(ch.Error) + `}`)), code: errorCode(ch.Error)}
	case strings.TrimSpace(msg.Refusal) != "":
		return rep, &answerError{reason: "refusal: ", detail: oneLine(msg.Refusal)}
	case ch.FinishReason == "length":
		return rep, &answerError{reason: "finish_reason length: the answer was cut at max_output_tokens"}
	case ch.FinishReason == "content_filter":
		return rep, &answerError{reason: "finish_reason content_filter: the provider's content filter withheld the answer"}
	case ch.FinishReason == "error":
		return rep, &answerError{reason: "finish_reason error: the provider failed while answering"}
	}
	text, err := oaContent(msg.Content)
	if err != nil {
		return rep, err
	}
	rep.text = text
	for i, tc := range msg.ToolCalls {
		c := toolCall{id: tc.ID, name: tc.Function.Name, args: oaArguments(tc.Function.Arguments)}
		if c.id == "" {
			c.id = "call_" + strconv.Itoa(i)
		}
		rep.calls = append(rep.calls, c)
	}
	return rep, nil
}

// present reports whether a JSON value was sent and is not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func oaContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("message content is neither text nor parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// oaArguments returns the arguments' JSON text: the content of a JSON
// string (the OpenAI format, possibly invalid JSON inside), or the raw
// value for servers that send an object.
func oaArguments(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}
