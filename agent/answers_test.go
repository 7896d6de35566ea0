package agent

import (
	"testing"
)

// TestMaxTokensSent: llm.max_output_tokens reaches every request, in the
// max_tokens field both protocols take.
func TestMaxTokensSent(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		for _, tt := range []struct{ cfg, want int }{{0, DefaultMaxTokens}, {300, 300}} {
			f := newFake(t, p, turn{calls: []call{respond("ok", "", "")}})
			cfg := testConfig(f)
			cfg.MaxTokens = tt.cfg
			if _, err := think(t, newTestAgent(t, cfg, nil, nil)); err != nil {
				t.Fatalf("Think: %v", err)
			}
			reqs := f.requests()
			if got, _ := reqs[0].body["max_tokens"].(float64); int(got) != tt.want {
				t.Errorf("MaxTokens %d: request max_tokens = %v, want %d", tt.cfg, reqs[0].body["max_tokens"], tt.want)
			}
		}
	})
}
