package setup

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

const llmKey = "sk-test-0123456789abcdefghij"

// fakeLLMServer answers chat completions (OpenAI's protocol, as Ollama and
// OpenRouter speak it) and messages (Anthropic's) with text, checking
// the key; handler, when set, answers instead.
func fakeLLMServer(t *testing.T, text string, handler http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if handler != nil {
			handler(w, r)
			return
		}
		var req struct {
			Model string `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "tiny" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/chat/completions":
			if r.Header.Get("Authorization") != "Bearer "+llmKey {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided: sk-test-***","type":"invalid_request_error"}}`))
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
				"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}}})
		case "/v1/messages":
			if r.Header.Get("X-Api-Key") != llmKey {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "message", "stop_reason": "end_turn",
				"content": []any{map[string]any{"type": "text", "text": text}}})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"404 page not found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCheckModel(t *testing.T) {
	srv := fakeLLMServer(t, "  Hello, I am watching your board.\nA second line the check leaves out.", nil)
	for _, p := range []string{"openai", "anthropic"} {
		t.Run(p, func(t *testing.T) {
			got, err := CheckModel(context.Background(), ModelAPI{Provider: p, BaseURL: srv.URL + "/v1", Model: "tiny", Key: llmKey})
			if err != nil {
				t.Fatal(err)
			}
			if got.Answer != "Hello, I am watching your board." || got.RulesOnly {
				t.Errorf("CheckModel = %+v, want the first line of the answer", got)
			}
		})
	}
}

// The answer is redacted before it is cut: the key never shows, whole or
// in part.
func TestCheckModelAnswerRedacted(t *testing.T) {
	srv := fakeLLMServer(t, strings.Repeat("x", 190)+" "+llmKey+" and more", nil)
	got, err := CheckModel(context.Background(), ModelAPI{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "tiny", Key: llmKey})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Answer, llmKey[:8]) || len([]rune(got.Answer)) > maxAnswer {
		t.Errorf("CheckModel answer = %q: want it redacted and at most %d characters", got.Answer, maxAnswer)
	}
}

func TestCheckModelRulesOnly(t *testing.T) {
	for _, p := range []string{"", "none", "None"} {
		got, err := CheckModel(context.Background(), ModelAPI{Provider: p, BaseURL: "http://127.0.0.1:1/v1"})
		if err != nil || !got.RulesOnly {
			t.Errorf("CheckModel(%q) = %+v, %v; want rules-only, no request", p, got, err)
		}
	}
}

func TestCheckModelFailures(t *testing.T) {
	ok := fakeLLMServer(t, "hi", nil)
	release := make(chan struct{})
	slow := fakeLLMServer(t, "", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before the server closes
	down := "http://127.0.0.1:" + portString(mosquittotest.FreePort(t)) + "/v1"
	for _, tc := range []struct {
		name string
		api  ModelAPI
		is   error
		want []string
	}{
		{"wrong key", ModelAPI{Provider: "openai", BaseURL: ok.URL + "/v1", Model: "tiny", Key: "sk-wrong-abcdefghijklmnop"}, ErrKeyRefused,
			[]string{"llm " + ok.URL + "/v1: the LLM refused the API key (401 Unauthorized: ", "): copy the key again"}},
		{"no key", ModelAPI{Provider: "anthropic", BaseURL: ok.URL, Model: "tiny"}, ErrKeyRefused,
			[]string{"the LLM refused the API key (401 Unauthorized: ", "): this server wants an API key: give it with --llm-key-file"}},
		{"not answering", ModelAPI{Provider: "openai", BaseURL: down, Model: "tiny"}, ErrModelUnreachable,
			[]string{"llm " + down + ": the LLM did not answer", "is Ollama running", "ends in /v1", "connection refused"}},
		{"timeout", ModelAPI{Provider: "openai", BaseURL: slow.URL + "/v1", Model: "tiny", Key: llmKey, Timeout: 300 * time.Millisecond}, ErrModelUnreachable,
			[]string{"llm " + slow.URL + "/v1: the LLM did not answer", "no response within 300ms"}},
		{"no /v1", ModelAPI{Provider: "openai", BaseURL: ok.URL, Model: "tiny", Key: llmKey}, ErrModelRefused,
			[]string{"the LLM refused the request (404 Not Found: ", "): check the base URL (an OpenAI-compatible one usually ends in /v1) and the model name \"tiny\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckModel(context.Background(), tc.api)
			if !errors.Is(err, tc.is) {
				t.Fatalf("CheckModel = %v, want %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CheckModel = %q, want it to say %q", err, w)
				}
			}
			if tc.api.Key != "" && strings.Contains(err.Error(), tc.api.Key) {
				t.Errorf("the key leaked: %q", err)
			}
		})
	}
}

func TestCheckModelNoModel(t *testing.T) {
	_, err := CheckModel(context.Background(), ModelAPI{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1"})
	if err == nil || !strings.Contains(err.Error(), "no model name: give one with --llm-model") {
		t.Errorf("CheckModel without a model = %v, want it to ask for --llm-model", err)
	}
}
