package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestOnceTransport covers what one request makes of transport-level
// outcomes: oversized bodies, a body cut by the timeout, an unusable URL.
func TestOnceTransport(t *testing.T) {
	big := strings.Repeat("x", maxBody+1)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		baseURL string // instead of the server's
		class   error
		status  int
		want    string
	}{
		{"oversized 2xx", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big) },
			"", ErrMalformed, 200, fmt.Sprintf("response larger than %d bytes", maxBody)},
		{"oversized error body", func(w http.ResponseWriter, r *http.Request) { http.Error(w, big, 503) },
			"", ErrUnreachable, 503, "xxxxxxxx"},
		{"body cut by the timeout", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			fmt.Fprint(w, "{")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "", ErrUnreachable, 200, "read response: response not complete within 100ms"},
		{"unusable url", nil, "http://exa mple.com/v1", ErrRejected, 0, "build request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.baseURL
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				defer srv.Close()
				base = srv.URL + "/v1"
			}
			a, err := New(Config{BaseURL: base, Model: "m", APIKey: testKey, Timeout: 100 * time.Millisecond}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, perr := a.once(context.Background(), []byte("{}"))
			if perr == nil {
				t.Fatal("once() = nil error")
			}
			if !errors.Is(perr, tt.class) || perr.Status != tt.status || !strings.Contains(perr.Error(), tt.want) {
				t.Errorf("once() = %v (status %d), want %v, status %d, %q", perr, perr.Status, tt.class, tt.status, tt.want)
			}
			if strings.Contains(perr.Error(), testKey) {
				t.Errorf("once() = %v contains the key", perr)
			}
		})
	}
}

// TestThinkNeverResendsARequestTheServerRead: a server that reads the whole
// request and closes the connection without answering may have done the
// work (and billed it). Neither net/http nor the agent's retries send that
// request again; the run fails as ErrUnreachable.
func TestThinkNeverResendsARequestTheServerRead(t *testing.T) {
	forProviders(t, func(t *testing.T, p string) {
		tests := []struct {
			name  string
			turns []turn
		}{
			{"on a new connection", []turn{{hangUp: true}}},
			// The second request goes out on the kept-alive connection of
			// the first: the case where net/http re-sends an idempotent
			// request, and where the hand-written client re-sent a POST.
			{"on a reused connection", []turn{{calls: []call{{"c1", ToolListSensors, "{}"}}}, {hangUp: true}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f := newFake(t, p, tt.turns...)
				d, err := think(t, newTestAgent(t, testConfig(f), nil, nil))
				var pe *ProviderError
				if !errors.Is(err, ErrUnreachable) || !errors.As(err, &pe) || !pe.Delivered || pe.Status != 0 {
					t.Fatalf("Think error = %v, want ErrUnreachable, Delivered, no status", err)
				}
				if got, want := len(f.requests()), len(tt.turns); got != want {
					t.Errorf("server saw %d requests, want exactly %d", got, want)
				}
				if d.Calls != len(tt.turns) || d.Outcome != "" {
					t.Errorf("Think = %+v, want %d calls and no outcome", d, len(tt.turns))
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("Think error = %v contains the key", err)
				}
			})
		}
	})
}
