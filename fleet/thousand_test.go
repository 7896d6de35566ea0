package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"
)

// TestRollCallOnlyDevice: a device seen only through its answers to a
// roll call (status, info, heartbeat and problem state, none retained, as
// on a broker that keeps no retained messages for wildcards) is listed
// like the same device seen through retained messages: online since its
// connection came up, board, version, interval, heartbeat, firing. A
// later answer leaves "online since" alone.
func TestRollCallOnlyDevice(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	info := `{"time":"2026-11-26T11:00:00Z","board":"sim","version":"v1","interval":"1m0s","sample_interval":"30s"}`
	attrs := `{"firing":[{"severity":"critical","source":"rule","rule":"always","summary":"pressure at 1013 hPa","time":"2026-11-26T11:00:01Z"},` +
		`{"severity":"warning","source":"llm","summary":"soil dry","time":"2026-11-26T11:30:00Z"}]}`
	hb := hbJSON(t0.Add(-20*time.Second), time.Minute, "ok")
	answer := func(retained bool) []msg {
		return []msg{
			{"vigil/a/status", "online", retained},
			{"vigil/a/info", info, retained},
			{"vigil/a/heartbeat", hb, retained},
			{"vigil/a/problem/attributes", attrs, retained},
			{"vigil/a/problem", "ON", retained},
		}
	}
	viaRetained, viaRollCall := New("vigil", clock), New("vigil", clock)
	feed(t, viaRetained, answer(true)...)
	feed(t, viaRollCall, msg{"vigil/fleet/rollcall", "", false}) // the view's own question
	feed(t, viaRollCall, answer(false)...)
	want, got := viaRetained.Devices(), viaRollCall.Devices()
	if len(got) != 1 || len(want) != 1 {
		t.Fatalf("devices via roll call = %+v, via retained = %+v; want one each", got, want)
	}
	// The answers were heard now; the retained messages only say when
	// they were published.
	if !got[0].LastSeen.Equal(t0) {
		t.Errorf("last seen via roll call = %v, want now (%v)", got[0].LastSeen, t0)
	}
	got[0].LastSeen, got[0].SilentFor = want[0].LastSeen, want[0].SilentFor
	a, _ := json.Marshal(want[0])
	b, _ := json.Marshal(got[0])
	if !bytes.Equal(a, b) {
		t.Errorf("device via roll call:\n%s\nwant as via retained messages:\n%s", b, a)
	}
	if d := got[0]; d.State != Online || !d.Since.Equal(time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)) || len(d.Firing) != 2 {
		t.Errorf("device via roll call = %+v, want online since 11:00 with two problems firing", d)
	}
	clock.Advance(5 * time.Minute)
	feed(t, viaRollCall, answer(false)...)
	if d := viaRollCall.Devices()[0]; !d.Since.Equal(time.Date(2026, 11, 26, 11, 0, 0, 0, time.UTC)) || len(d.Firing) != 2 {
		t.Errorf("after a second answer: since %v, firing %+v; want still since 11:00, two firing", d.Since, d.Firing)
	}
}

// fleetOf feeds a view n devices in a mix of states: every 10th firing
// (every 20th of those critical), every 7th offline, every 9th stale
// (silent for 10 minutes at interval 1m), the rest online. Ids are
// numbered without padding (dev-1 … dev-n) and arrive in random order.
func fleetOf(t *testing.T, v *View, n int, now time.Time) {
	t.Helper()
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i + 1
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, i := range ids {
		id := fmt.Sprintf("dev-%d", i)
		status, seen := "online", now.Add(-10*time.Second)
		switch {
		case i%7 == 0:
			status = "offline"
		case i%9 == 0:
			seen = now.Add(-10 * time.Minute)
		}
		feed(t, v,
			msg{"vigil/" + id + "/status", status, true},
			msg{"vigil/" + id + "/info", fmt.Sprintf(`{"time":%q,"board":"sim","interval":"1m0s"}`, now.Add(-time.Hour).Format(time.RFC3339)), true},
			msg{"vigil/" + id + "/heartbeat", hbJSON(seen, time.Minute, "skipped"), true})
		if i%10 == 0 {
			sev := "warning"
			if i%20 == 0 {
				sev = "critical"
			}
			feed(t, v, msg{"vigil/" + id + "/problem/attributes",
				fmt.Sprintf(`{"firing":[{"severity":%q,"source":"rule","rule":"too_hot","summary":"hot","time":%q}]}`, sev, seen.Format(time.RFC3339)), true})
		}
	}
}

