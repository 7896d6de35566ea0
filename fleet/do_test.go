package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// fakeDevice speaks the device side of the fleet protocol on a real
// broker: it answers the roll call with status and info (tags, version,
// config digest) and its problem attributes, and every cmd/VERB with a
// cmd/result echoing the cid; a verb missing from remote is refused as
// [manage] remote refuses it.
type fakeDevice struct {
	id, version string
	tags        []string
	remote      []string // verbs allowed; nil: all
	firing      []Firing
	cli         paho.Client

	mu  sync.Mutex
	got []string // "verb payload"
}

func (d *fakeDevice) start(t *testing.T, url string) {
	t.Helper()
	opts := paho.NewClientOptions().AddBroker(url).SetClientID("fake-"+d.id).SetCleanSession(true).
		SetWill("vigil/"+d.id+"/status", "offline", 1, true)
	d.cli = paho.NewClient(opts)
	if tok := d.cli.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("fake %s: connect: %v", d.id, tok.Error())
	}
	t.Cleanup(func() { d.cli.Disconnect(0) })
	d.answer(true)
	tok := d.cli.SubscribeMultiple(map[string]byte{"vigil/fleet/rollcall": 1, "vigil/" + d.id + "/cmd/+": 1}, func(_ paho.Client, m paho.Message) {
		if m.Topic() == "vigil/fleet/rollcall" {
			d.answer(false)
			return
		}
		verb := m.Topic()[strings.LastIndexByte(m.Topic(), '/')+1:]
		if verb == "result" {
			return
		}
		d.mu.Lock()
		d.got = append(d.got, verb+" "+string(m.Payload()))
		d.mu.Unlock()
		var p struct {
			CID    string `json:"cid"`
			Target string `json:"target"`
		}
		_ = json.Unmarshal(m.Payload(), &p)
		res := map[string]any{"command": verb, "cid": p.CID, "ok": true}
		if d.remote != nil && !slices.Contains(d.remote, verb) {
			res = map[string]any{"command": verb, "cid": p.CID, "ok": false, "refused": true, "error": fmt.Sprintf(`not allowed: add %q to [manage] remote`, verb)}
		}
		if verb == "ack" {
			for i := range d.firing {
				if d.firing[i].ID == p.Target {
					d.firing[i].AckedBy = "mqtt"
				}
			}
		}
		b, _ := json.Marshal(res)
		d.cli.Publish("vigil/"+d.id+"/cmd/result", 1, false, b)
		if verb == "ack" {
			d.answer(false)
		}
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("fake %s: subscribe: %v", d.id, tok.Error())
	}
}

func (d *fakeDevice) answer(retained bool) {
	info, _ := json.Marshal(map[string]any{"time": time.Now().UTC(), "board": "sim", "version": d.version,
		"interval": "1m0s", "tags": d.tags, "config": "0123456789ab"})
	d.mu.Lock()
	attrs, _ := json.Marshal(map[string]any{"firing": d.firing})
	d.mu.Unlock()
	for _, m := range []struct{ leaf, payload string }{{"status", "online"}, {"info", string(info)}, {"problem/attributes", string(attrs)}} {
		d.cli.Publish("vigil/"+d.id+"/"+m.leaf, 1, retained, m.payload).WaitTimeout(5 * time.Second)
	}
}

func (d *fakeDevice) received() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

// runFleet runs `vigil fleet` (do: `vigil fleet do`) with args (flags
// first) against the roster in cache, and returns its stdout.
func runFleet(t *testing.T, cache string, do bool, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errOut, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Window: 2 * time.Second, CacheDir: cache}
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	run := c.Run
	if do {
		c.DefineDo(fs)
		run = c.RunDo
	} else {
		c.Define(fs)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := run(ctx, fs.Args())
	return out.String(), err
}

func isUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// TestDoSetByTag: `fleet do set … --select tag=north --yes` reaches
// exactly the north devices, each command with a cid; one whose remote
// lacks set is refused with the reason, one that holds a retained online
// status but is gone answers nothing; exit is an error (1), and the
// counts say so.
func TestDoSetByTag(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	devs := []*fakeDevice{
		{id: "n1", version: "v1", tags: []string{"north"}},
		{id: "n2", version: "v1", tags: []string{"north", "tomatoes"}},
		{id: "n3", version: "v1", tags: []string{"north"}, remote: []string{"ack"}},
		{id: "s1", version: "v1", tags: []string{"south"}},
	}
	for _, d := range devs {
		d.start(t, b.URL())
	}
	// gone: online as far as the broker's retained status goes, but no
	// one answers.
	gone := mosquittotest.Subscribe(t, b.URL())
	gone.Publish("vigil/n4/status", true, "online")
	gone.Publish("vigil/n4/info", true, `{"time":"2026-11-26T11:00:00Z","version":"v1","tags":["north"]}`)
	cache := t.TempDir()

	// The dry run sends nothing and lists who would get what.
	out, err := runFleet(t, cache, true, "--broker", b.URL(), "--select", "tag=north", "set", "heartbeat.interval", "10m")
	if err != nil || !strings.Contains(out, "dry run") || !strings.Contains(out, "nothing sent: add --yes") || strings.Contains(out, "s1") {
		t.Fatalf("dry run: err %v, output:\n%s", err, out)
	}
	for _, d := range devs {
		if got := d.received(); len(got) != 0 {
			t.Fatalf("dry run: %s received %v", d.id, got)
		}
	}

	out, err = runFleet(t, cache, true, "--broker", b.URL(), "--select", "tag=north", "--timeout", "2s", "--yes", "set", "heartbeat.interval", "10m")
	if err == nil || isUsage(err) || !strings.Contains(err.Error(), "2 of 4 devices did not say ok") {
		t.Errorf("err = %v, want 2 of 4 devices did not say ok", err)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		`(?m)^n1 +online +ok$`, `(?m)^n2 +online +ok$`,
		`(?m)^n3 +online +refused: not allowed: add "set" to \[manage\] remote$`,
		`(?m)^n4 +online +no answer$`,
		`(?m)^4 devices: 2 ok, 1 refused, 1 no answer$`,
	} {
		if !regexpMatch(want, out) {
			t.Errorf("output lacks %s", want)
		}
	}
	for _, d := range devs {
		got := d.received()
		if d.id == "s1" {
			if len(got) != 0 {
				t.Errorf("s1 (south) received %v", got)
			}
			continue
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], `set {"cid":"vf`) || !strings.Contains(got[0], `"key":"heartbeat.interval","value":"10m"`) {
			t.Errorf("%s received %v, want one set with a cid", d.id, got)
		}
	}

	// --json: the same, for a program.
	out, err = runFleet(t, cache, true, "--broker", b.URL(), "--select", "id=n[12]", "--json", "--yes", "check")
	var rep Report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Counts[ResultOK] != 2 || len(rep.Devices) != 2 {
		t.Errorf("--json check on n1, n2: err %v, report %+v\n%s", err, rep, out)
	}
}

