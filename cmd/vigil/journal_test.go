package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

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
