package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseStrace(t *testing.T) {
	const out = `28289 1795324679.022541 fdatasync(5)    = 0
28290 1795324679.022600 pwrite64(5, ""..., 4096, 8192 <unfinished ...>
28289 1795324679.022700 fdatasync(5 <unfinished ...>
28290 1795324679.022800 <... pwrite64 resumed>) = 4096
28289 1795324679.023192 <... fdatasync resumed>) = 0
28291 1795324679.1 +++ exited with 0 +++
28292 1795324680.5 epoll_pwait(6, [], 128, 4026, NULL, 0) = 0
`
	evs, err := parseStrace(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.name+"="+itoa(e.ret))
	}
	want := "fdatasync=0 pwrite64=4096 fdatasync=0 epoll_pwait=0"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("parseStrace = %q, want %q", s, want)
	}
	if n, gap := bursts(evs, 50*time.Millisecond); n != 2 || gap < time.Second {
		t.Errorf("bursts = %d, %v; want 2 wakeups about 1.5 s apart", n, gap)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestParseStatTicks(t *testing.T) {
	stat := "1234 (vigil (odd) name) S 1 1234 1234 0 -1 4194560 500 0 0 0 17 4 0 0 20 0 8 0 100 0 0"
	got, err := parseStatTicks(stat)
	if err != nil || got != 21 {
		t.Errorf("parseStatTicks = %d, %v; want 21", got, err)
	}
	if _, err := parseStatTicks("garbage"); err == nil {
		t.Error("parseStatTicks(garbage) did not fail")
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tvigil\nVmHWM:\t   10792 kB\nVmRSS:\t   10500 kB\nvoluntary_ctxt_switches:\t42\n"
	for field, want := range map[string]int64{"VmRSS": 10500, "VmHWM": 10792, "voluntary_ctxt_switches": 42} {
		if got, err := parseStatusKB(status, field); err != nil || got != want {
			t.Errorf("parseStatusKB(%s) = %d, %v; want %d", field, got, err, want)
		}
	}
	if _, err := parseStatusKB(status, "VmSwap"); err == nil {
		t.Error("missing field did not fail")
	}
}

func TestParseBenchAndMarkers(t *testing.T) {
	out := "goos: linux\nBenchmarkHeartbeat-2   \t     300\t   1811816 ns/op\t         1.000 commits/op\t   1182230 cpu-ns/op\t   55273 B/op\t     536 allocs/op\nBenchmarkThink/openai-2 100 5000 ns/op\nPASS\n"
	b := parseBench(out)
	if b["BenchmarkHeartbeat"]["cpu-ns/op"] != 1182230 || b["BenchmarkHeartbeat"]["allocs/op"] != 536 || b["BenchmarkThink/openai"]["ns/op"] != 5000 {
		t.Errorf("parseBench = %v", b)
	}
	m := markerLines("    x_test.go:9: SOAK days=3 size_final=1048576\nother\n", "SOAK")
	if len(m) != 1 || m[0]["days"] != "3" || m[0]["size_final"] != "1048576" {
		t.Errorf("markerLines = %v", m)
	}
	m = markerLines("    x_test.go:9: WEEK gate=unusual event_calls=\"03:00 a.b=28.00; 03:30 \\\"q\\\"\" reasons=\n", "WEEK")
	if len(m) != 1 || len(m[0]) != 3 || m[0]["gate"] != "unusual" || m[0]["event_calls"] != `03:00 a.b=28.00; 03:30 "q"` || m[0]["reasons"] != "" {
		t.Errorf("markerLines with quoted values = %v", m)
	}
}

func TestDecodeCorpus(t *testing.T) {
	got := decodeCorpus([]byte("go test fuzz v1\nstring(\"[device]\\nid = \\\"x\\\"\")\n"))
	if string(got) != "[device]\nid = \"x\"" {
		t.Errorf("decodeCorpus = %q", got)
	}
}

// testdata/status and testdata/smaps_rollup were captured from
// /proc/self of a cat(1) on Linux 6.18.
func TestParseMem(t *testing.T) {
	status := readTestdata(t, "status")
	rollup := readTestdata(t, "smaps_rollup")
	// An older kernel (before 5.7) has no Pss_Anon, Pss_File, Pss_Shmem.
	var old []string
	for _, line := range strings.Split(rollup, "\n") {
		if !strings.HasPrefix(line, "Pss_") {
			old = append(old, line)
		}
	}
	oldRollup := strings.Join(old, "\n")

	for _, tc := range []struct {
		name           string
		status, rollup string
		want           memUse
		wantErr        string
	}{
		{"linux 6.18", status, rollup, memUse{rss: 1704, hwm: 1704, anon: 112, file: 1592, pss: 361, pssAnon: 112, dirty: 112, hasPssAnon: true}, ""},
		{"no Pss_Anon", status, oldRollup, memUse{rss: 1704, hwm: 1704, anon: 112, file: 1592, pss: 361, dirty: 112}, ""},
		{"rollup missing", status, "", memUse{}, "smaps_rollup: no Pss line"},
		{"status without RssAnon", strings.ReplaceAll(status, "RssAnon:", "RssAnonX:"), rollup, memUse{}, "status: no RssAnon line"},
		{"bad number", status, strings.Replace(rollup, "Private_Dirty:       112 kB", "Private_Dirty: lots", 1), memUse{}, "smaps_rollup: Private_Dirty: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMem(tc.status, tc.rollup)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseMem error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("parseMem = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadMemSelf(t *testing.T) {
	m, err := readMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.anon <= 0 || m.rss < m.anon+m.file || m.pss <= 0 || m.dirty <= 0 {
		t.Errorf("readMem(self) = %+v: want RssAnon > 0, VmRSS >= RssAnon + RssFile, Pss and Private_Dirty > 0", m)
	}
}

func TestMemUseAnonUnder(t *testing.T) {
	for _, tc := range []struct {
		m    memUse
		want bool
	}{
		{memUse{anon: 3071, rss: 9000}, true}, // VmRSS is not targeted
		{memUse{anon: 3072}, false},           // exactly 3 MiB is not under it
		{memUse{anon: 4000, hwm: 100}, false},
	} {
		if got := tc.m.anonUnder(targetIdleAnon); got != tc.want {
			t.Errorf("%+v.anonUnder(3 MiB) = %v, want %v", tc.m, got, tc.want)
		}
	}
}

func TestGCCounts(t *testing.T) {
	log := `time=2026-11-22T08:00:00Z level=INFO msg="vigil starting"
gc 1 @0.012s 1%: 0.011+0.40+0.003 ms clock, 0.011+0.10/0.2/0+0.003 ms cpu, 3->3->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 1 P
gc 2 @15.003s 0%: 0.020+0.51+0.002 ms clock, 0.020+0/0.1/0+0.002 ms cpu, 1->1->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 1 P (forced)
time=2026-11-22T08:00:15Z level=INFO msg=heartbeat outcome=ok reason="gc 3 things"
`
	if all, forced := gcCounts(log); all != 2 || forced != 1 {
		t.Errorf("gcCounts = %d, %d; want 2, 1", all, forced)
	}
}

func TestPickKnobs(t *testing.T) {
	for _, tc := range []struct {
		list, want, wantErr string
	}{
		{"shipped,runtime,gomemlimit,gogc50", "shipped runtime gomemlimit gogc50", ""},
		{"gogc50", "shipped gogc50", ""}, // the shipped one always runs, first
		{"gogc50, gogc50,shipped", "shipped gogc50", ""},
		{"gogc25", "", `unknown knob "gogc25"`},
	} {
		got, err := pickKnobs(tc.list)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("pickKnobs(%q) error = %v, want %q", tc.list, err, tc.wantErr)
			}
			continue
		}
		var names []string
		for _, k := range got {
			names = append(names, k.name)
		}
		if s := strings.Join(names, " "); err != nil || s != tc.want {
			t.Errorf("pickKnobs(%q) = %q, %v; want %q", tc.list, s, err, tc.want)
		}
	}
}

func TestKnobFinding(t *testing.T) {
	knobs := memKnobs[:3]
	lr := func(anon int64, cpu time.Duration) longResult {
		return longResult{mem: memUse{anon: anon}, cpu: cpu}
	}
	for _, tc := range []struct {
		name string
		lrs  []longResult
		want string
	}{
		{"lowest RssAnon", []longResult{lr(2500, time.Second), lr(3500, time.Second), lr(2000, 1400*time.Millisecond)}, "favour **gomemlimit**"},
		{"tie goes to less CPU", []longResult{lr(2048, time.Second), lr(2100, time.Second), lr(2000, 1400*time.Millisecond)}, "favour **shipped**"},
		{"a knob that burns CPU is out", []longResult{lr(2500, 57*time.Millisecond), lr(2900, 48*time.Millisecond), lr(2400, 723*time.Millisecond)}, "favour **shipped**"},
		{"the shipped one can lose", []longResult{lr(2500, 57*time.Millisecond), lr(2300, 60*time.Millisecond), lr(2400, 723*time.Millisecond)}, "favour **runtime**"},
	} {
		if got := knobFinding(knobs, tc.lrs); !strings.Contains(got, tc.want) {
			t.Errorf("%s: knobFinding = %q, want it to contain %q", tc.name, got, tc.want)
		}
	}
}
