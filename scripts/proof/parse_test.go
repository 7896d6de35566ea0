package main

import (
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
}

func TestDecodeCorpus(t *testing.T) {
	got := decodeCorpus([]byte("go test fuzz v1\nstring(\"[device]\\nid = \\\"x\\\"\")\n"))
	if string(got) != "[device]\nid = \"x\"" {
		t.Errorf("decodeCorpus = %q", got)
	}
}

func TestMemUseUnder(t *testing.T) {
	for _, tc := range []struct {
		m    memUse
		want bool
	}{
		{memUse{rss: 9765, hwm: 9765}, true}, // 9,999,360 B
		{memUse{rss: 9766, hwm: 9765}, false},
		{memUse{rss: 9000, hwm: 9766}, false}, // the high-water mark counts too
	} {
		if got := tc.m.under(targetRSSBytes); got != tc.want {
			t.Errorf("%+v.under(10 MB) = %v, want %v", tc.m, got, tc.want)
		}
	}
}
