package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
)

// lineOf returns the 1-based line of the first line of file containing s.
func lineOf(t *testing.T, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %q", file, s)
	return 0
}

// TestConfigCheckRejectsDeadReferences: a rule, message or deadband naming a
// quantity its sensor's driver does not have is a config error (78) naming
// the line, the key and the quantities there are, for config check and run.
func TestConfigCheckRejectsDeadReferences(t *testing.T) {
	const sensors = `
[[sensor]]
name = "air"
driver = "bme280"
deadband = { temperature = 0.5 }

[[sensor]]
name = "freezer"
driver = "ds18b20"
`
	tests := []struct {
		name, extra, at, want string
	}{
		{"when typo", "[[rule]]\nname = \"too_hot\"\nwhen = \"air.temprature > 35\"\n", "air.temprature > 35",
			"rule.too_hot.when: air.temprature: sensor air (bme280) has temperature, humidity, pressure; did you mean air.temperature?"},
		{"board quantity", "[[rule]]\nname = \"soc_hot\"\nwhen = \"board.soc_temp > 35\"\n", "board.soc_temp",
			"rule.soc_hot.when: board.soc_temp: the board health sensor has soc_temperature, undervoltage, throttled, undervoltage_since_boot, throttled_since_boot, disk_free, mem_available, load1, uptime, clock_synced; did you mean board.soc_temperature?"},
		{"quantity the chip lacks", "[[rule]]\nname = \"damp\"\nwhen = \"air.humidity > 90\"\nclear = \"freezer.humidity < 80\"\n", "freezer.humidity",
			"rule.damp.clear: freezer.humidity: sensor freezer (ds18b20) has temperature"},
		{"message placeholder", "[[rule]]\nname = \"too_hot\"\nwhen = \"air.temperature > 35\"\nmessage = \"hot: {air.temp}\"\n", "{air.temp}",
			"rule.too_hot.message: {air.temp} would print as ?: sensor air (bme280) has temperature, humidity, pressure; did you mean {air.temperature}?"},
		{"deadband typo", "[[sensor]]\nname = \"shelf\"\ndriver = \"aht20\"\ndeadband = { humdity = 2 }\n", "humdity",
			"sensor.shelf.deadband.humdity: sensor shelf (aht20) has temperature, humidity; did you mean humidity?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeConfig(t, dir, sensors+tt.extra)
			want := fmt.Sprintf("config.toml:%d: %s", lineOf(t, cfg, tt.at), tt.want)
			_, errOut, code := runVigil(t, "-c", cfg, "config", "check")
			if code != 78 || !strings.Contains(errOut, want) {
				t.Errorf("config check: exit %d, stderr:\n%s\nwant exit 78 and %q", code, errOut, want)
			}
			_, errOut, code = runVigil(t, "-c", cfg, "run")
			if code != 78 || !strings.Contains(errOut, want) {
				t.Errorf("run: exit %d, stderr:\n%s\nwant exit 78 and %q", code, errOut, want)
			}
		})
	}
	// The same sensors with correct references pass.
	dir := t.TempDir()
	cfg := writeConfig(t, dir, sensors+"[[rule]]\nname = \"ok\"\nwhen = \"air.temperature > 35 or freezer.temperature > -10 or board.soc_temperature > 80\"\nmessage = \"{air.temperature} {{air.temp}}\"\n")
	if out, errOut, code := runVigil(t, "-c", cfg, "config", "check"); code != 0 {
		t.Errorf("config check of valid references: exit %d\n%s%s", code, out, errOut)
	}
}

func statusJSON(t *testing.T, cfg string) heartbeat.Status {
	t.Helper()
	out, errOut, code := runVigil(t, "-c", cfg, "status", "--json")
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, errOut)
	}
	var st heartbeat.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

func ruleStates(st heartbeat.Status) map[string]heartbeat.RuleStatus {
	m := map[string]heartbeat.RuleStatus{}
	for _, r := range st.Rules {
		m[r.Name] = r
	}
	return m
}

