package status

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
)

// TestStatusDeviceAndNextRun: the device line says whether a daemon runs and
// in which mode, in words; the next-run line is never dropped without a
// word: it says heartbeats are off and which key turned them off.
func TestStatusDeviceAndNextRun(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		st      heartbeat.Status
		running bool
		want    []string
	}{
		{"daemon, llm", heartbeat.Status{Device: "d1", Mode: "llm", Now: now, NextRun: now.Add(time.Minute)}, true,
			[]string{"device:   d1 (daemon running; LLM mode)\n", "next run: 2026-05-01 12:01:00 +00:00\n"}},
		{"no daemon, rules only", heartbeat.Status{Device: "d1", Mode: "rules-only", Now: now}, false,
			[]string{"device:   d1 (daemon not running; rules-only mode)\n", "next run: none (no daemon is running)\n"}},
		{"no daemon, llm", heartbeat.Status{Device: "d1", Mode: "llm", Now: now}, false,
			[]string{"device:   d1 (daemon not running; LLM mode)\n"}},
		{"interval 0", heartbeat.Status{Device: "d1", Mode: "llm", Now: now, HeartbeatsOff: `heartbeat.interval = "0"`}, true,
			[]string{"next run: heartbeats disabled (heartbeat.interval = \"0\")\n"}},
		{"enabled false, no daemon", heartbeat.Status{Device: "d1", Mode: "llm", Now: now, HeartbeatsOff: "heartbeat.enabled = false"}, false,
			[]string{"next run: heartbeats disabled (heartbeat.enabled = false)\n"}},
		{"daemon, not scheduled yet", heartbeat.Status{Device: "d1", Mode: "llm", Now: now}, true,
			[]string{"next run: not scheduled yet\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteStatus(&b, View{Status: tc.st}, tc.running, false)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("status lacks %q:\n%s", w, b.String())
				}
			}
			if strings.Count(b.String(), "(") > strings.Count(b.String(), ")") || strings.Contains(b.String(), "((") || strings.Contains(b.String(), "))") {
				t.Errorf("nested or unbalanced parentheses:\n%s", b.String())
			}
		})
	}
}

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
	rules := []RuleInfo{{Name: "too_hot", Keys: []string{"air.temperature"}}}
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
	WriteReadings(&b, View{Status: heartbeat.Status{}, Series: []heartbeat.Series{temp}}, nil, now, false)
	if !strings.Contains(b.String(), "air.temperature  31.8 °C") {
		t.Errorf("without a snapshot:\n%s", b.String())
	}
	for _, tt := range tests {
		var b strings.Builder
		WriteReadings(&b, View{Status: st, Series: []heartbeat.Series{temp}}, rules, now, tt.color)
		if tt.color && !strings.HasSuffix(b.String(), tt.want) || !tt.color && b.String() != tt.want {
			t.Errorf("writeReadings(color=%v) =\n%q\nwant (suffix)\n%q", tt.color, b.String(), tt.want)
		}
	}
}

// TestStatusSensorErrors: status names every sensor that failed in the
// last sample known, with its error and the sample's time; it says when
// that sample is the state file's, and never stays silent about sensors it
// knows nothing of.
func TestStatusSensorErrors(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	errs := map[string]string{"rack": `hwmon: no device named "lm75"`, "air": "tmp102: i2c bus 7: not found (buses here: 1)"}
	for _, tc := range []struct {
		name    string
		st      heartbeat.Status
		running bool
		want    []string
	}{
		{"daemon, two failed", heartbeat.Status{Now: now, SensorErrors: errs, SensorsAt: now.Add(-time.Second)}, true,
			[]string{"sensors:  2 failed in the last sample, 11:59 +00:00:\n  air   tmp102: i2c bus 7: not found (buses here: 1)\n  rack  hwmon: no device named \"lm75\"\n"}},
		{"state file, two failed", heartbeat.Status{Now: now, SensorErrors: errs, SensorsAt: now.Add(-time.Hour)}, false,
			[]string{"sensors:  2 failed in the last sample stored, 11:00 +00:00 (no daemon is running):\n", "  air   tmp102"}},
		{"daemon, none failed", heartbeat.Status{Now: now, SensorErrors: map[string]string{}, SensorsAt: now}, true,
			[]string{"sensors:  none failed in the last sample, 12:00 +00:00\n"}},
		{"daemon, no sample yet", heartbeat.Status{Now: now}, true, []string{"sensors:  no sample yet\n"}},
		{"state file, no sample", heartbeat.Status{Now: now}, false,
			[]string{"sensors:  not known: no daemon is running and the state file holds no sample yet ('vigil sensors' reads them now)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteStatus(&b, View{Status: tc.st}, tc.running, false)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("status lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestWriteStatusProposals: the proposals waiting for a person are listed
// with their ID and the word noisy when their backtest says so.
func TestWriteStatusProposals(t *testing.T) {
	v := View{RuleBook: &manage.RulesView{Pending: []alert.Proposal{
		{ID: "p3", Name: "warm", When: "air.temperature > 34", Backtest: alert.Backtest{Fired: 9, Noisy: true}}}}}
	var b strings.Builder
	WriteStatus(&b, v, true, true)
	if !strings.Contains(b.String(), "proposed: ") || !strings.Contains(b.String(), "p3  warm  air.temperature > 34  fired 9 times in the history  noisy") {
		t.Errorf("status:\n%s", b.String())
	}
}
