package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vigil-iot/vigil/fleet"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// liveInfos counts the messages on topic that are not retained: answers
// to a roll call, for a subscriber that subscribed after the device came
// online (its connect-time info then arrived retained).
func liveInfos(sub *mosquittotest.Subscriber, topic string) int {
	n := 0
	for _, m := range sub.On(topic) {
		if !m.Retained {
			n++
		}
	}
	return n
}

// TestRollCall is issue 24's "done when" for the roll call: three daemons
// on mosquitto; a roll call published on vigil/fleet/rollcall brings
// three fresh (not retained) info messages within 5 s; a second roll call
// within 10 s brings none; one after 10 s brings three again.
func TestRollCall(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	ids := []string{"roll-0", "roll-1", "roll-2"}
	watch := mosquittotest.Subscribe(t, b.URL(), "vigil/+/status")
	for _, id := range ids {
		startDaemon(t, fleetDevice(t, id, b.URL(), false))
	}
	for _, id := range ids {
		watch.Wait("vigil/"+id+"/status", 15*time.Second, payloadIs("online"))
	}
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/+/info")
	for _, id := range ids {
		if m := sub.Wait("vigil/"+id+"/info", 5*time.Second, nil); !m.Retained {
			t.Fatalf("%s's info before any roll call arrived live: %+v", id, m)
		}
	}
	answered := func(want int) func(mosquittotest.Message) bool {
		return func(mosquittotest.Message) bool {
			for _, id := range ids {
				if liveInfos(sub, "vigil/"+id+"/info") < want {
					return false
				}
			}
			return true
		}
	}

	called := time.Now()
	sub.Publish("vigil/fleet/rollcall", false, "")
	sub.Wait("vigil/"+ids[0]+"/info", 5*time.Second, answered(1))
	t.Logf("three answers %v after the roll call", time.Since(called).Round(time.Millisecond))

	sub.Publish("vigil/fleet/rollcall", false, "")
	time.Sleep(3 * time.Second)
	if since := time.Since(called); since >= 10*time.Second {
		t.Fatalf("the second roll call's wait ended %v after the first: not within 10 s, the test proves nothing", since)
	}
	for _, id := range ids {
		if n := liveInfos(sub, "vigil/"+id+"/info"); n != 1 {
			t.Errorf("%s answered %d times to two roll calls within 10 s, want once", id, n)
		}
	}

	time.Sleep(time.Until(called.Add(10*time.Second + 500*time.Millisecond)))
	sub.Publish("vigil/fleet/rollcall", false, "")
	sub.Wait("vigil/"+ids[0]+"/info", 5*time.Second, answered(2))
}

