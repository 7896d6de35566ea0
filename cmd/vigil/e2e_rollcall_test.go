package main

import (
	"fmt"
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
// SIGKILLed (offline), 5 SIGSTOPped (stale), the rest online. The summary
// counts them all, the filters pick them out, firing devices come first,
// the table fits 80 columns. Then, with every retained message cleared,
// the roll call alone brings back each daemon still running, with its
// info and its problems.
func TestFleetFiftyDaemons(t *testing.T) {
	t.Parallel()
	const n = 50
	b := startMosquitto(t)
	watch := mosquittotest.Subscribe(t, b.URL(), "vigil/+/status", "vigil/+/problem")
	id := func(i int) string { return fmt.Sprintf("f50-%d", i) }
	hot := func(i int) bool { return i%5 == 0 }      // 10 firing
	killed := func(i int) bool { return i%10 == 1 }  // 5 offline
	stopped := func(i int) bool { return i%10 == 2 } // 5 stale
	daemons := make([]*child, n)
	var wg sync.WaitGroup
	for i := range n {
		cfg := fleetDevice(t, id(i), b.URL(), hot(i), "homeassistant = true")
		wg.Go(func() { daemons[i] = startDaemon(t, cfg) })
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
			if ok && d.State == fleet.Online {
				t.Errorf("%s is not running but listed online: %+v", id(i), d)
			}
			continue
		}
		if !ok || d.State != fleet.Online || d.Board != "sim" || d.Interval != fleet.Duration(time.Minute) || (len(d.Firing) > 0) != hot(i) {
			t.Errorf("roll call alone: %s = %+v (listed %v), want online, board sim, interval 1m, firing %v", id(i), d, ok, hot(i))
		}
	}
}

// TestFleetNobody: on a broker with no device, vigil fleet --once says so
// on stderr, naming the broker, the prefix and the roll call, and exits
// 1; an empty fleet is never a silent empty list.
func TestFleetNobody(t *testing.T) {
	t.Parallel()
	b := mosquittotest.Start(t, mosquittotest.Options{})
	for _, args := range [][]string{{"--once"}, {"--once", "--json"}, {"--once", "--prefix", "site-a"}} {
		out, errOut, code := runVigil(t, append([]string{"fleet", "--broker", b.URL()}, args...)...)
		prefix := "vigil"
		if len(args) == 3 {
			prefix = "site-a"
		}
		want := "vigil: fleet: no device under " + prefix + "/ on " + b.URL() + ": neither retained messages nor the roll call on " + prefix + "/fleet/rollcall brought any within "
		if code != 1 || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("vigil fleet %v on an empty broker: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, %q…", args, code, out, errOut, want)
		}
	}
	if _, errOut, code := runVigil(t, "fleet", "--broker", b.URL(), "--once", "--prefix", "site.a"); code != 2 || !strings.Contains(errOut, `--prefix: must not contain "."`) {
		t.Errorf("vigil fleet --prefix site.a: exit %d, %s; want a usage error naming the dot", code, errOut)
	}
}
