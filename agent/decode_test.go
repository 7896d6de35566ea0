package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/redact"
)

func addTranscripts(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkReply is what every decoded reply must satisfy, whatever the body.
func checkReply(t *testing.T, body []byte, rep reply, err error) {
	t.Helper()
	if rep.tokens < 0 {
		t.Errorf("decode(%q): %d tokens", body, rep.tokens)
	}
	if err != nil && (rep.text != "" || len(rep.calls) > 0) {
		t.Errorf("decode(%q): error %v with a reply", body, err)
	}
	for _, c := range rep.calls {
		if c.id == "" {
			t.Errorf("decode(%q): tool call without id", body)
		}
		// Whatever the arguments, running the call must not panic.
		r := &run{a: &Agent{tools: allTools()}, in: quietInput(), dec: &Decision{}}
		r.exec(context.Background(), c.name, c.args)
		canonicalArgs(c.args)
	}
}

func FuzzOpenAIResponse(f *testing.F) {
	addTranscripts(f, "openai_tool_call.json", "openai_text.json", "ollama_tool_call.json",
		"openai_refusal.json", "openai_length.json", "openai_content_filter.json", "openrouter_choice_error.json", "openrouter_error_200.json")
	for _, s := range []string{``, `{}`, `null`, `{"choices":[]}`, `{"choices":[{"message":{"content":[{"type":"text","text":"hi"}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{"name":"read_sensor","arguments":{"name":"air"}}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{bad"}}]}}],"usage":{"total_tokens":-5}}`,
		`{"error":"model not found"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rep, err := decodeOpenAI(body)
		checkReply(t, body, rep, err)
	})
}

func FuzzAnthropicResponse(f *testing.F) {
	addTranscripts(f, "anthropic_tool_use.json", "anthropic_refusal.json", "anthropic_max_tokens.json")
	for _, s := range []string{``, `{}`, `{"type":"message","content":[]}`, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"message","content":[{"type":"tool_use","name":"pause_heartbeats","input":"{\"minutes\":5"}]}`,
		`{"type":"message","content":[{"type":"tool_use","id":"t","name":"sensor_history","input":{"name":"air","quantity":"temperature","window":"99999h"}}],"usage":{"input_tokens":9223372036854775807,"output_tokens":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rep, err := decodeAnthropic(body)
		checkReply(t, body, rep, err)
	})
}

func FuzzErrorMessage(f *testing.F) {
	for _, s := range []string{``, `{"error":{"message":"x","type":"y"}}`, `{"error":"z"}`, "\x00\xff<html>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// Uncut: the caller cuts it after redaction, with redact.Clip.
		msg := errorMessage(body)
		if msg == "" || strings.ContainsAny(msg, "\n\r\x00") {
			t.Errorf("errorMessage(%q) = %q", body, msg)
		}
		if c := redact.New().Clip(msg, redact.CutError); len([]rune(c)) > redact.CutError {
			t.Errorf("Clip(errorMessage(%q)) = %q: longer than %d", body, c, redact.CutError)
		}
	})
}
