package status

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/baseline"
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
