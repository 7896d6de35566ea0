package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/web"
)

func TestWriteReadings(t *testing.T) {
	now := time.Date(2026, 3, 14, 13, 0, 0, 0, time.UTC)
	temp := heartbeat.Series{Key: "air.temperature", Unit: device.Celsius}
	for i := range 60 {
		temp.Points = append(temp.Points, heartbeat.Point{Time: now.Add(time.Duration(i-60) * time.Minute), Value: 20 + 0.2*float64(i)})
	}
	st := heartbeat.Status{
		Snapshot: &device.Snapshot{Readings: map[string]device.Value{
			"air.temperature": {Value: 31.8, Unit: device.Celsius},
			"air.pressure":    {Value: 1013.2, Unit: device.HectoPascal},
		}},
		Rules: []heartbeat.RuleStatus{{Name: "too_hot", State: heartbeat.RuleFiring}},
	}
	rules := []web.RuleInfo{{Name: "too_hot", Keys: []string{"air.temperature"}}}
	tests := []struct {
		color bool
		want  string
	}{
		{false, `readings: (last hour, 2m0s a bar)
  air.pressure     1013.2 hPa                                  no history  
  air.temperature  31.8 °C     ▁▁▁▁▂▂▂▂▃▃▃▄▄▄▄▅▅▅▅▆▆▆▇▇▇▇████  20–31.8     too_hot firing
`},
		{true, "\x1b[1;31mtoo_hot firing\x1b[0m\n"},
	}
	var b strings.Builder // no daemon: no snapshot, the last stored value
	writeReadings(&b, heartbeat.Status{}, []heartbeat.Series{temp}, nil, now, false)
	if !strings.Contains(b.String(), "air.temperature  31.8 °C") {
		t.Errorf("without a snapshot:\n%s", b.String())
	}
	for _, tt := range tests {
		var b strings.Builder
		writeReadings(&b, st, []heartbeat.Series{temp}, rules, now, tt.color)
		if tt.color && !strings.HasSuffix(b.String(), tt.want) || !tt.color && b.String() != tt.want {
			t.Errorf("writeReadings(color=%v) =\n%q\nwant (suffix)\n%q", tt.color, b.String(), tt.want)
		}
	}
}