// TestDoAckFiring: ack without a target sends one ack per problem firing
// unacknowledged, by its id, to the firing devices only; afterwards the
// fleet shows every problem acknowledged.
func TestDoAckFiring(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	at := time.Now().UTC().Add(-time.Minute)
	devs := []*fakeDevice{
		{id: "a", version: "v1", firing: []Firing{{Severity: 3, Source: "rule", Rule: "hot", Summary: "hot", Time: at, ID: "a-1"}, {Severity: 2, Source: "llm", Summary: "dry", Time: at, ID: "a-2"}}},
		{id: "b", version: "v1", firing: []Firing{{Severity: 2, Source: "rule", Rule: "wet", Summary: "wet", Time: at, ID: "b-1", AckedBy: "telegram"}}},
		{id: "c", version: "v1"},
	}
	for _, d := range devs {
		d.start(t, b.URL())
	}
	cache := t.TempDir()
	out, err := runFleet(t, cache, true, "--broker", b.URL(), "--select", "firing", "--yes", "ack")
	if err != nil {
		t.Fatalf("ack --select firing: %v\n%s", err, out)
	}
	if got := devs[0].received(); len(got) != 2 || !strings.Contains(got[0]+got[1], `"target":"a-1"`) || !strings.Contains(got[0]+got[1], `"target":"a-2"`) {
		t.Errorf("a received %v, want an ack of a-1 and one of a-2", got)
	}
	if got := append(devs[1].received(), devs[2].received()...); len(got) != 0 {
		t.Errorf("b (all acknowledged) and c (not firing) received %v", got)
	}
	if !strings.Contains(out, "2 devices: 2 ok") {
		t.Errorf("output:\n%s", out)
	}
	out, err = runFleet(t, cache, false, "--broker", b.URL(), "--once", "--json", "--firing")
	var snap Snapshot
	if err != nil || json.Unmarshal([]byte(out), &snap) != nil || snap.Summary.Firing != 2 || snap.Summary.Acked != 2 {
		t.Errorf("fleet --firing after the ack: err %v, summary %+v\n%s", err, snap.Summary, out)
	}
}

