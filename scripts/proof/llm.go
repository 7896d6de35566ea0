package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// llmServer is a local OpenAI-compatible server on 127.0.0.1. It answers at
// once with heartbeat_respond ok (so vigil's figures are vigil's, not a
// model's), records what it was sent, and can be switched into faults.
type llmServer struct {
	srv  *http.Server
	addr string

	mu       sync.Mutex
	requests int
	first    *promptSize
	mode     string // "ok" | "outage" | "broken"
	rng      *rand.Rand
	faults   map[string]int
	times    []time.Time // when each request arrived
}

// promptSize is what one request carried.
type promptSize struct {
	Body     int // the whole JSON request body
	System   int // system message text
	User     int // user message text
	Tools    int // the tools array as JSON
	Messages int
}

func newLLMServer() (*llmServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &llmServer{addr: ln.Addr().String(), mode: "ok", rng: rand.New(rand.NewPCG(7, 7)), faults: map[string]int{}}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *llmServer) baseURL() string { return "http://" + s.addr + "/v1" }
func (s *llmServer) close()          { s.srv.Close() }

func (s *llmServer) setMode(m string) { s.mu.Lock(); s.mode = m; s.mu.Unlock() }

func (s *llmServer) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.requests }

// requestTimes returns when each request arrived, in order.
func (s *llmServer) requestTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

func (s *llmServer) firstPrompt() *promptSize { s.mu.Lock(); defer s.mu.Unlock(); return s.first }

func (s *llmServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	s.times = append(s.times, time.Now())
	if s.first == nil {
		p := &promptSize{Body: len(body), Tools: len(req.Tools), Messages: len(req.Messages)}
		for _, m := range req.Messages {
			var text string
			json.Unmarshal(m.Content, &text)
			switch m.Role {
			case "system":
				p.System += len(text)
			case "user":
				p.User += len(text)
			}
		}
		s.first = p
	}
	mode := s.mode
	fault := "ok"
	switch mode {
	case "outage":
		fault = []string{"429", "500", "503", "hang", "close"}[s.rng.IntN(5)]
	case "broken":
		fault = []string{"garbage", "loop", "400"}[s.rng.IntN(3)]
	}
	s.faults[fault]++
	s.mu.Unlock()

	respond := func(name, args string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":%q}}]}}],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}`, name, args)
	}
	switch fault {
	case "ok":
		respond("heartbeat_respond", `{"outcome":"ok","severity":"info","summary":"all fine"}`)
	case "loop":
		respond("read_sensor", `{"name":"air"}`)
	case "429":
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
	case "500":
		http.Error(w, `{"error":{"message":"internal"}}`, http.StatusInternalServerError)
	case "503":
		http.Error(w, `{"error":{"message":"loading"}}`, http.StatusServiceUnavailable)
	case "400":
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "<html>502 bad gateway</html>\x00")
	case "hang":
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	case "close":
		w.Header().Set("Content-Length", "5000")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"id":"c","choices":[`)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
	}
}
