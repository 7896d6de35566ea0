package status

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
)

// TestStatusWarmingUp: while a reading's baseline warms up, vigil status
// says so and when it will be ready; once all are ready it says nothing.
func TestStatusWarmingUp(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	warm := heartbeat.Status{Device: "d1", Now: now, Baselines: map[string]heartbeat.BandStatus{
		"air.temperature": {Band: baseline.Band{ReadyAt: now.Add(23 * time.Hour)}},
		"air.humidity":    {Band: baseline.Band{ReadyAt: now.Add(22 * time.Hour)}},
		"board.load1":     {Band: baseline.Band{Ready: true, Usual: 0.2, Spread: 0.1}},
	}}
	var b strings.Builder
	WriteStatus(&b, View{Status: warm}, true, false)
	if want := "usual:    warming up (air.humidity, air.temperature): ready at 2026-05-02 11:00:00 +00:00\n"; !strings.Contains(b.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, b.String())
	}
	ready := warm
	ready.Baselines = map[string]heartbeat.BandStatus{"board.load1": warm.Baselines["board.load1"]}
	b.Reset()
	WriteStatus(&b, View{Status: ready}, true, false)
	if strings.Contains(b.String(), "warming up") {
		t.Errorf("status says warming up with every baseline ready:\n%s", b.String())
	}
}

func TestUsualText(t *testing.T) {
	now := time.Date(2026, 11, 28, 18, 5, 0, 0, time.UTC)
	tests := []struct {
		name string
		b    heartbeat.BandStatus
		want string
	}{
		{"hourly", heartbeat.BandStatus{Band: baseline.Band{Usual: 20.1, Spread: 0.63, Low: 18.2, High: 22, Ready: true, Hourly: true}, Z: 0.4},
			"usual 18.2–22.0 now"},
		{"hourly, unusual", heartbeat.BandStatus{Band: baseline.Band{Usual: 15.1, Spread: 0.4, Low: 13.9, High: 16.3, Ready: true, Hourly: true}, Z: 32.26},
			"usual 13.9–16.3 now; z=+32.3, unusual"},
		{"below", heartbeat.BandStatus{Band: baseline.Band{Usual: 15.1, Spread: 0.4, Low: 13.9, High: 16.3, Ready: true, Hourly: true}, Z: -3},
			"usual 13.9–16.3 now; z=-3.0, unusual"},
		{"from the last day", heartbeat.BandStatus{Band: baseline.Band{Usual: 22, Spread: 2.5, Low: 14.5, High: 29.5, Ready: true,
			ReadyAt: time.Date(2026, 11, 29, 3, 3, 0, 0, time.UTC)}}, "usual 14.5–29.5 over the last 24 h, hourly from Nov 29 03:03"},
		{"warming up", heartbeat.BandStatus{Band: baseline.Band{ReadyAt: time.Date(2026, 11, 28, 21, 40, 0, 0, time.UTC)}},
			"warming up, ready at 21:40"},
		{"wide", heartbeat.BandStatus{Band: baseline.Band{Usual: 600, Low: 150.4, High: 1049.6, Ready: true, Hourly: true}}, "usual 150–1050 now"},
		{"narrow", heartbeat.BandStatus{Band: baseline.Band{Usual: 0.15, Low: 0.04, High: 0.262, Ready: true, Hourly: true}}, "usual 0.04–0.26 now"},
	}
	for _, tt := range tests {
		if got := UsualText(tt.b, 3, now); got != tt.want {
			t.Errorf("%s: UsualText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestWriteReadingsUsual: with bands known, each reading shows the usual
// band for now beside its value; a reading without one shows nothing
// there.
func TestWriteReadingsUsual(t *testing.T) {
	now := time.Date(2026, 3, 14, 13, 0, 0, 0, time.UTC)
	st := heartbeat.Status{
		Now: now,
		Snapshot: &device.Snapshot{Readings: map[string]device.Value{
			"air.temperature":    {Value: 21.4, Unit: device.Celsius},
			"air.humidity":       {Value: 60, Unit: device.Percent},
			"board.clock_synced": {Value: 1, Unit: device.Bool},
		}},
		Baselines: map[string]heartbeat.BandStatus{
			"air.temperature": {Band: baseline.Band{Usual: 20.1, Low: 18.2, High: 22, Ready: true, Hourly: true}, Z: 1.2},
			"air.humidity":    {Band: baseline.Band{ReadyAt: now.Add(3 * time.Hour)}},
		},
		Unusual: 3,
	}
	var b strings.Builder
	WriteReadings(&b, View{Status: st}, nil, now, false)
	for _, want := range []string{
		"  air.temperature     21.4 °C  (usual 18.2–22.0 now)",
		"  air.humidity        60 %     (warming up, ready at 16:00)",
		"  board.clock_synced  1                                     ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteReadings has no line starting %q:\n%s", want, b.String())
		}
	}
}
