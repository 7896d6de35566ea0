package status

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/goldentest"
	"github.com/vigil-iot/vigil/internal/seriestest"
)

func TestWriteCSV(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, Filter(seriestest.KnownHistory(), "air"), berlin); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, "history.csv", b.Bytes())
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, Filter(seriestest.KnownHistory(), "air.temperature")[:1], t0, time.UTC); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, "history.json", b.Bytes())
}

func TestFilter(t *testing.T) {
	h := append(seriestest.KnownHistory(), heartbeat.Series{Key: "airflow.speed"})
	tests := []struct {
		want string
		keys []string
	}{
		{"", []string{"air.humidity", "air.temperature", "airflow.speed"}},
		{"air", []string{"air.humidity", "air.temperature"}},
		{"air.humidity", []string{"air.humidity"}},
		{"air.hum", nil},
		{"soil", nil},
	}
	for _, tt := range tests {
		var keys []string
		for _, s := range Filter(h, tt.want) {
			keys = append(keys, s.Key)
		}
		if len(keys) != len(tt.keys) || (len(keys) > 0 && !equal(keys, tt.keys)) {
			t.Errorf("Filter(%q) = %v, want %v", tt.want, keys, tt.keys)
		}
	}
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestWriteJSONCarriesUsual: the JSON export carries each series' usual
// band, an entry an hour with its time in the device's zone, as `vigil
// history --json` and /api/history print it.
func TestWriteJSONCarriesUsual(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	s := Filter(seriestest.KnownHistory(), "air.temperature")[0]
	s.Usual = []heartbeat.UsualHour{
		{Time: t0, Usual: 20.1, Low: 18.2, High: 22},
		{Time: t0.Add(time.Hour), Usual: 21, Low: 19.5, High: 22.5},
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, []heartbeat.Series{s}, t0, berlin); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Series []struct {
			Usual []struct {
				T                string
				Usual, Low, High float64
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Series) != 1 || len(got.Series[0].Usual) != 2 {
		t.Fatalf("WriteJSON carries %+v, want one series with 2 usual hours:\n%s", got.Series, b.Bytes())
	}
	u := got.Series[0].Usual[0]
	if u.T != "2026-03-14T13:00:00+01:00" || u.Usual != 20.1 || u.Low != 18.2 || u.High != 22 {
		t.Errorf("first usual hour = %+v, want 13:00 Berlin time, usual 20.1 from 18.2 to 22", u)
	}
}