// TestDoRefusesBeforeSending: a bad selector, a bad verb and a checklist
// over the device's limit are usage errors naming what is wrong, before
// any connection; a selector that matches nobody is exit 1 saying so.
func TestDoRefusesBeforeSending(t *testing.T) {
	big := filepath.Join(t.TempDir(), "HEARTBEAT.md")
	if err := os.WriteFile(big, bytes.Repeat([]byte("- check the pumps\n"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	// No broker listens here: nothing may get as far as connecting.
	url := fmt.Sprintf("tcp://127.0.0.1:%d", mosquittotest.FreePort(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--select", "colour=red", "check"}, `"colour=red": unknown selector (want id=GLOB, tag=NAME`},
		{[]string{"--select", "id=[", "check"}, `"id=[": bad pattern`},
		{[]string{"--select", "tag=", "check"}, `"tag=": tag= needs a value`},
		{[]string{"check"}, "--select is required"},
		{[]string{"--select", "all", "reboot"}, `unknown verb "reboot"`},
		{[]string{"--select", "all", "pause", "ten"}, `"ten" is not a number of minutes`},
		{[]string{"--select", "all", "set", "x"}, "want KEY VALUE"},
		{[]string{"--select", "all", "checklist", "set", big}, "more than a device takes (16 KiB"},
		{[]string{"--select", "all", "set", "device.id", strings.Repeat("x", 300)}, "more than the 256 a device takes"},
	} {
		_, err := runFleet(t, t.TempDir(), true, append([]string{"--broker", url}, tc.args...)...)
		if !isUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fleet do %v: err %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}

	b := mosquittotest.Start(t, mosquittotest.Options{})
	(&fakeDevice{id: "a", version: "v1", tags: []string{"south"}}).start(t, b.URL())
	_, err := runFleet(t, t.TempDir(), true, "--broker", b.URL(), "--select", "tag=north", "--yes", "check")
	if err == nil || isUsage(err) || !strings.Contains(err.Error(), "no device matches --select tag=north (of 1 devices seen; tags seen: south)") {
		t.Errorf("a selector matching nobody: err %v", err)
	}
}

// TestRosterShowsMissing: a device seen once and then gone without a
// trace (no retained status: as on another RabbitMQ node) is missing on
// the next --once, with when it was last seen, and counted; --once waits
// the whole window for it.
func TestRosterShowsMissing(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	cache := t.TempDir()
	a := &fakeDevice{id: "a", version: "v1"}
	a.start(t, b.URL())
	pub := mosquittotest.Subscribe(t, b.URL())
	pub.Publish("vigil/z/status", false, "online") // not retained: a roll-call answer
	pub.Publish("vigil/z/info", false, `{"time":"2026-11-26T11:00:00Z","version":"v0"}`)
	if _, err := runFleet(t, cache, false, "--broker", b.URL(), "--once"); err != nil {
		t.Fatal(err)
	}
	// The first run saw a (z's live messages came before it subscribed).
	pub.Publish("vigil/z/info", true, `{"time":"2026-11-26T11:00:00Z","version":"v0"}`)
	out, err := runFleet(t, cache, false, "--broker", b.URL(), "--once")
	if err != nil || !strings.Contains(out, "2 versions: 1 on v1, 1 on v0") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	// z is gone: its retained info removed, nothing answers for it.
	pub.Publish("vigil/z/info", true, "")
	start := time.Now()
	out, err = runFleet(t, cache, false, "--broker", b.URL(), "--once")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ", 1 missing") || !regexpMatch(`(?m)^z +missing .* last seen \S+ ago$`, out) {
		t.Errorf("a device on the roster that did not come is not shown missing:\n%s", out)
	}
	if waited := time.Since(start); waited < 2*time.Second {
		t.Errorf("--once returned after %v with a device missing, want the whole window (2s)", waited)
	}
	// And in --offline, and in JSON with its last sign of life.
	out, _ = runFleet(t, cache, false, "--broker", b.URL(), "--once", "--json", "--offline")
	var snap Snapshot
	if json.Unmarshal([]byte(out), &snap) != nil || len(snap.Devices) != 1 || snap.Devices[0].State != Missing || snap.Devices[0].LastSeen.IsZero() || snap.Summary.Missing != 1 {
		t.Errorf("--json --offline: %+v\n%s", snap, out)
	}
	// Its Will, and nothing else of it: offline, with what the roster
	// knew of it.
	pub.Publish("vigil/z/status", true, "offline")
	out, _ = runFleet(t, cache, false, "--broker", b.URL(), "--once", "--json", "--offline")
	if json.Unmarshal([]byte(out), &snap) != nil || len(snap.Devices) != 1 || snap.Devices[0].State != Offline || snap.Devices[0].Version != "v0" {
		t.Errorf("a device with only its Will: %+v\n%s", snap.Devices, out)
	}
}

// TestOnceNobodyWaitsTheWindow: with no device at all, --once waits the
// whole roll-call window, then says so and names the rate limit.
func TestOnceNobodyWaitsTheWindow(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	start := time.Now()
	_, err := runFleet(t, t.TempDir(), false, "--broker", b.URL(), "--once")
	if err == nil || !strings.Contains(err.Error(), "at most once per 10s") {
		t.Errorf("err = %v, want one naming the roll call's limit", err)
	}
	if waited := time.Since(start); waited < 2*time.Second {
		t.Errorf("--once gave up after %v, want the whole window (2s)", waited)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestOnceWaitsForTheAnswerNotSensors: a device on the roster whose
// sensors arrive live (every second, as a daemon publishes them) but whose
// answer to the roll call comes at the end of its window is waited for:
// --once shows it online, not unknown.
func TestOnceWaitsForTheAnswerNotSensors(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	cache := t.TempDir()
	path := RosterPath(cache, []string{b.URL()}, "vigil")
	r, _ := LoadRoster(path, []string{b.URL()}, "vigil")
	r.Note([]Device{{ID: "s", State: Online, LastSeen: time.Now()}}, time.Now())
	if err := r.Save(path, time.Now()); err != nil {
		t.Fatal(err)
	}
	pub := mosquittotest.Subscribe(t, b.URL())
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			pub.Publish("vigil/s/sensors", false, `{"time":"2026-11-26T11:00:00Z"}`)
			if i == 12 { // the answer, 1.2 s in
				pub.Publish("vigil/s/status", false, "online")
				pub.Publish("vigil/s/info", false, `{"time":"2026-11-26T11:00:00Z","version":"v1"}`)
			}
		}
	}()
	out, err := runFleet(t, cache, false, "--broker", b.URL(), "--once", "--json")
	close(stop)
	<-done
	var snap Snapshot
	if err != nil || json.Unmarshal([]byte(out), &snap) != nil || len(snap.Devices) != 1 || snap.Devices[0].State != Online {
		t.Errorf("--once: err %v, devices %+v; want s online", err, snap.Devices)
	}
}

// TestActionPayloads: each verb's payload is the JSON form the device's
// parser takes (transport/mqtt parseCommand), and gets a cid.
func TestActionPayloads(t *testing.T) {
	list := filepath.Join(t.TempDir(), "HEARTBEAT.md")
	if err := os.WriteFile(list, []byte("- is the pump running?\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, `{"cid":"X"}`},
		{[]string{"resume"}, `{"cid":"X"}`},
		{[]string{"pause", "30"}, `{"cid":"X","minutes":30}`},
		{[]string{"set", "heartbeat.interval", "10m"}, `{"cid":"X","key":"heartbeat.interval","value":"10m"}`},
		{[]string{"set", "rule.x.message", "too", "hot"}, `{"cid":"X","key":"rule.x.message","value":"too hot"}`},
		{[]string{"unset", "heartbeat.interval"}, `{"cid":"X","key":"heartbeat.interval"}`},
		{[]string{"checklist", "set", list}, `{"cid":"X","op":"set","text":"- is the pump running?"}`},
		{[]string{"ack", "llm"}, `{"cid":"X","target":"llm"}`},
		{[]string{"rule", "approve", "p7"}, `{"cid":"X","op":"approve","target":"p7"}`},
	} {
		a, err := parseAction(tc.args)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		ps := a.payloads(Device{})
		if len(ps) != 1 {
			t.Errorf("%v: %d payloads", tc.args, len(ps))
			continue
		}
		b, _ := json.Marshal(withCID(ps[0], "X"))
		if string(b) != tc.want {
			t.Errorf("%v: payload %s, want %s", tc.args, b, tc.want)
		}
	}
	a, _ := parseAction([]string{"ack"})
	d := Device{Firing: []Firing{{Rule: "hot", ID: "d-1"}, {Source: "llm"}, {Rule: "wet", ID: "d-3", AckedBy: "telegram"}}}
	var got []string
	for _, p := range a.payloads(d) {
		got = append(got, p["target"].(string))
	}
	if !slices.Equal(got, []string{"d-1", "llm"}) {
		t.Errorf("ack without a target: %v, want every unacknowledged problem by id, else by rule or source", got)
	}
}

// TestDoSpreadsPublishes: --rate spaces the commands: six devices at 10 a
// second take at least half a second from the first command's arrival to
// the last one's (a loaded machine only makes that longer); at the
// default 50 a second a thousand devices are not all asked at once.
func TestDoSpreadsPublishes(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	var devs []*fakeDevice
	for i := range 6 {
		d := &fakeDevice{id: fmt.Sprintf("r%d", i), version: "v1"}
		d.start(t, b.URL())
		devs = append(devs, d)
	}
	arrived := func() int {
		n := 0
		for _, d := range devs {
			n += len(d.received())
		}
		return n
	}
	var first, last time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			n := arrived()
			if n >= 1 && first.IsZero() {
				first = time.Now()
			}
			if n >= len(devs) {
				last = time.Now()
				return
			}
		}
	}()
	out, err := runFleet(t, t.TempDir(), true, "--broker", b.URL(), "--select", "all", "--rate", "10", "--timeout", "2s", "--yes", "check")
	<-done
	if err != nil {
		t.Fatalf("fleet do check: %v\n%s", err, out)
	}
	if last.IsZero() {
		t.Fatalf("only %d of %d devices got the command\n%s", arrived(), len(devs), out)
	}
	if spread := last.Sub(first); spread < 400*time.Millisecond {
		t.Errorf("six commands at --rate 10 arrived within %s, want them spread over at least 0.5 s (0.4 s allowed for delivery jitter)", spread)
	} else {
		t.Logf("six commands at --rate 10 arrived over %s", spread.Round(time.Millisecond))
	}
}
