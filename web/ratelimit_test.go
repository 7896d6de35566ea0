package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/transport"
)

// limitedEngine refuses resume as the daemon does past the rate of
// changes from afar.
type limitedEngine struct{ *fakeEngine }

func (l limitedEngine) Resume(context.Context) (string, error) {
	return "", fmt.Errorf("%w: more than 10 changes a minute from web; try again in 42s", transport.ErrRateLimited)
}

// TestRateLimitedIs429: a change refused for the rate is a 429 whose text
// says why, not a 500.
func TestRateLimitedIs429(t *testing.T) {
	f := newFake(t0, 1)
	s, err := New(f, limitedEngine{f}, Options{Live: Live{Allowed: []string{"status", "resume"}},
		Now: func() time.Time { return f.now }, Clock: clockwork.NewFakeClockAt(t0)})
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, s, "POST", "/do/resume", url.Values{"csrf": {s.Token()}}, "", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "more than 10 changes a minute") {
		t.Errorf("POST /do/resume past the rate = %d %q, want 429 saying why", resp.StatusCode, body)
	}
}
