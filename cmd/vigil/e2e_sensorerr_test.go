package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// missingSensors is a generic board with three sensors that cannot be
// read here: a TMP102 on a bus that does not exist, an hwmon chip and an
// IIO device whose kernel drivers are not bound. A simulated sensor reads
// fine beside them.
const missingSensors = `
[[sensor]]
name = "air"
driver = "tmp102"
bus = "7"

[[sensor]]
name = "rack"
driver = "hwmon"
device = "vigil_no_such_chip"

[[sensor]]
name = "light"
driver = "iio"
device = "vigil_no_such_iio"

[[sensor]]
name = "fake"
driver = "sim"
`

// writeMissingSensors writes the config above for the generic board.
func writeMissingSensors(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/i2c-7"); err == nil {
		t.Skip("this machine has an I²C bus 7")
	}
	cfg := writeConfig(t, t.TempDir(), missingSensors)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `board = "sim"`, `board = "generic"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestStartWarnsEverySensorItCannotOpen: `vigil run` says at start, once
// for each, which sensors it cannot open and how to fix it: the missing
// bus, and the kernel devices that are not there.
func TestStartWarnsEverySensorItCannotOpen(t *testing.T) {
	cfg := writeMissingSensors(t)
	d := startDaemon(t, cfg)
	defer d.logIfFailed(t)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	log := d.logText()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`level=WARN msg="bus missing[^\n]*sensor air: i2c bus 7`),
		regexp.MustCompile(`level=WARN [^\n]*sensor=rack [^\n]*hwmon: no device named \\"vigil_no_such_chip\\"[^\n]*new_device`),
		regexp.MustCompile(`level=WARN [^\n]*sensor=light [^\n]*iio: no device named \\"vigil_no_such_iio\\"[^\n]*new_device`),
	} {
		if n := len(want.FindAllString(log, -1)); n != 1 {
			t.Errorf("%d lines match %s at start, want 1", n, want)
		}
	}
	if strings.Contains(log, "sensor=fake") {
		t.Errorf("a warning for the sensor that works:\n%s", log)
	}
}

