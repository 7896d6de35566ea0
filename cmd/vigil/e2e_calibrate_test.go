package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// calibratedAir is a simulated BME280 whose temperature is moved by -100 °C
// and whose humidity goes through the line of two points, (0, 10) and
// (100, 60): slope (60 - 10) / (100 - 0) = 0.5, so true = 10 + 0.5 × raw.
// A rule watches the calibrated temperature, which only calibration can
// put below -50 °C.
const calibratedAir = `
[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }
calibrate = { temperature = { offset = -100 }, humidity = { points = [[0, 10], [100, 60]] } }

[[rule]]
name = "frozen"
when = "air.temperature < -50"
severity = "critical"
message = "air at {air.temperature}"
`

// sensorsOut is what vigil sensors --json prints.
type sensorsOut struct {
	Readings map[string]struct {
		Value float64
		Unit  string
		Raw   *float64
	}
	Errors map[string]string
}

// TestCalibratedReadings: on the sim board, vigil sensors shows each
// calibrated reading with its raw value, and the running daemon's rule,
// MQTT sensors topic, status page and history all see the calibrated
// value.
func TestCalibratedReadings(t *testing.T) {
	dir := t.TempDir()
	b := startMosquitto(t)
	port := mosquittotest.FreePort(t)
	cfg := writeConfig(t, dir, calibratedAir+mqttConfig(b.URL())+fmt.Sprintf("\n[http]\nlisten = \"127.0.0.1:%d\"\n", port))

	// config check shows the calibration in the resolved config.
	out, errOut, code := runVigil(t, "-c", cfg, "config", "check")
	if want := "\ncalibrate = { humidity = { points = [[0.0, 10.0], [100.0, 60.0]] }, temperature = { offset = -100.0 } }\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("config check: exit %d, want 0 and %q in:\n%s%s", code, want, out, errOut)
	}

	out, errOut, code = runVigil(t, "-c", cfg, "sensors", "--json")
	if code != 0 {
		t.Fatalf("sensors --json: exit %d\n%s%s", code, out, errOut)
	}
	var s sensorsOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("sensors --json: %v\n%s", err, out)
	}
	temp, hum := s.Readings["air.temperature"], s.Readings["air.humidity"]
	switch {
	case temp.Raw == nil || hum.Raw == nil:
		t.Fatalf("sensors --json: no raw value for air.temperature or air.humidity:\n%s", out)
	case *temp.Raw < -40 || *temp.Raw > 85 || temp.Value != *temp.Raw-100 || temp.Unit != "°C":
		t.Errorf("air.temperature = %v %s, raw %v: want raw - 100 in °C", temp.Value, temp.Unit, *temp.Raw)
	case math.Abs(hum.Value-(10+0.5*(*hum.Raw))) > 1e-9 || hum.Unit != "%":
		t.Errorf("air.humidity = %v %s, raw %v: want 10 + 0.5 × raw in %%", hum.Value, hum.Unit, *hum.Raw)
	}
	for k, r := range s.Readings {
		if k != "air.temperature" && k != "air.humidity" && r.Raw != nil {
			t.Errorf("%s has raw %v, but is not calibrated", k, *r.Raw)
		}
	}
	if !strings.Contains(out, `"raw": `) || strings.Count(out, `"raw": `) != 2 {
		t.Errorf("sensors --json: want exactly two \"raw\" keys:\n%s", out)
	}

	// The table: a RAW column next to VALUE, filled for calibrated readings.
	out, errOut, code = runVigil(t, "-c", cfg, "sensors")
	if code != 0 {
		t.Fatalf("sensors: exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^SENSOR +QUANTITY +VALUE +RAW +UNIT +ERROR$`).MatchString(out) {
		t.Errorf("sensors: no RAW column in the header:\n%s", out)
	}
	row := regexp.MustCompile(`(?m)^air +temperature +(-[0-9.]+) +([0-9.]+) +°C *$`).FindStringSubmatch(out)
	if row == nil {
		t.Fatalf("sensors: no air temperature row with value and raw:\n%s", out)
	}
	v, _ := strconv.ParseFloat(row[1], 64)
	raw, _ := strconv.ParseFloat(row[2], 64)
	if math.Abs(v-(raw-100)) > 1e-9 {
		t.Errorf("sensors: air temperature %v, raw %v: want raw - 100", v, raw)
	}
	if !regexp.MustCompile(`(?m)^air +pressure +[0-9.]+ +hPa *$`).MatchString(out) {
		t.Errorf("sensors: the uncalibrated pressure row has something in RAW:\n%s", out)
	}

	// The daemon: the rule fires on the calibrated value, MQTT's alert and
	// retained sensors carry it, and so do status, the page and history.
	live := mosquittotest.Subscribe(t, b.URL(), "vigil/#")
	d := startDaemon(t, cfg)
	m := live.Wait(topicAlert, 15*time.Second, nil)
	var a struct{ Rule, State, Summary string }
	if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
		t.Fatal(err)
	}
	if a.Rule != "frozen" || a.State != "firing" || !regexp.MustCompile(`^air at -[0-9.]+ °C$`).MatchString(a.Summary) {
		t.Errorf("alert = %+v, want frozen firing with a calibrated summary", a)
	}
	var snap struct {
		Readings map[string]struct{ Value float64 }
	}
	sp := live.Wait(topicSensors, 15*time.Second, nil).Payload
	if err := json.Unmarshal([]byte(sp), &snap); err != nil {
		t.Fatalf("sensors payload %s: %v", sp, err)
	}
	if v := snap.Readings["air.temperature"].Value; v > -50 {
		t.Errorf("MQTT sensors air.temperature = %v, want the calibrated value below -50", v)
	}
	if strings.Contains(sp, "raw") {
		t.Errorf("MQTT sensors carries raw values: %s", sp)
	}

	st := waitRules(t, cfg, map[string]string{"frozen": "firing"})
	if seen := ruleStates(st)["frozen"].Seen; !regexp.MustCompile(`^air\.temperature=-[0-9.]+ °C$`).MatchString(seen) {
		t.Errorf("status: frozen saw %q, want a calibrated air.temperature", seen)
	}

	page := get(t, fmt.Sprintf("http://127.0.0.1:%d/api/status", port))
	var ps struct {
		Snapshot struct {
			Readings map[string]struct{ Value float64 }
		}
	}
	if err := json.Unmarshal(page, &ps); err != nil {
		t.Fatalf("/api/status: %v\n%s", err, page)
	}
	if v, ok := ps.Snapshot.Readings["air.temperature"]; !ok || v.Value > -50 {
		t.Errorf("page air.temperature = %v (present %v), want the calibrated value below -50", v.Value, ok)
	}

	out, errOut, code = runVigil(t, "-c", cfg, "history", "air.temperature", "--csv")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(rows) < 2 {
		t.Fatalf("history: exit %d, %d rows: %s%s", code, len(rows)-1, out, errOut)
	}
	for _, r := range rows[1:] {
		f := strings.Split(r, ",")
		if v, err := strconv.ParseFloat(f[2], 64); err != nil || v > -50 {
			t.Errorf("history row %q: want a calibrated value below -50", r)
		}
	}
	select {
	case <-d.done:
		t.Fatalf("vigil exited:\n%s", d.logText())
	default:
	}
}

