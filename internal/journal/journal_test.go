package journal

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestJournalHandlerPriorities(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log.Debug("d")
	log.Info("i")
	log.Warn("w", "rule", "hot")
	log.Error("e")
	log.Log(t.Context(), slog.LevelError+4, "above error")
	sub := log.With("sensor", "t1").WithGroup("g")
	sub.Warn("child", "k", "v")

	want := []string{
		`<7>level=DEBUG msg=d`,
		`<6>level=INFO msg=i`,
		`<4>level=WARN msg=w rule=hot`,
		`<3>level=ERROR msg=e`,
		`<3>level=ERROR+4 msg="above error"`,
		`<4>level=WARN msg=child sensor=t1 g.k=v`,
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		// Drop the time= field, which TextHandler puts first.
		line := got[i]
		if p, rest, ok := strings.Cut(line, "time="); ok {
			_, rest, _ = strings.Cut(rest, " ")
			line = p + rest
		}
		if line != want[i] {
			t.Errorf("line %d = %q, want %q", i, line, want[i])
		}
	}
}

// Lines from many goroutines keep their own priority: no line gets
// another record's prefix, none is torn.
func TestJournalHandlerConcurrent(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if (g+i)%2 == 0 {
					log.Warn("warn", "n", i)
				} else {
					log.With("g", g).Info("info", "n", i)
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, l := range lines {
		ok := strings.HasPrefix(l, "<4>") && strings.Contains(l, "level=WARN msg=warn") ||
			strings.HasPrefix(l, "<6>") && strings.Contains(l, "level=INFO msg=info")
		if !ok {
			t.Fatalf("line with the wrong priority or torn: %q", l)
		}
	}
}
