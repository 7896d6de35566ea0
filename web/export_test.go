package web

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

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
