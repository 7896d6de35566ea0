package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/fleet"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// fleetDevice writes the config of one fleet member with its own id and
// state dir: sampling and publishing its sensors every second, so a
// stopped one is silent within a second; "hot" adds a rule that fires for
// good. Keepalive 60s keeps the broker from sending a SIGSTOPped device's
// Last Will while the test looks at it.
func fleetDevice(t *testing.T, id, broker string, hot bool, mqttExtra ...string) string {
	t.Helper()
	rules := ""
	if hot {
		rules = alwaysRule
	}
	return fleetDeviceWith(t, id, fmt.Sprintf("broker = %q\n", broker)+strings.Join(mqttExtra, "\n"), 60*time.Second, rules)
}

// alwaysRule is a rule that fires for good on the sim board.
const alwaysRule = `
[[rule]]
name = "always"
when = "air.pressure > 0"
severity = "critical"
message = "pressure at {air.pressure}"
`

// fleetDeviceWith writes a fleet member's config with mqtt as the [mqtt]
// table's lines (broker or brokers, and more), the given keepalive, and
// extra (rules) at the end. It returns the config's path.
func fleetDeviceWith(t *testing.T, id, mqtt string, keepalive time.Duration, extra string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`
[device]
id = %q
board = "sim"
state_dir = "state"
timezone = "UTC"

[heartbeat]
interval = "1m"
sample_interval = "1s"
sensors_publish_interval = "1s"
checklist = "HEARTBEAT.md"

[[sensor]]
name = "air"
driver = "bme280"
sim = { every = "0s" }

[mqtt]
%s
keepalive = %q
%s
`, id, mqtt, keepalive.String(), extra)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fleetSnapshot runs `vigil fleet --once --json` with args and decodes it.
func fleetSnapshot(t *testing.T, broker string, args ...string) fleet.Snapshot {
	t.Helper()
	out, errOut, code := runVigil(t, append([]string{"fleet", "--broker", broker, "--once", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("vigil fleet --once --json %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	var snap fleet.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("vigil fleet --json output: %v\n%s", err, out)
	}
	return snap
}

// fleetOnce is fleetSnapshot's devices by id.
func fleetOnce(t *testing.T, broker string, extra ...string) map[string]fleet.Device {
	t.Helper()
	devs := map[string]fleet.Device{}
	for _, d := range fleetSnapshot(t, broker, extra...).Devices {
		devs[d.ID] = d
	}
	return devs
}

// TestFleetOnceJSON: five real daemons on one broker; `vigil fleet` lists
// them online with their board, version, interval and firing rule; a
// SIGKILLed one turns offline, a SIGSTOPped one (its TCP connection up, so
// the broker still holds "online") turns stale.
func TestFleetOnceJSON(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	rec := mosquittotest.Subscribe(t, b.URL(), "vigil/+/status", "vigil/+/problem")
	ids := []string{"fleet-0", "fleet-1", "fleet-2", "fleet-3", "fleet-4"}
	daemons := map[string]*child{}
	for i, id := range ids {
		daemons[id] = startDaemon(t, fleetDevice(t, id, b.URL(), i == 0))
	}
	for _, id := range ids {
		rec.Wait("vigil/"+id+"/status", 15*time.Second, payloadIs("online"))
	}
	rec.Wait("vigil/fleet-0/problem", 15*time.Second, payloadIs("ON"))

	// --stale-after 4s: every healthy daemon publishes its sensors each
	// second; the default, 3 × the 1m interval, is the unit tests' job.
	const staleAfter = "4s"
	devs := fleetOnce(t, b.URL(), "--stale-after", staleAfter)
	if len(devs) != len(ids) {
		t.Fatalf("fleet lists %d devices, want %d: %+v", len(devs), len(ids), devs)
	}
	for _, id := range ids {
		d := devs[id]
		if d.State != fleet.Online || d.Board != "sim" || d.Version == "" || d.Interval != fleet.Duration(time.Minute) || d.Since.IsZero() {
			t.Errorf("%s = %+v, want online since a time, board sim, a version, interval 1m", id, d)
		}
	}
	if f := devs["fleet-0"].Firing; len(f) != 1 || f[0].Rule != "always" || f[0].Severity.String() != "critical" {
		t.Errorf("fleet-0 firing = %+v, want the critical rule always", f)
	}
	if f := devs["fleet-3"].Firing; len(f) != 0 {
		t.Errorf("fleet-3 firing = %+v, want none", f)
	}

	// SIGKILL: the socket closes, the broker sends the Last Will.
	daemons["fleet-1"].kill()
	rec.Wait("vigil/fleet-1/status", 10*time.Second, payloadIs("offline"))
	// SIGSTOP: nothing more from fleet-2, but its connection stays open
	// and its status online until 1.5 × 60s.
	d2 := daemons["fleet-2"]
	if err := d2.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d2.cmd.Process.Signal(syscall.SIGCONT) })
	time.Sleep(6 * time.Second)

	devs = fleetOnce(t, b.URL(), "--stale-after", staleAfter)
	want := map[string]string{"fleet-0": fleet.Online, "fleet-1": fleet.Offline, "fleet-2": fleet.Stale, "fleet-3": fleet.Online, "fleet-4": fleet.Online}
	for id, st := range want {
		if d := devs[id]; d.State != st {
			t.Errorf("after SIGKILL of fleet-1 and SIGSTOP of fleet-2: %s = %s (status %q, silent %v), want %s",
				id, d.State, d.Status, time.Duration(d.SilentFor), st)
		}
	}
	if d := devs["fleet-2"]; d.Status != "online" {
		t.Errorf("fleet-2 status = %q, want still online on the broker (stale is the view's call)", d.Status)
	}

	// The table form, as a person reads it.
	out, err := exec.Command(vigilBin, "fleet", "--broker", b.URL(), "--once", "--stale-after", staleAfter).Output()
	if err != nil {
		t.Fatalf("vigil fleet --once: %v", err)
	}
	for _, re := range []string{`5 devices: 3 online, 1 offline, 1 stale, 1 firing`, `(?m)^fleet-1\s+offline`, `(?m)^fleet-2\s+stale`, `(?m)^fleet-0\s+online\s.*critical always$`} {
		if !regexp.MustCompile(re).Match(out) {
			t.Errorf("fleet table does not match %s:\n%s", re, out)
		}
	}
}

// TestFleetBridge: the bridge section of docs/fleet.md, as written there
// (only its address pointed at a local broker), carries a daemon's alert
// from the site broker A to a subscriber on the "cluster" broker B, and the
// retained state with it, so `vigil fleet` on B sees the device.
func TestFleetBridge(t *testing.T) {
	t.Parallel()
	conf := bridgeConfig(t)
	cluster := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, cluster.URL(), "vigil/+/alert")
	addr := strings.TrimPrefix(cluster.URL(), "tcp://")
	conf = regexp.MustCompile(`(?m)^address .*$`).ReplaceAllString(conf, "address "+addr)
	site := mosquittotest.Start(t, mosquittotest.Options{
		Config: "listener %d 127.0.0.1\nallow_anonymous true\n" + strings.ReplaceAll(conf, "%", "%%"),
	})

	startDaemon(t, fleetDevice(t, "site-dev", site.URL(), true))
	m := sub.Wait("vigil/site-dev/alert", 30*time.Second, nil)
	var a struct{ Device, Rule, State string }
	if err := json.Unmarshal([]byte(m.Payload), &a); err != nil || a.Device != "site-dev" || a.Rule != "always" || a.State != "firing" {
		t.Errorf("alert on the cluster broker = %s (%v), want site-dev's rule always firing", m.Payload, err)
	}
	devs := fleetOnce(t, cluster.URL())
	if d := devs["site-dev"]; d.State != fleet.Online || len(d.Firing) != 1 {
		t.Errorf("vigil fleet on the cluster broker: site-dev = %+v, want online with one rule firing", d)
	}
}

