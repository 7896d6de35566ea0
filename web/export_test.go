package web

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/seriestest"
)

// t0 is the now the web tests start from, as seriestest.KnownHistory does.
var t0 = seriestest.T0

// TestUsualBandOnPageAndAPI: a series' usual band reaches /api/history
// (an entry an hour, times in the device's zone) and the page draws it
// behind that reading's chart only.
func TestUsualBandOnPageAndAPI(t *testing.T) {
	f := newFake(t0, 2)
	for h := 24; h >= 0; h-- {
		at := t0.Truncate(time.Hour).Add(-time.Duration(h) * time.Hour)
		f.series[0].Usual = append(f.series[0].Usual, heartbeat.UsualHour{Time: at, Usual: 5, Low: 2, High: 8})
	}
	f.baselines = map[string]heartbeat.BandStatus{
		"air.temperature": {Band: baseline.Band{Usual: 5, Spread: 1, Low: 2, High: 8, Ready: true, Hourly: true}, Z: -4.2},
		"air.humidity":    {Band: baseline.Band{ReadyAt: t0.Add(5 * time.Hour)}},
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, f, Options{Live: Live{Allowed: []string{"status"}, Location: berlin}})
	resp := do(t, s, "GET", "/api/history?reading=air.temperature", nil, "", "")
	var h struct {
		Series []struct {
			Key   string
			Usual []struct {
				T         string
				Low, High float64
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 1 || len(h.Series[0].Usual) != 25 || h.Series[0].Usual[0].T != "2026-03-13T13:00:00+01:00" || h.Series[0].Usual[0].High != 8 {
		t.Errorf("/api/history = %+v, want air.temperature with 25 usual hours from 2026-03-13T13:00:00+01:00", h)
	}
	var page bytes.Buffer
	if err := s.Render(context.Background(), &page, ""); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key, text string
		bands     int
	}{
		{"air.temperature", `<div class="usual off">usual 2.0–8.0 now; z=-4.2, unusual</div>`, 1},
		{"air.humidity", `<div class="usual">warming up, ready at 18:00</div>`, 0}, // in Berlin
	} {
		card := regexp.MustCompile(`(?s)<div class="card reading" data-key="` + regexp.QuoteMeta(tt.key) + `">.*?</svg>`).FindString(page.String())
		if n := strings.Count(card, `<path class="band"`); card == "" || n != tt.bands {
			t.Errorf("%s's card draws %d usual bands, want %d:\n%.300s", tt.key, n, tt.bands, card)
		}
		if !strings.Contains(card, tt.text) {
			t.Errorf("%s's card does not say %q:\n%.400s", tt.key, tt.text, card)
		}
	}
}
