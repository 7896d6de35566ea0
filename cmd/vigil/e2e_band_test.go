package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/store"
)

// seedBaselines learns what is usual from days of each curve up to now,
// one reading a minute, binned in loc, and stores it in dir's state file
// as the daemon's heartbeats do: a device that has watched for days.
func seedBaselines(t *testing.T, dir string, now time.Time, loc *time.Location, days int, curves map[string]func(time.Time) float64) {
	t.Helper()
	set := baseline.New(loc, nil)
	for at := now.Add(-time.Duration(days) * 24 * time.Hour).Truncate(time.Minute); at.Before(now); at = at.Add(time.Minute) {
		for k, f := range curves {
			set.Observe(k, f(at), at)
		}
	}
	blob, err := set.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "state", "vigil.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *store.Tx) error { return tx.PutBaselines(blob) }); err != nil {
		t.Fatal(err)
	}
}

// dayCurves are seedDay's readings as curves of the time, for
// seedBaselines: what the device saw on the days before.
func dayCurves(now time.Time) map[string]func(time.Time) float64 {
	c := func(at time.Time) float64 { return math.Cos(2 * math.Pi * now.Sub(at).Hours() / 24) }
	wob := func(at time.Time) float64 { return 0.4 * math.Sin(now.Sub(at).Minutes()/7) }
	return map[string]func(time.Time) float64{
		"air.temperature":       func(at time.Time) float64 { return 28 - 10*c(at) + wob(at) },
		"air.humidity":          func(at time.Time) float64 { return 50 + 15*c(at) - 2*wob(at) },
		"air.pressure":          func(at time.Time) float64 { return 1013.1 + 2.5*math.Cos(2*math.Pi*now.Sub(at).Hours()/30) },
		"board.soc_temperature": func(at time.Time) float64 { return 46 - 3*c(at) + wob(at) },
		"board.load1":           func(at time.Time) float64 { return 0.2 + 0.15*math.Abs(math.Sin(now.Sub(at).Minutes()/23)) },
	}
}

// TestUsualBandOnTheCommandLine: with no daemon running, on a state file
// whose baselines have seen three days, `vigil sensors` shows what is
// usual now beside the temperature and `--json` carries it with the fresh
// reading's z-score; `vigil status` shows it beside the reading, and says
// a reading still warming up will be ready and when; `vigil history
// --json` carries the band an hour.
func TestUsualBandOnTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	cfg := webConfig(t, dir, 18082)
	now := time.Now()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	seedDay(t, dir, now)
	seedBaselines(t, dir, now, berlin, 3, map[string]func(time.Time) float64{"air.temperature": dayCurves(now)["air.temperature"]})
	band := `usual \d+\.\d–\d+\.\d now`

	out, errOut, code := runVigil(t, "-c", cfg, "sensors")
	if code != 0 {
		t.Fatalf("vigil sensors: exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^SENSOR\s+QUANTITY\s+VALUE\s+UNIT\s+BASELINE\s+ERROR$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^air\s+temperature\s+[\d.]+\s+°C\s+`+band).MatchString(out) {
		t.Errorf("vigil sensors shows no usual band for air.temperature:\n%s", out)
	}
	if regexp.MustCompile(`(?m)^air\s+humidity.*usual`).MatchString(out) {
		t.Errorf("vigil sensors shows a band for air.humidity, which has no baseline:\n%s", out)
	}

	out, errOut, code = runVigil(t, "-c", cfg, "sensors", "--json")
	var sj struct {
		Readings  map[string]struct{ Value float64 }
		Baselines map[string]struct {
			Usual, Low, High, Z float64
			Ready, Hourly       bool
		}
	}
	if err := json.Unmarshal([]byte(out), &sj); code != 0 || err != nil {
		t.Fatalf("vigil sensors --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	b, ok := sj.Baselines["air.temperature"]
	v := sj.Readings["air.temperature"].Value
	if !ok || !b.Ready || !b.Hourly || b.Low >= b.High || math.Abs(b.Z-(v-b.Usual)/((b.High-b.Usual)/3)) > 0.05 {
		t.Errorf("sensors --json baselines[air.temperature] = %+v (reading %v), want a ready hourly band with the reading's z", b, v)
	}

	out, errOut, code = runVigil(t, "-c", cfg, "status")
	if code != 0 || !regexp.MustCompile(`(?m)^  air\.temperature\s+[\d.]+ °C\s+\(`+band).MatchString(out) {
		t.Errorf("vigil status: exit %d, no usual band beside air.temperature:\n%s%s", code, out, errOut)
	}

	out, errOut, code = runVigil(t, "-c", cfg, "history", "air.temperature", "--since", "3h", "--json")
	var h struct {
		Series []struct {
			Usual []struct {
				T         time.Time
				Low, High float64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil || len(h.Series) != 1 {
		t.Fatalf("history --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if u := h.Series[0].Usual; len(u) < 3 || len(u) > 4 || u[0].T.After(now.Add(-3*time.Hour)) || u[0].Low >= u[0].High {
		t.Errorf("history --json --since 3h carries %d usual hours %+v, want the 3 or 4 hours of the window", len(u), u)
	}
	if !strings.Contains(out, `"usual": [`) {
		t.Errorf("history --json has no \"usual\" array:\n%.400s", out)
	}
}