// TestCalibrationConfigCheck: config check and run refuse a calibration of
// a quantity the driver does not produce, with the file, line and key.
func TestCalibrationConfigCheck(t *testing.T) {
	for name, tt := range map[string]struct{ sensor, at, want string }{
		"quantity the driver lacks": {"[[sensor]]\nname = \"air\"\ndriver = \"bmp280\"\ncalibrate = { humidity = { offset = -2.0 } }\n", "calibrate",
			"sensor.air.calibrate.humidity: sensor air (bmp280) has temperature, pressure"},
		"iio quantity not listed": {"[[sensor]]\nname = \"gas\"\ndriver = \"iio\"\ndevice = \"bme680\"\nquantities = [\"temperature\", \"pressure\"]\ncalibrate = { humidity = { offset = -2.0 } }\n", "calibrate",
			"sensor.gas.calibrate.humidity: sensor gas (iio) has temperature, pressure"},
		"mcp3008 channel": {"[[sensor]]\nname = \"garden\"\ndriver = \"mcp3008\"\nchannels = [{ channel = 0, quantity = \"soil\", unit = \"%\", values = [0.0, 100.0] }]\ncalibrate = { soil = { points = [[10.0, 0.0], [10.0, 100.0]] } }\n", "calibrate",
			"sensor.garden.calibrate.soil.points: the two raw values must differ, a line needs two different readings (got 10 twice)"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := writeConfig(t, t.TempDir(), tt.sensor)
			want := fmt.Sprintf("config.toml:%d: %s", lineOf(t, cfg, tt.at), tt.want)
			for _, args := range [][]string{{"config", "check"}, {"run"}} {
				_, errOut, code := runVigil(t, append([]string{"-c", cfg}, args...)...)
				if code != 78 || !strings.Contains(errOut, want) {
					t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 78 and %q", args, code, errOut, want)
				}
			}
		})
	}
}

// TestCalibrationReload: a changed calibration takes effect on SIGHUP, as
// docs/hardware.md says: the rule that fired on the calibrated value
// resolves once the offset is gone.
func TestCalibrationReload(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, t.TempDir(), calibratedAir)
	d := startDaemon(t, cfg)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=frozen state=firing summary="air at -[0-9.]+ °C"`), 15*time.Second)
	editConfig(t, cfg, "offset = -100", "offset = 0")
	hup(t, d)
	d.waitLog(t, regexp.MustCompile(`msg="config reloaded" changed=sensor\.air\b`), 10*time.Second)
	d.waitLog(t, regexp.MustCompile(`msg=alert .*rule=frozen state=resolved`), 15*time.Second)
}