// TestFleetFiftyDaemons: `vigil fleet --once --json` and its filters
// against 50 real daemons on one mosquitto: 10 with a rule firing, 5
// SIGKILLed (offline), 5 SIGSTOPped (stale), the rest online; three
// version strings built in, 10 devices tagged north. The summary counts
// them all and names the versions, the filters pick them out, firing
// devices come first, the table fits 80 columns, --versions groups them.
// Then, with every retained message cleared, the roll call alone brings
// back each daemon still running, with its info and its problems, and
// the ones that are not come from the roster as missing. Last, issue 33's
// fleet do: a dry run sends nothing; set on tag=north changes the
// interval of the north devices that allow it, one whose [manage] remote
// lacks set is refused with the reason, one SIGKILLed before is no
// answer, exit 1; ack --select firing acknowledges every problem; a
// selector matching nobody is exit 1, a bad one exit 2.
func TestFleetFiftyDaemons(t *testing.T) {
	t.Parallel()
	const n = 50
	b := startMosquitto(t)
	watch := mosquittotest.Subscribe(t, b.URL(), "vigil/+/status", "vigil/+/problem")
	id := func(i int) string { return fmt.Sprintf("f50-%d", i) }
	hot := func(i int) bool { return i%5 == 0 }      // 10 firing
	killed := func(i int) bool { return i%10 == 1 }  // 5 offline
	stopped := func(i int) bool { return i%10 == 2 } // 5 stale
	north := func(i int) bool { return i%5 == 3 }    // 10 tagged north, all running
	const refuser, victim = 3, 8                     // north: remote lacks set; SIGKILLed before fleet do
	versionOf := func(i int) string {
		switch {
		case i == 9:
			return "v1.3.0"
		case i%10 == 4:
			return "v1.4.1"
		}
		return version // this binary's: "dev"
	}
	bins := map[string]string{versionOf(0): vigilBin, "v1.4.1": "", "v1.3.0": ""}
	var wg sync.WaitGroup
	for v := range bins {
		if v != versionOf(0) {
			bin := filepath.Join(t.TempDir(), "vigil")
			wg.Go(func() { buildVersion(t, bin, v) })
			bins[v] = bin
		}
	}
	wg.Wait()
	daemons := make([]*child, n)
	for i := range n {
		remote := `"status", "check", "set", "ack"`
		if i == refuser {
			remote = `"status", "check", "ack"`
		}
		rules := "\n[manage]\nremote = [" + remote + "]\n"
		if hot(i) {
			rules += alwaysRule
		}
		cfg := fleetDeviceWith(t, id(i), fmt.Sprintf("broker = %q\nhomeassistant = true\ncommands = true", b.URL()), 60*time.Second, rules)
		if north(i) {
			tagDevice(t, cfg, "north")
		}
		wg.Go(func() { daemons[i] = startProgram(t, "", nil, bins[versionOf(i)], "-c", cfg, "run") })
	}
	wg.Wait()
	for i := range n {
		watch.Wait("vigil/"+id(i)+"/status", 30*time.Second, payloadIs("online"))
		if hot(i) {
			watch.Wait("vigil/"+id(i)+"/problem", 15*time.Second, payloadIs("ON"))
		}
	}
	for i, d := range daemons {
		switch {
		case killed(i):
			d.kill()
		case stopped(i):
			if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.cmd.Process.Signal(syscall.SIGCONT) })
		}
	}
	for i := range n {
		if killed(i) {
			watch.Wait("vigil/"+id(i)+"/status", 10*time.Second, payloadIs("offline"))
		}
	}
	time.Sleep(5 * time.Second) // the stopped ones fall silent past --stale-after

	const staleAfter = "4s"
	snap := fleetSnapshot(t, b.URL(), "--stale-after", staleAfter)
	want := fleet.Summary{Devices: n, Online: 40, Offline: 5, Stale: 5, Firing: 10}
	if snap.Summary != want || len(snap.Devices) != n {
		t.Errorf("summary = %+v with %d devices, want %+v", snap.Summary, len(snap.Devices), want)
	}
	byID := map[string]fleet.Device{}
	for _, d := range snap.Devices {
		byID[d.ID] = d
	}
	for i := range n {
		d := byID[id(i)]
		wantState := fleet.Online
		if killed(i) {
			wantState = fleet.Offline
		} else if stopped(i) {
			wantState = fleet.Stale
		}
		if d.State != wantState || (len(d.Firing) > 0) != hot(i) {
			t.Errorf("%s = %s with %d firing, want %s, firing %v", id(i), d.State, len(d.Firing), wantState, hot(i))
		}
		if d.Version != versionOf(i) || d.HasTag("north") != north(i) || len(d.Config) != 12 {
			t.Errorf("%s: version %q, tags %v, config %q; want %s, north %v, a 12-digit digest", id(i), d.Version, d.Tags, d.Config, versionOf(i), north(i))
		}
	}
	if want := []fleet.VersionCount{{Version: "dev", Count: 44}, {Version: "v1.4.1", Count: 5}, {Version: "v1.3.0", Count: 1}}; !slices.Equal(snap.Versions, want) {
		t.Errorf("versions = %v, want %v", snap.Versions, want)
	}
	for i, d := range snap.Devices {
		if (i < 10) != (len(d.Firing) > 0) {
			t.Errorf("device %d in the list is %s (%d firing): want the 10 firing ones first", i, d.ID, len(d.Firing))
		}
	}

	for _, tc := range []struct {
		flags []string
		match func(i int) bool
	}{
		{[]string{"--firing"}, hot},
		{[]string{"--offline"}, killed},
		{[]string{"--stale"}, stopped},
		{[]string{"--firing", "--offline"}, func(i int) bool { return hot(i) || killed(i) }},
	} {
		snap := fleetSnapshot(t, b.URL(), append([]string{"--stale-after", staleAfter}, tc.flags...)...)
		var got, wantIDs []string
		for _, d := range snap.Devices {
			got = append(got, d.ID)
		}
		for i := range n {
			if tc.match(i) {
				wantIDs = append(wantIDs, id(i))
			}
		}
		slices.Sort(got)
		slices.Sort(wantIDs)
		if !slices.Equal(got, wantIDs) || snap.Summary != want {
			t.Errorf("%v: devices %v, summary %+v; want %v and the whole fleet's summary", tc.flags, got, snap.Summary, wantIDs)
		}
	}

	out, errOut, code := runVigil(t, "fleet", "--broker", b.URL(), "--once", "--stale-after", staleAfter)
	if code != 0 {
		t.Fatalf("vigil fleet --once: exit %d\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "50 devices: 40 online, 5 offline, 5 stale, 10 firing") {
		t.Errorf("table's first line: %q", strings.SplitN(out, "\n", 2)[0])
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := utf8.RuneCountInString(l); w > 80 {
			t.Errorf("table line %d columns wide: %q", w, l)
		}
	}
	if !regexp.MustCompile(`(?m)^f50-0\s+online\s.*critical always$`).MatchString(out) {
		t.Errorf("table lacks f50-0 online with its rule firing:\n%s", out)
	}
	if skew := "\n3 versions: 44 on dev, 5 on v1.4.1, 1 on v1.3.0\n"; !strings.Contains(out, skew) || !regexp.MustCompile(`(?m)^f50-3\s.*\snorth\s`).MatchString(out) {
		t.Errorf("table lacks the version skew line %q or f50-3's tag:\n%s", skew, out)
	}
	out, errOut, code = runVigil(t, "fleet", "--broker", b.URL(), "--once", "--versions", "--json")
	var byVersion struct {
		ByVersion []fleet.Version `json:"by_version"`
	}
	if err := json.Unmarshal([]byte(out), &byVersion); code != 0 || err != nil {
		t.Fatalf("vigil fleet --versions --json: exit %d, %v\n%s", code, err, errOut)
	}
	for _, v := range byVersion.ByVersion {
		var want []string
		for i := range n {
			if versionOf(i) == v.Version {
				want = append(want, id(i))
			}
		}
		got := slices.Sorted(slices.Values(v.Devices))
		if slices.Sort(want); !slices.Equal(got, want) || v.Count != len(want) {
			t.Errorf("--versions: %s has %v, want %v", v.Version, got, want)
		}
	}
	if len(byVersion.ByVersion) != 3 {
		t.Errorf("--versions: %d versions, want 3: %+v", len(byVersion.ByVersion), byVersion.ByVersion)
	}

	// The roll call alone: clear every retained message of the devices
	// (as on a broker that keeps none for wildcards). The answers are
	// limited to one per 10 s, so wait out the first roll call's.
	clear := mosquittotest.Subscribe(t, b.URL())
	for i := range n {
		for _, leaf := range []string{"status", "info", "heartbeat", "sensors", "problem", "problem/attributes"} {
			clear.Publish("vigil/"+id(i)+"/"+leaf, true, "")
		}
	}
	time.Sleep(10 * time.Second)
	snap = fleetSnapshot(t, b.URL(), "--stale-after", staleAfter)
	for i := range n {
		d, ok := byID[id(i)], false
		for _, got := range snap.Devices {
			if got.ID == id(i) {
				d, ok = got, true
			}
		}
		if killed(i) || stopped(i) {
			// Their retained Will is gone: the roster still knows them.
			if !ok || d.State != fleet.Missing {
				t.Errorf("%s is not running and has no status; want it missing, got %+v (listed %v)", id(i), d, ok)
			}
			continue
		}
		if !ok || d.State != fleet.Online || d.Board != "sim" || d.Interval != fleet.Duration(time.Minute) || (len(d.Firing) > 0) != hot(i) {
			t.Errorf("roll call alone: %s = %+v (listed %v), want online, board sim, interval 1m, firing %v", id(i), d, ok, hot(i))
		}
	}

	// fleet do. The victim, north, dies first: offline (its Will), so
	// never sent to.
	daemons[victim].kill()
	watch.Wait("vigil/"+id(victim)+"/status", 10*time.Second, payloadIs("offline"))
	cmds := mosquittotest.Subscribe(t, b.URL(), "vigil/+/cmd/+")
	setNorth := []string{"fleet", "do", "set", "heartbeat.interval", "10m", "--select", "tag=north", "--broker", b.URL()}
	out, errOut, code = runVigil(t, setNorth...)
	if code != 0 || !strings.Contains(out, "dry run: cmd/set {\"key\":\"heartbeat.interval\",\"value\":\"10m\"} to 9 devices matching --select tag=north:") ||
		!strings.Contains(out, "nothing sent: add --yes to send") || !regexp.MustCompile(`(?m)^f50-8\s+offline\s+would not send \(offline\)$`).MatchString(out) {
		t.Errorf("fleet do dry run: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got := cmds.On("vigil/+/cmd/set"); len(got) != 0 {
		t.Errorf("the dry run sent %v", got)
	}
	out, errOut, code = runVigil(t, append(setNorth, "--yes")...)
	t.Logf("fleet do set --yes:\n%s", out)
	if code != 1 || !strings.Contains(errOut, "2 of 10 devices did not say ok") {
		t.Errorf("fleet do set --yes: exit %d, stderr %q; want 1 and 2 of 10 not ok", code, errOut)
	}
	var rows []string
	for i := range n {
		if !north(i) {
			continue
		}
		switch i {
		case refuser:
			rows = append(rows, `(?m)^`+id(i)+`\s+online\s+refused: not allowed: add "set" to \[manage\] remote$`)
		case victim:
			rows = append(rows, `(?m)^`+id(i)+`\s+offline\s+no answer \(offline, not sent\)$`)
		default:
			rows = append(rows, `(?m)^`+id(i)+`\s+online\s+ok$`)
		}
	}
	for _, re := range append(rows, `(?m)^10 devices: 8 ok, 1 refused, 1 no answer$`) {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("fleet do set output lacks %s", re)
		}
	}
	if got := len(strings.Split(strings.TrimSpace(out), "\n")); got != 13 {
		t.Errorf("fleet do set printed %d lines, want a head, a header, 10 devices and the counts", got)
	}
	sent := 0
	for i := range n {
		for _, m := range cmds.On("vigil/" + id(i) + "/cmd/set") {
			sent++
			if !north(i) || i == victim || !strings.Contains(m.Payload, `"cid":"vf`) {
				t.Errorf("cmd/set to %s (north %v): %q; want one with a cid, to the live north devices only", id(i), north(i), m.Payload)
			}
		}
	}
	if sent != 9 {
		t.Errorf("%d cmd/set sent, want 9 (the north devices but the dead one)", sent)
	}
	index := map[string]int{}
	for i := range n {
		index[id(i)] = i
	}
	snap = fleetSnapshot(t, b.URL())
	for _, d := range snap.Devices {
		i := index[d.ID]
		want := fleet.Duration(time.Minute)
		if north(i) && i != refuser && i != victim {
			want = fleet.Duration(10 * time.Minute)
		}
		if d.State == fleet.Online && d.Interval != want {
			t.Errorf("after fleet do set: %s interval %v, want %v", d.ID, time.Duration(d.Interval), time.Duration(want))
		}
	}

	out, errOut, code = runVigil(t, "fleet", "do", "ack", "--select", "firing", "--broker", b.URL(), "--yes")
	if code != 0 || !strings.Contains(out, "\n10 devices: 10 ok\n") {
		t.Errorf("fleet do ack --select firing: exit %d\n%s\n%s", code, out, errOut)
	}
	snap = fleetSnapshot(t, b.URL(), "--firing")
	if snap.Summary.Firing != 10 || snap.Summary.Acked != 10 || len(snap.Devices) != 10 {
		t.Errorf("after fleet do ack: summary %+v, %d shown; want 10 firing, all 10 acknowledged", snap.Summary, len(snap.Devices))
	}
	for _, d := range snap.Devices {
		if !d.Acked() {
			t.Errorf("%s after fleet do ack: firing %+v, want every problem acknowledged", d.ID, d.Firing)
		}
	}

	_, errOut, code = runVigil(t, "fleet", "do", "check", "--select", "tag=south", "--broker", b.URL(), "--yes")
	if code != 1 || !strings.Contains(errOut, "no device matches --select tag=south (of 50 devices seen; tags seen: north): nothing sent") {
		t.Errorf("fleet do --select tag=south: exit %d, %s; want 1 and no device matches", code, errOut)
	}
	_, errOut, code = runVigil(t, "fleet", "do", "check", "--select", "tag=north,colour=red", "--broker", b.URL(), "--yes")
	if code != 2 || !strings.Contains(errOut, `--select "colour=red": unknown selector (want id=GLOB, tag=NAME, firing, offline or all)`) {
		t.Errorf("fleet do --select colour=red: exit %d, %s; want 2 naming it", code, errOut)
	}
}

