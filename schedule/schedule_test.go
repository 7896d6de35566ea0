package schedule

import (
	"strings"
	"testing"
	"time"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestNext(t *testing.T) {
	berlin := mustLoc(t, "Europe/Berlin")
	ny := mustLoc(t, "America/New_York")
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		sched []string
		loc   *time.Location
		after string // RFC 3339
		want  []string
	}{
		{"list in order", []string{"19:00", "07:30", "12:00"}, berlin, "2026-06-01T06:00:00Z",
			[]string{"2026-06-01T10:00:00Z", "2026-06-01T17:00:00Z", "2026-06-02T05:30:00Z"}},
		{"strictly after", []string{"07:30"}, berlin, "2026-06-01T05:30:00Z",
			[]string{"2026-06-02T05:30:00Z"}},
		{"midnight", []string{"00:00"}, time.UTC, "2026-12-31T23:59:59Z",
			[]string{"2027-01-01T00:00:00Z", "2027-01-02T00:00:00Z"}},
		// 2026-03-29 in Berlin: 02:00 CET → 03:00 CEST. 02:30 runs at 03:00.
		{"spring forward: gap runs at its end", []string{"02:30", "07:30"}, berlin, "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-29T05:30:00Z", "2026-03-30T00:30:00Z"}},
		{"spring forward: two times in the gap run once", []string{"02:15", "02:45"}, berlin, "2026-03-28T23:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:15:00Z"}},
		{"spring forward: 03:00 and the gap run once", []string{"02:30", "03:00"}, berlin, "2026-03-28T23:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		// 2026-10-25 in Berlin: 03:00 CEST → 02:00 CET. 02:30 runs once, at its first occurrence.
		{"fall back: first occurrence only", []string{"02:30"}, berlin, "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"fall back: from inside the repeated hour", []string{"02:30", "02:50"}, berlin, "2026-10-25T01:10:00Z", // 02:10 CET, second pass
			[]string{"2026-10-26T01:30:00Z"}},
		{"fall back: New York 01:30", []string{"01:30"}, ny, "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"cron weekdays", []string{"30 7 * * 1-5"}, berlin, "2026-06-05T06:00:00Z", // a Friday, 08:00 local
			[]string{"2026-06-08T05:30:00Z", "2026-06-09T05:30:00Z"}},
		{"cron spring forward runs at the gap's end", []string{"30 2 * * *"}, berlin, "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"cron fall back runs once", []string{"30 2 * * *"}, berlin, "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Each clock face runs once: the repeated hour's second pass has no
		// runs (02:30 CEST, then 03:00 CET).
		{"cron every 30 minutes over fall back", []string{"*/30 * * * *"}, berlin, "2026-10-25T00:10:00Z", // 02:10 CEST
			[]string{"2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.sched)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.sched, err)
			}
			at := utc(tt.after)
			for i, w := range tt.want {
				got := s.Next(at, tt.loc)
				if !got.Equal(utc(w)) {
					t.Fatalf("Next #%d after %s = %s (%s), want %s", i+1, at.UTC().Format(time.RFC3339),
						got.UTC().Format(time.RFC3339), got.In(tt.loc).Format("15:04 MST"), w)
				}
				at = got
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"07:30", "25:00"}, `schedule[1]: "25:00" is not a time of day (want "HH:MM", 24-hour clock)`},
		{[]string{"7:3"}, `schedule[0]: "7:3" is not a time of day`},
		{[]string{"07:60"}, `schedule[0]: "07:60" is not a time of day`},
		{[]string{"07:30", "12:00", "07:30"}, `schedule[2]: "07:30" is listed twice (also schedule[0])`},
		{[]string{"07:30", "30 7 * * *"}, `schedule[1]: "30 7 * * *" looks like a cron expression`},
		{[]string{"30 7 * * *", "12:00"}, `schedule[0]: a cron expression must be the only element`},
		{[]string{"61 7 * * *"}, `schedule[0]: "61 7 * * *" is not a cron expression`},
		{[]string{"30 7 * *"}, `expected exactly 5 fields`},
		{[]string{"0 30 7 * * *"}, `is not a cron expression`},
		{[]string{"@daily"}, `descriptors like @daily are not allowed`},
		{[]string{"TZ=UTC 30 7 * * *"}, `a time zone prefix is not allowed`},
		{[]string{"0 0 30 2 *"}, `never matches a date`},
		{nil, `is empty`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"07:30", "30 7 * * 1-5", "*/5 * * * *", "25:00", "0 0 30 2 *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := Parse([]string{v})
		if err != nil {
			return
		}
		at := time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)
		loc, _ := time.LoadLocation("Europe/Berlin")
		for range 5 {
			n := s.Next(at, loc)
			if n.IsZero() {
				return
			}
			if !n.After(at) {
				t.Fatalf("Parse(%q).Next(%s) = %s, not after", v, at, n)
			}
			at = n
		}
	})
}

func TestLongestGap(t *testing.T) {
	for _, tc := range []struct {
		sched []string
		want  time.Duration
	}{
		{[]string{"07:30", "12:00", "19:00"}, 12*time.Hour + 30*time.Minute},
		{[]string{"12:00"}, 24 * time.Hour},
		{[]string{"*/15 * * * *"}, 15 * time.Minute},
		{[]string{"0 9 * * 1-5"}, 72 * time.Hour}, // Friday 09:00 to Monday 09:00
	} {
		s, err := Parse(tc.sched)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.LongestGap(); got != tc.want {
			t.Errorf("LongestGap(%q) = %s, want %s", tc.sched, got, tc.want)
		}
	}
}
