package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestJournalHandlerPriorities(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(newJournalHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
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
	log := slog.New(newJournalHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
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

func TestToJournal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	mine := fmt.Sprintf("%d:%d", st.Dev, st.Ino)

	for _, c := range []struct {
		name, stream string
		w            io.Writer
		want         bool
	}{
		{"stderr is the journal stream", mine, f, true},
		{"no JOURNAL_STREAM", "", f, false},
		{"another inode (stderr redirected)", fmt.Sprintf("%d:%d", st.Dev, st.Ino+1), f, false},
		{"another device", fmt.Sprintf("%d:%d", st.Dev+1, st.Ino), f, false},
		{"garbage", "journal", f, false},
		{"not a file", mine, &bytes.Buffer{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("JOURNAL_STREAM", c.stream)
			if got := toJournal(c.w); got != c.want {
				t.Errorf("toJournal with JOURNAL_STREAM=%q = %v, want %v", c.stream, got, c.want)
			}
		})
	}

	// The daemon's logger: prefixed on the journal stream, plain elsewhere.
	t.Setenv("JOURNAL_STREAM", mine)
	(&env{stderr: f}).logger().Warn("on the journal")
	t.Setenv("JOURNAL_STREAM", "")
	(&env{stderr: f}).logger().Warn("on a terminal")
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `<4>level=WARN msg="on the journal"` || !strings.HasPrefix(lines[1], "time=") {
		t.Errorf("logger output:\n%s\nwant a <4> line without time=, then a plain line with time=", b)
	}
}