// waitRules polls status --json until every rule is in the wanted state.
func waitRules(t *testing.T, cfg string, want map[string]string) heartbeat.Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := statusJSON(t, cfg)
		got := ruleStates(st)
		ok := true
		for name, state := range want {
			ok = ok && got[name].State == state
		}
		if ok {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("rule states %+v, want %v", st.Rules, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestStatusShowsRuleStates: status, from a running daemon on the sim board
// and from the state file without one, shows every rule as ok, pending,
// firing or unknown with the value it last saw.
func TestStatusShowsRuleStates(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }

[[rule]]
name = "too_hot"
when = "air.temperature > -100"
severity = "critical"

[[rule]]
name = "freezing"
when = "air.temperature < -100"

[[rule]]
name = "humid_for_long"
when = "air.humidity > 0"
for = "1h"
`)
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=too_hot state=firing`), 20*time.Second)
	st := waitRules(t, cfg, map[string]string{"too_hot": "firing", "freezing": "ok", "humid_for_long": "pending"})
	rs := ruleStates(st)
	for name, re := range map[string]string{
		"too_hot":        `^air\.temperature=-?[0-9.]+ °C$`,
		"freezing":       `^air\.temperature=-?[0-9.]+ °C$`,
		"humid_for_long": `^air\.humidity=[0-9.]+ %$`,
	} {
		if !regexp.MustCompile(re).MatchString(rs[name].Seen) {
			t.Errorf("rule %s saw %q, want %s", name, rs[name].Seen, re)
		}
	}
	if rs["too_hot"].Since.IsZero() || rs["humid_for_long"].Since.IsZero() || !rs["freezing"].Since.IsZero() {
		t.Errorf("since: too_hot %v, humid_for_long %v, freezing %v; want the first two set", rs["too_hot"].Since, rs["humid_for_long"].Since, rs["freezing"].Since)
	}
	out, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	for _, re := range []string{
		`(?m)^  too_hot +firing +air\.temperature=-?[0-9.]+ °C +since (\d{4}-\d\d-\d\d )?\d\d:\d\d [+-]\d\d:\d\d$`,
		`(?m)^  freezing +ok +air\.temperature=-?[0-9.]+ °C *$`,
		`(?m)^  humid_for_long +pending +air\.humidity=[0-9.]+ % +since (\d{4}-\d\d-\d\d )?\d\d:\d\d [+-]\d\d:\d\d$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("status lacks %s:\n%s", re, out)
		}
	}

	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	// Offline: the persisted firing rule is still firing; nothing else is
	// known without a sample.
	st = statusJSON(t, cfg)
	rs = ruleStates(st)
	if r := rs["too_hot"]; r.State != "firing" || r.Since.IsZero() || r.Seen != "" {
		t.Errorf("offline too_hot = %+v, want firing with a since and no value", r)
	}
	for _, name := range []string{"freezing", "humid_for_long"} {
		if r := rs[name]; r.State != "unknown" {
			t.Errorf("offline %s = %+v, want unknown", name, r)
		}
	}
	out, _, _ = runVigil(t, "-c", cfg, "status")
	if !regexp.MustCompile(`(?m)^  freezing +unknown +no sample yet`).MatchString(out) {
		t.Errorf("offline status:\n%s", out)
	}
}

// TestRunWithMissingBus: a sensor on a bus that does not exist is a reading
// error, not a reason to stop. The daemon starts, reads the other sensors
// and the board's health, and the rule on error(air) fires.
func TestRunWithMissingBus(t *testing.T) {
	if _, err := os.Stat("/dev/i2c-7"); err == nil {
		t.Skip("this machine has an I²C bus 7")
	}
	dir := t.TempDir()
	w1 := filepath.Join(dir, "w1", "28-0316a2794aff")
	if err := os.MkdirAll(w1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w1, "w1_slave"), []byte("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=-18125\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, `
[[sensor]]
name = "air"
driver = "bme280"
bus = "7"

[[sensor]]
name = "freezer"
driver = "ds18b20"
w1_dir = "`+filepath.Join(dir, "w1")+`"

[[rule]]
name = "air_lost"
when = "error(air)"
severity = "critical"
message = "air sensor is not answering"

[[rule]]
name = "too_hot"
when = "air.temperature > 35"

[[rule]]
name = "freezer_warm"
when = "freezer.temperature > -10"
`)
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `board = "sim"`, `board = "generic"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`level=WARN msg="bus missing.*sensor air: i2c bus 7`), 10*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=air_lost state=firing summary="air sensor is not answering"`), 10*time.Second)
	// Several samples later it is still up and still reading the rest.
	time.Sleep(3 * time.Second)
	st := waitRules(t, cfg, map[string]string{"air_lost": "firing", "too_hot": "unknown", "freezer_warm": "ok"})
	if st.Snapshot == nil {
		t.Fatal("status has no snapshot")
	}
	if v, ok := st.Snapshot.Readings["freezer.temperature"]; !ok || v.Value != -18.125 {
		t.Errorf("freezer.temperature = %v, %v; want -18.125", v, ok)
	}
	if _, ok := st.Snapshot.Readings["board.uptime"]; !ok {
		t.Errorf("no board health readings: %v", st.Snapshot.Readings)
	}
	if e := st.Snapshot.Errors["air"]; !strings.Contains(e, "i2c bus 7") {
		t.Errorf("air error = %q, want the missing bus", e)
	}
	if r := ruleStates(st)["air_lost"]; r.Seen != "error(air)=true" || !strings.Contains(r.Error, "i2c bus 7") {
		t.Errorf("air_lost = %+v", r)
	}
	select {
	case <-d.done:
		t.Fatalf("vigil exited:\n%s", d.logText())
	default:
	}
}