// bridgeConfig returns the mosquitto bridge config of docs/fleet.md.
func bridgeConfig(t *testing.T) string {
	t.Helper()
	conf := docBlock(t, "bridge.conf")
	if !regexp.MustCompile(`(?m)^address `).MatchString(conf) {
		t.Fatalf("the bridge config in docs/fleet.md has no address line:\n%s", conf)
	}
	return conf
}

// docBlock returns the fenced block of docs/fleet.md right after the line
// "<!-- tested: NAME -->".
func docBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- tested: " + regexp.QuoteMeta(name) + " -->\\s*```[a-z]*\\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/fleet.md has no fenced block after <!-- tested: %s -->", name)
	}
	return string(m[1])
}

// TestFleetACL: the acl_file of docs/fleet.md, as written there, on a
// mosquitto with one account per device. A real daemon logged in as its
// device id publishes its status (the Last Will included), info and
// alerts; with the same credentials, publishing as another device or
// commanding is dropped; the viewer cannot command; anonymous clients are
// refused.
func TestFleetACL(t *testing.T) {
	t.Parallel()
	mosquittotest.Bin(t)
	passwdBin, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		t.Skip("mosquitto_passwd not found (apt-get install mosquitto)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "acl"), []byte(docBlock(t, "acl")), 0o600); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "passwd")
	for i, u := range []string{"acl-dev", "other-dev", "fleet-viewer", "operator", "homeassistant"} {
		args := []string{"-b", pw, u, "pw-" + u}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwdBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd %s: %v\n%s", u, err, out)
		}
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	b := mosquittotest.Start(t, mosquittotest.Options{Config: "user " + me.Username + "\nlistener %d 127.0.0.1\nallow_anonymous false\n" +
		"password_file " + pw + "\nacl_file " + filepath.Join(dir, "acl") + "\n" + docBlock(t, "limits")})
	as := func(u string) mosquittotest.SubscriberOptions {
		return mosquittotest.SubscriberOptions{Configure: func(o *paho.ClientOptions) { o.SetUsername(u).SetPassword("pw-" + u) }}
	}
	viewer := mosquittotest.SubscribeWith(t, b.URL(), as("fleet-viewer"), "vigil/#")

	pwFile := filepath.Join(dir, "device-password")
	if err := os.WriteFile(pwFile, []byte("pw-acl-dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, fleetDevice(t, "acl-dev", b.URL(), true, `username = "acl-dev"`, `password_file = "`+pwFile+`"`))
	viewer.Wait("vigil/acl-dev/status", 15*time.Second, payloadIs("online"))
	viewer.Wait("vigil/acl-dev/info", 5*time.Second, nil)
	viewer.Wait("vigil/acl-dev/alert", 15*time.Second, nil)
	// The viewer calls the roll; the device, subscribed to it before it
	// said online, may read it and answers.
	infos := len(viewer.On("vigil/acl-dev/info"))
	mosquittotest.SubscribeWith(t, b.URL(), as("fleet-viewer")).Publish("vigil/fleet/rollcall", false, "")
	viewer.Wait("vigil/acl-dev/info", 5*time.Second, func(mosquittotest.Message) bool { return len(viewer.On("vigil/acl-dev/info")) > infos })

	// The device's credentials, used to impersonate and to command.
	spoof := mosquittotest.SubscribeWith(t, b.URL(), as("acl-dev"))
	spoof.Publish("vigil/other-dev/alert", false, "spoofed alert")
	spoof.Publish("vigil/other-dev/cmd/pause", false, "60")
	spoof.Publish("vigil/acl-dev/cmd/pause", false, "60")
	mosquittotest.SubscribeWith(t, b.URL(), as("fleet-viewer")).Publish("vigil/acl-dev/cmd/check", false, "from the viewer")
	op := mosquittotest.SubscribeWith(t, b.URL(), as("operator"))
	op.Publish("vigil/acl-dev/cmd/check", false, "from the operator")
	viewer.Wait("vigil/acl-dev/cmd/check", 5*time.Second, payloadIs("from the operator"))
	time.Sleep(500 * time.Millisecond)
	for _, topic := range []string{"vigil/other-dev/alert", "vigil/other-dev/cmd/pause", "vigil/acl-dev/cmd/pause"} {
		if got := viewer.On(topic); len(got) != 0 {
			t.Errorf("%s published with acl-dev's credentials went through: %+v", topic, got)
		}
	}
	for _, m := range viewer.On("vigil/acl-dev/cmd/check") {
		if m.Payload == "from the viewer" {
			t.Errorf("the viewer could command a device")
		}
	}

	// homeassistant/status reaches every device (vigil reads each message
	// on it whole): only Home Assistant's account may write it, and the
	// broker refuses a packet over the limit before it reaches anyone.
	ha := mosquittotest.SubscribeWith(t, b.URL(), as("homeassistant"), "homeassistant/status")
	spoof.Publish("homeassistant/status", false, "online from a device")
	op.Publish("homeassistant/status", false, "online from the operator")
	big := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("ha-big").SetUsername("homeassistant").SetPassword("pw-homeassistant"))
	if tok := big.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect as homeassistant: %v", tok.Error())
	}
	big.Publish("homeassistant/status", 0, false, strings.Repeat("x", 2<<20)).WaitTimeout(5 * time.Second)
	big.Disconnect(100)
	ha.Publish("homeassistant/status", false, "online")
	ha.Wait("homeassistant/status", 5*time.Second, payloadIs("online"))
	time.Sleep(500 * time.Millisecond)
	for _, m := range ha.On("homeassistant/status") {
		if m.Payload != "online" {
			t.Errorf("homeassistant/status carried %d bytes (%.30q) not from Home Assistant or over the broker's limit", len(m.Payload), m.Payload)
		}
	}

	anon := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("anon"))
	tok := anon.Connect()
	if !tok.WaitTimeout(5*time.Second) || tok.Error() == nil {
		anon.Disconnect(100)
		t.Errorf("an anonymous client connected: %v", tok.Error())
	}
}