// TestFleetNobody: on a broker with no device, vigil fleet --once says so
// on stderr, naming the broker, the prefix and the roll call, and exits
// 1; an empty fleet is never a silent empty list.
func TestFleetNobody(t *testing.T) {
	t.Parallel()
	b := mosquittotest.Start(t, mosquittotest.Options{})
	// Each waits a device's whole roll-call window: all three at once.
	var wg sync.WaitGroup
	for _, args := range [][]string{{"--once"}, {"--once", "--json"}, {"--once", "--prefix", "site-a"}} {
		wg.Go(func() {
			out, errOut, code := runVigil(t, append([]string{"fleet", "--broker", b.URL()}, args...)...)
			prefix := "vigil"
			if len(args) == 3 {
				prefix = "site-a"
			}
			want := "vigil: fleet: no device under " + prefix + "/ on " + b.URL() + ": neither retained messages nor the roll call on " + prefix + "/fleet/rollcall brought any within "
			if code != 1 || out != "" || !strings.HasPrefix(errOut, want) {
				t.Errorf("vigil fleet %v on an empty broker: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, %q…", args, code, out, errOut, want)
			}
		})
	}
	wg.Wait()
	if _, errOut, code := runVigil(t, "fleet", "--broker", b.URL(), "--once", "--prefix", "site.a"); code != 2 || !strings.Contains(errOut, `--prefix: must not contain "."`) {
		t.Errorf("vigil fleet --prefix site.a: exit %d, %s; want a usage error naming the dot", code, errOut)
	}
}

// buildVersion builds the binary into bin with version stamped as the
// Makefile stamps it (-ldflags -X main.version=…).
func buildVersion(t *testing.T, bin, version string) {
	t.Helper()
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version="+version, "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Errorf("build vigil %s: %v\n%s", version, err, out)
	}
}

// tagDevice adds [device] tags to the config at path.
func tagDevice(t *testing.T, path string, tags ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(tags)
	b = []byte(strings.Replace(string(b), "[device]\n", "[device]\ntags = "+string(q)+"\n", 1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