// TestSummaryAndFilters: the summary counts the whole fleet; --firing,
// --offline and --stale show the devices that match any of them.
func TestSummaryAndFilters(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	fleetOf(t, v, 1000, t0)
	all := v.Devices()
	var want Summary
	want.Devices = 1000
	for i := 1; i <= 1000; i++ {
		switch {
		case i%7 == 0:
			want.Offline++
		case i%9 == 0:
			want.Stale++
		default:
			want.Online++
		}
		if i%10 == 0 {
			want.Firing++
		}
	}
	if got := Summarize(all); got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		f    Filter
		want func(Device) bool
	}{
		{Filter{}, func(Device) bool { return true }},
		{Filter{Firing: true}, func(d Device) bool { return len(d.Firing) > 0 }},
		{Filter{Offline: true}, func(d Device) bool { return d.State == Offline }},
		{Filter{Stale: true}, func(d Device) bool { return d.State == Stale }},
		{Filter{Firing: true, Offline: true}, func(d Device) bool { return len(d.Firing) > 0 || d.State == Offline }},
	} {
		snap := NewSnapshot(t0, all, tc.f)
		var n int
		for _, d := range all {
			if tc.want(d) {
				n++
			}
		}
		if len(snap.Devices) != n || snap.Summary != want {
			t.Errorf("filter %+v: %d devices, summary %+v; want %d, %+v", tc.f, len(snap.Devices), snap.Summary, n, want)
		}
		for _, d := range snap.Devices {
			if !tc.want(d) {
				t.Errorf("filter %+v shows %s (%s, %d firing)", tc.f, d.ID, d.State, len(d.Firing))
			}
		}
	}
}

// TestOrderFiringFirst: firing devices first (critical before warning),
// then offline, stale, unknown and online ones; ids in natural order
// (dev-9 before dev-10) within each; the same order whatever order the
// messages came in.
func TestOrderFiringFirst(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	fleetOf(t, v, 100, t0)
	feed(t, v, msg{"vigil/dev-101/heartbeat", hbJSON(t0, time.Minute, "ok"), true}) // no status yet: unknown
	var got []string
	for _, d := range v.Devices() {
		got = append(got, d.ID)
	}
	rank := func(id string) (int, int) {
		var i int
		fmt.Sscanf(id, "dev-%d", &i)
		switch {
		case i == 101:
			return 5, i
		case i%20 == 0:
			return 0, i
		case i%10 == 0:
			return 1, i
		case i%7 == 0:
			return 2, i
		case i%9 == 0:
			return 3, i
		}
		return 6, i
	}
	want := slices.Clone(got)
	slices.SortFunc(want, func(a, b string) int {
		ra, ia := rank(a)
		rb, ib := rank(b)
		if ra != rb {
			return ra - rb
		}
		return ia - ib
	})
	if !slices.Equal(got, want) {
		t.Errorf("order:\n%v\nwant:\n%v", got, want)
	}
	if got[0] != "dev-20" || got[5] != "dev-10" {
		t.Errorf("first = %s, sixth = %s; want dev-20 (critical) and dev-10 (the first warning)", got[0], got[5])
	}
	w := New("vigil", clock)
	fleetOf(t, w, 100, t0) // same fleet, messages shuffled the same; again:
	feed(t, w, msg{"vigil/dev-101/heartbeat", hbJSON(t0, time.Minute, "ok"), true})
	for i, d := range w.Devices() {
		if d.ID != got[i] {
			t.Fatalf("second view: %s at %d, want %s", d.ID, i, got[i])
		}
	}
}

// TestTableFitsEightyColumns: the table, its summary line and the filter
// line stay within 80 columns for a thousand devices with the longest ids
// (64 characters), long rule names, several firing rules, every state and
// every heartbeat outcome, filtered or not.
func TestTableFitsEightyColumns(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	v := New("vigil", clock)
	fleetOf(t, v, 1000, t0)
	long := strings.Repeat("greenhouse-", 6)[:60] + "0001"
	feed(t, v,
		msg{"vigil/" + long + "/status", "offline", true},
		msg{"vigil/" + long + "/heartbeat", hbJSON(t0.Add(-400*24*time.Hour), time.Minute, "skipped"), true},
		msg{"vigil/" + long + "/problem/attributes", `{"firing":[` +
			`{"severity":"critical","source":"rule","rule":"` + strings.Repeat("r", 64) + `","summary":"` + strings.Repeat("ü", 300) + `","time":"2026-11-26T11:00:00Z"},` +
			`{"severity":"warning","source":"llm","summary":"x","time":"2026-11-26T11:00:00Z"},` +
			`{"severity":"info","source":"system","rule":"llm_unreachable","summary":"x","time":"2026-11-26T11:00:00Z"}]}`, true},
	)
	for _, f := range []Filter{{}, {Firing: true}, {Firing: true, Offline: true, Stale: true}} {
		tab := table(t, v, f)
		lines := strings.Split(strings.TrimSuffix(tab, "\n"), "\n")
		if len(lines) < 3 {
			t.Fatalf("table with filter %+v:\n%s", f, tab)
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("filter %+v: line %d is %d columns wide:\n%s", f, i+1, n, l)
			}
		}
		if !strings.Contains(tab, long[:20]) {
			t.Errorf("filter %+v: the long id is not in the table", f)
		}
	}
	first := strings.SplitN(table(t, v, Filter{}), "\n", 2)[0]
	if want := "1001 devices: 762 online, 143 offline, 96 stale, 101 firing"; !strings.HasPrefix(first, want) {
		t.Errorf("summary line = %q, want it to start %q", first, want)
	}
}
