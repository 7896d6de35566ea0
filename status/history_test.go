package status

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

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

func TestWriteCSV(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, Filter(knownHistory(), "air"), berlin); err != nil {
		t.Fatal(err)
	}
	golden(t, "history.csv", b.Bytes())
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, Filter(knownHistory(), "air.temperature")[:1], t0, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden(t, "history.json", b.Bytes())
}

func TestFilter(t *testing.T) {
	h := append(knownHistory(), heartbeat.Series{Key: "airflow.speed"})
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
