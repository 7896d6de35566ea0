package agent

import (
	"context"
	"errors"
	"testing"
)

// A run stops before the request that would pass Input.MaxCalls (the day's
// remaining budget), whatever the model wants next.
func TestMaxCallsCapsTheRun(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFakeFunc(t, p, func(n int) turn {
				return turn{calls: []call{{"call_list", ToolListSensors, `{}`}}, in: 100, out: 10}
			})
			a := newTestAgent(t, testConfig(f), nil, nil)
			in := quietInput()
			in.MaxCalls = 2 // MaxSteps (6) would allow more
			dec, err := a.Think(context.Background(), in)
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("Think with MaxCalls 2 and an endless tool loop: err = %v, want ErrBudget", err)
			}
			if got := len(f.requests()); got != 2 || dec.Calls != 2 {
				t.Fatalf("server saw %d requests, Decision.Calls = %d; want 2 and 2", got, dec.Calls)
			}
		})
	}
}
