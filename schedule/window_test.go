package schedule

import (
	"testing"
	"time"
)

func TestWindow(t *testing.T) {
	loc := mustLoc(t, "Europe/Berlin")
	at := func(m time.Month, d, h, min int) time.Time { return time.Date(2026, m, d, h, min, 0, 0, loc) }
	night := Window{Start: 22 * time.Hour, End: 7 * time.Hour}
	day := Window{Start: 13 * time.Hour, End: 24 * time.Hour}
	tests := []struct {
		w    Window
		t    time.Time
		in   bool
		ends time.Time
	}{
		{night, at(1, 10, 21, 59), false, time.Time{}},
		{night, at(1, 10, 22, 0), true, at(1, 11, 7, 0)},
		{night, at(1, 11, 3, 0), true, at(1, 11, 7, 0)},
		{night, at(1, 11, 7, 0), false, time.Time{}},
		{night, at(3, 28, 23, 0), true, at(3, 29, 7, 0)}, // the night the clocks go forward
		{day, at(1, 10, 23, 59), true, at(1, 11, 0, 0)},
		{day, at(1, 10, 12, 59), false, time.Time{}},
	}
	for _, tt := range tests {
		if got := tt.w.Contains(tt.t, loc); got != tt.in {
			t.Errorf("%s.Contains(%v) = %v, want %v", tt.w, tt.t, got, tt.in)
		}
		if tt.in {
			if got := tt.w.EndAfter(tt.t, loc); !got.Equal(tt.ends) {
				t.Errorf("%s.EndAfter(%v) = %v, want %v", tt.w, tt.t, got, tt.ends)
			}
		}
	}
	if got := at(3, 29, 7, 0).Sub(at(3, 28, 23, 0)); got != 7*time.Hour {
		t.Errorf("DST night: %v, want 7h (the check above is meaningful)", got)
	}
}

func TestParseWindow(t *testing.T) {
	day := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	tests := []struct {
		window string
		t      time.Time
		want   bool
	}{
		{"07:00-22:00", at(7, 0), true},
		{"07:00-22:00", at(6, 59), false},
		{"07:00-22:00", at(21, 59), true},
		{"07:00-22:00", at(22, 0), false},
		{"22:00-06:00", at(23, 0), true},
		{"22:00-06:00", at(3, 0), true},
		{"22:00-06:00", at(6, 0), false},
		{"22:00-06:00", at(12, 0), false},
		{"18:00-24:00", at(23, 59), true},
		{"18:00-24:00", at(0, 0), false},
		{"00:00-24:00", at(12, 0), true},
	}
	for _, tt := range tests {
		w, err := ParseWindow(tt.window)
		if err != nil {
			t.Fatalf("ParseWindow(%q): %v", tt.window, err)
		}
		if got := w.Contains(tt.t, time.UTC); got != tt.want {
			t.Errorf("%s.Contains(%s) = %v, want %v", tt.window, tt.t.Format("15:04"), got, tt.want)
		}
		if w.String() != tt.window {
			t.Errorf("ParseWindow(%q).String() = %q", tt.window, w.String())
		}
	}
	if _, err := ParseWindow("24:00-06:00"); err == nil {
		t.Error("ParseWindow(24:00-06:00): want error")
	}
}
