package web

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
)

var t0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// knownHistory is an hour of one-minute samples: a temperature that climbs
// from 20 to 31.8 °C and a humidity that falls, with a ten-minute gap in the
// humidity (the sensor failed).
func knownHistory() []heartbeat.Series {
	temp := heartbeat.Series{Key: "air.temperature", Unit: device.Celsius}
	hum := heartbeat.Series{Key: "air.humidity", Unit: device.Percent}
	for i := range 60 {
		at := t0.Add(time.Duration(i) * time.Minute)
		temp.Points = append(temp.Points, heartbeat.Point{Time: at, Value: 20 + 0.2*float64(i)})
		if i < 30 || i >= 40 {
			hum.Points = append(hum.Points, heartbeat.Point{Time: at, Value: 60 - 0.5*float64(i)})
		}
	}
	return []heartbeat.Series{hum, temp}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

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