// TestStatusShowsSensorErrors: every sensor error shows in `vigil status`
// and `status --json`, from the daemon, and from the state file with none
// running (the last stored sample's, with its time), and with no sample
// stored at all status says the sensors are not known.
func TestStatusShowsSensorErrors(t *testing.T) {
	cfg := writeMissingSensors(t)
	names := []string{"air", "rack", "light"}
	wantText := func(t *testing.T, out string, where string) {
		t.Helper()
		for _, n := range names {
			if !regexp.MustCompile(`(?m)^  ` + n + ` +\S`).MatchString(out) {
				t.Errorf("%s: status names no error of %s:\n%s", where, n, out)
			}
		}
		for _, w := range []string{"i2c bus 7", "vigil_no_such_chip", "vigil_no_such_iio"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s: status lacks %q:\n%s", where, w, out)
			}
		}
	}
	wantJSON := func(t *testing.T, where string) {
		t.Helper()
		out, errOut, code := runVigil(t, "-c", cfg, "status", "--json")
		if code != 0 {
			t.Fatalf("%s: status --json: exit %d\n%s", where, code, errOut)
		}
		var st struct {
			SensorErrors map[string]string `json:"sensor_errors"`
			SensorsAt    time.Time         `json:"sensors_at"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%s: %v\n%s", where, err, out)
		}
		for _, n := range names {
			if st.SensorErrors[n] == "" {
				t.Errorf("%s: status --json: no sensor_errors.%s in %v", where, n, st.SensorErrors)
			}
		}
		if _, ok := st.SensorErrors["fake"]; ok || st.SensorsAt.IsZero() {
			t.Errorf("%s: sensor_errors %v at %v: want the three, with the sample's time", where, st.SensorErrors, st.SensorsAt)
		}
	}

	// No daemon, nothing stored yet: status says what it does not know.
	out, errOut, code := runVigil(t, "-c", cfg, "status")
	if code != 0 || !strings.Contains(out, "sensors:  not known: no daemon is running") {
		t.Errorf("status before any sample: exit %d, want it to say the sensors are not known:\n%s%s", code, out, errOut)
	}

	d := startDaemon(t, cfg)
	defer d.logIfFailed(t)
	d.waitLog(t, regexp.MustCompile(`msg="vigil starting"`), 10*time.Second)
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, errOut, code = runVigil(t, "-c", cfg, "status")
		if code == 0 && strings.Contains(out, "vigil_no_such_iio") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != 0 || !strings.Contains(out, "daemon running") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	wantText(t, out, "daemon")
	if !strings.Contains(out, "sensors:  3 failed in the last sample") {
		t.Errorf("daemon: no count of the failed sensors:\n%s", out)
	}
	wantJSON(t, "daemon")

	// The daemon stops before its first heartbeat stored anything; a
	// check on the state file stores a sample, as a heartbeat does.
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
	if _, errOut, code := runVigil(t, "-c", cfg, "check"); code != 0 {
		t.Fatalf("check: exit %d\n%s", code, errOut)
	}
	out, errOut, code = runVigil(t, "-c", cfg, "status")
	if code != 0 || !strings.Contains(out, "daemon not running") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	wantText(t, out, "no daemon")
	if !strings.Contains(out, "in the last sample stored") {
		t.Errorf("no daemon: status does not say the errors are the stored sample's:\n%s", out)
	}
	wantJSON(t, "no daemon")
}

// TestKernelHintFollowsTheBoard: a missing hwmon or iio device's error
// gives a Raspberry Pi's dtoverlay line only on a Pi; on other boards it
// gives the new_device line, with the board's bus when it names one.
func TestKernelHintFollowsTheBoard(t *testing.T) {
	for _, tc := range []struct {
		board      string
		want, nope string
	}{
		{"generic", "echo lm75 0x48 | sudo tee /sys/bus/i2c/devices/i2c-N/new_device", "Raspberry Pi"},
		{"visionfive2", "echo lm75 0x48 | sudo tee /sys/bus/i2c/devices/i2c-0/new_device", "Raspberry Pi"},
		{"rpi4", "on a Raspberry Pi, add dtoverlay=i2c-sensor,lm75", "new_device"},
	} {
		t.Run(tc.board, func(t *testing.T) {
			cfg := writeConfig(t, t.TempDir(), `
[[sensor]]
name = "rack"
driver = "hwmon"
device = "lm75"
`)
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `board = "sim"`, `board = "`+tc.board+`"`, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, _ := runVigil(t, "-c", cfg, "sensors")
			if strings.Contains(out, "lm75 at /sys") {
				t.Skip("this machine has an lm75")
			}
			if !strings.Contains(out, tc.want) || strings.Contains(out, tc.nope) {
				t.Errorf("vigil sensors on %s: want %q and no %q:\n%s%s", tc.board, tc.want, tc.nope, out, errOut)
			}
		})
	}
}

// TestConfigCheckNamesTheBus: on the generic board, config check says
// what becomes of an I²C sensor that names no bus on this machine,
// instead of passing it without a word (then every read failed with "no
// default bus").
func TestConfigCheckNamesTheBus(t *testing.T) {
	cfg := writeConfig(t, t.TempDir(), "\n[[sensor]]\nname = \"air\"\ndriver = \"tmp102\"\n")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `board = "sim"`, `board = "generic"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runVigil(t, "-c", cfg, "config", "check")
	buses, _ := filepath.Glob("/dev/i2c-*")
	var want string
	switch wantCode := 0; len(buses) {
	case 0:
		want = "sensor air reads as an error until a bus appears: no I²C bus: the generic board profile names no default bus and this machine has none (no /dev/i2c-*)"
		if code != wantCode {
			t.Errorf("exit %d, want %d", code, wantCode)
		}
	case 1:
		want = "sensor air names no I²C bus: it uses i2c bus "
	default:
		want, wantCode = "sensor.air.bus: no I²C bus set: the generic board profile names no default bus and this machine has", exitConfig
		if code != wantCode {
			t.Errorf("exit %d, want %d", code, wantCode)
		}
	}
	if !strings.Contains(errOut, want) {
		t.Errorf("config check: exit %d, stderr lacks %q:\n%s", code, want, errOut)
	}
}
