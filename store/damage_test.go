package store

// Structured damage of a real state file with branch pages: cycles, double
// references, counts and overflows beyond the page, meta pages that point
// beyond the file with valid checksums, truncation and swapped pages. Each
// damaged file is opened in a child process with a deadline, so a hang or a
// fatal fault (neither of which recover() can catch) is a failure of this
// test, not of the test binary.
//
// The layout constants below mirror bbolt v1.5.0 internal/common/page.go and
// meta.go; the test needs them to aim its damage.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Page layout (bbolt internal/common/page.go): a 16-byte header (id u64,
// flags u16, count u16, overflow u32), then 16-byte elements.
const (
	tHdr        = 16
	tElem       = 16
	tBranchFlag = 0x01
	tLeafFlag   = 0x02
)

// fileLayout is what a test needs to aim its damage at a real file.
type fileLayout struct {
	ps       int64  // page size
	rootPage int64  // the root bucket's page (in the meta page bbolt uses)
	branch   int64  // a bucket's root page that is a branch page
	child    int64  // that branch's first child
	bucket   string // the bucket whose root is branch
	entryOff int64  // file offset of that bucket's value (its root pgid) in rootPage
	otherOff int64  // file offset of another non-inline bucket's value in rootPage
	hwm      int64
}

func readLayout(t testing.TB, b []byte) fileLayout {
	t.Helper()
	l := fileLayout{ps: int64(ne.Uint32(b[tHdr+8:]))}
	m := tHdr // meta0
	if ne.Uint64(b[l.ps+tHdr+48:]) > ne.Uint64(b[tHdr+48:]) {
		m = int(l.ps) + tHdr
	}
	l.rootPage = int64(ne.Uint64(b[m+16:]))
	l.hwm = int64(ne.Uint64(b[m+40:]))
	p := b[l.rootPage*l.ps:]
	if ne.Uint16(p[8:]) != tLeafFlag {
		t.Fatalf("root bucket page %d is not a leaf", l.rootPage)
	}
	for i := range int(ne.Uint16(p[10:])) {
		e := p[tHdr+i*tElem:]
		flags, pos, ksize := ne.Uint32(e), ne.Uint32(e[4:]), ne.Uint32(e[8:])
		if flags&1 == 0 {
			continue
		}
		off := int64(tHdr+i*tElem) + int64(pos) + int64(ksize) // value, relative to the page
		root := int64(ne.Uint64(p[off:]))
		if root == 0 {
			continue
		}
		if l.branch == 0 && ne.Uint16(b[root*l.ps+8:]) == tBranchFlag {
			l.branch, l.bucket, l.entryOff = root, string(p[off-int64(ksize):off]), l.rootPage*l.ps+off
			l.child = int64(ne.Uint64(b[root*l.ps+tHdr+8:]))
		} else if l.otherOff == 0 {
			l.otherOff = l.rootPage*l.ps + off
		}
	}
	if l.branch == 0 || l.otherOff == 0 {
		t.Fatalf("no bucket with a branch root page and another on its own page: %+v; grow the file", l)
	}
	return l
}

// branchyFile writes a real state file through the store's own API, enough
// that buckets have branch pages, and returns its bytes.
func branchyFile(t testing.TB) []byte {
	t.Helper()
	db := openTemp(t, Options{})
	for i := range 60 {
		update(t, db, func(tx *Tx) error { return churn(tx, i) })
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put64(b []byte, off int64, v uint64) { ne.PutUint64(b[off:], v) }

// setMetas rewrites both meta pages with fn and recomputes their checksums
// as bbolt does (FNV-64a over the meta up to its checksum).
func setMetas(b []byte, ps int64, fn func(meta []byte)) {
	for _, at := range []int64{tHdr, ps + tHdr} {
		m := b[at : at+64]
		fn(m)
		h := fnv.New64a()
		h.Write(m[:56])
		ne.PutUint64(m[56:], h.Sum64())
	}
}

// damageCase is one structured damage of a file with the given layout.
type damageCase struct {
	name   string
	damage func(b []byte, l fileLayout) []byte
}

func damageCases() []damageCase {
	cases := []damageCase{
		{"branch element points at its own page", func(b []byte, l fileLayout) []byte {
			put64(b, l.branch*l.ps+tHdr+8, uint64(l.branch))
			return b
		}},
		{"last branch element points at its own page", func(b []byte, l fileLayout) []byte {
			n := int64(ne.Uint16(b[l.branch*l.ps+10:]))
			put64(b, l.branch*l.ps+tHdr+(n-1)*tElem+8, uint64(l.branch))
			return b
		}},
		{"branch element points at an ancestor", func(b []byte, l fileLayout) []byte {
			put64(b, l.branch*l.ps+tHdr+8, uint64(l.rootPage))
			return b
		}},
		{"bucket root points back up", func(b []byte, l fileLayout) []byte {
			put64(b, l.entryOff, uint64(l.rootPage))
			return b
		}},
		{"two buckets share a root", func(b []byte, l fileLayout) []byte {
			put64(b, l.otherOff, uint64(l.branch))
			return b
		}},
		{"huge overflow in a branch page", func(b []byte, l fileLayout) []byte {
			ne.PutUint32(b[l.branch*l.ps+12:], 0xFFFFFFFF)
			return b
		}},
		{"huge overflow in a leaf page", func(b []byte, l fileLayout) []byte {
			ne.PutUint32(b[l.child*l.ps+12:], 0x7FFFFFFF)
			return b
		}},
		{"huge element count", func(b []byte, l fileLayout) []byte {
			ne.PutUint16(b[l.branch*l.ps+10:], 0xFFFF)
			return b
		}},
		{"meta roots beyond the file", func(b []byte, l fileLayout) []byte {
			setMetas(b, l.ps, func(m []byte) { put64(m, 16, 1<<20) })
			return b
		}},
		{"meta roots far beyond the file", func(b []byte, l fileLayout) []byte {
			setMetas(b, l.ps, func(m []byte) { put64(m, 16, 1<<40); put64(m, 40, 1<<41) })
			return b
		}},
		{"meta free lists beyond the file", func(b []byte, l fileLayout) []byte {
			setMetas(b, l.ps, func(m []byte) { put64(m, 32, 1<<20) })
			return b
		}},
		{"meta high-water mark beyond the file", func(b []byte, l fileLayout) []byte {
			setMetas(b, l.ps, func(m []byte) { put64(m, 40, uint64(l.hwm)+1000) })
			return b
		}},
		{"truncated through a branch page", func(b []byte, l fileLayout) []byte {
			return b[:l.branch*l.ps+l.ps/2]
		}},
		{"branch and child swapped", func(b []byte, l fileLayout) []byte {
			x, y := b[l.branch*l.ps:(l.branch+1)*l.ps], b[l.child*l.ps:(l.child+1)*l.ps]
			tmp := bytes.Clone(x)
			copy(x, y)
			copy(y, tmp)
			return b
		}},
		{"branch and child swapped, ids fixed", func(b []byte, l fileLayout) []byte {
			x, y := b[l.branch*l.ps:(l.branch+1)*l.ps], b[l.child*l.ps:(l.child+1)*l.ps]
			tmp := bytes.Clone(x)
			copy(x, y)
			copy(y, tmp)
			put64(b, l.branch*l.ps, uint64(l.branch))
			put64(b, l.child*l.ps, uint64(l.child))
			return b
		}},
	}
	for seed := range uint64(4) {
		cases = append(cases, damageCase{fmt.Sprintf("random bytes in a branch page (seed %d)", seed), func(b []byte, l fileLayout) []byte {
			rng := rand.New(rand.NewPCG(seed, 17))
			p := b[l.branch*l.ps : (l.branch+1)*l.ps]
			for i := 10; i < len(p); i++ { // keep id and flags, so bbolt reads it as a branch
				p[i] = byte(rng.Uint32())
			}
			if seed%2 == 1 { // a plausible count and overflow
				ne.PutUint16(p[10:], uint16(2+rng.IntN(40)))
				ne.PutUint32(p[12:], 0)
			}
			return b
		}})
	}
	return cases
}

// childResult is what the child process reports.
type childResult struct {
	ReadOnly string // "ok", "corrupt" or another error
	Lost     bool
	MovedTo  string
	Cause    string
	Err      string // an error of the open with Reset, or of using the file after it
}

const damagedEnv = "VIGIL_STORE_DAMAGED"

// TestDamagedChild is the child process of TestOpenDamaged: it opens the
// file named by $VIGIL_STORE_DAMAGED and prints what happened as JSON.
func TestDamagedChild(t *testing.T) {
	path := os.Getenv(damagedEnv)
	if path == "" {
		t.Skip("child of TestOpenDamaged")
	}
	out, _ := json.Marshal(openDamaged(path))
	fmt.Printf("\nRESULT %s\n", out)
}

// openDamaged opens the file at path read-only, then with Reset, and uses
// it.
func openDamaged(path string) childResult {
	var r childResult
	db, err := Open(path, Options{ReadOnly: true})
	switch {
	case err == nil:
		r.ReadOnly = "ok"
		db.Close()
	case errors.Is(err, ErrCorrupt):
		r.ReadOnly = "corrupt"
	default:
		r.ReadOnly = err.Error()
	}
	db, err = Open(path, Options{Reset: true, Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	if err == nil {
		var lost Lost
		lost, r.Lost = db.TakeLost()
		r.MovedTo, r.Cause = lost.MovedTo, lost.Cause
		err = db.Update(func(tx *Tx) error { return churn(tx, 99) })
		if err == nil {
			err = db.Check()
		}
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// TestOpenDamaged: every structured damage of a real file with branch pages
// is found, read-only and with Reset, in bounded time; with Reset the file
// is moved aside, state_lost is reported, and the fresh file works.
func TestOpenDamaged(t *testing.T) {
	src := branchyFile(t)
	l := readLayout(t, src)
	t.Logf("page size %d, %d pages, bucket %q has branch root %d (first child %d)", l.ps, l.hwm, l.bucket, l.branch, l.child)
	for _, c := range damageCases() {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vigil.db")
			if err := os.WriteFile(path, c.damage(bytes.Clone(src), l), 0o600); err != nil {
				t.Fatal(err)
			}
			r := runDamagedChild(t, path)
			if r.ReadOnly != "corrupt" {
				t.Errorf("read-only Open: %s, want ErrCorrupt", r.ReadOnly)
			}
			if r.Err != "" || !r.Lost || r.MovedTo == "" {
				t.Fatalf("Open with Reset: %+v, want the file moved aside, state lost reported and a working fresh file", r)
			}
			t.Logf("cause: %s", r.Cause)
			if _, err := os.Stat(r.MovedTo); err != nil {
				t.Errorf("moved-aside file: %v", err)
			}
		})
	}
}

// childDeadline is far beyond what an open takes (milliseconds): it only
// turns a hang into a failure.
const childDeadline = 20 * time.Second

func runDamagedChild(t *testing.T, path string) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), childDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDamagedChild$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), damagedEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(err, syscall.ENOEXEC) {
		// Under qemu-user (make test-qemu) the test binary cannot start
		// another: open in this process, where a hang still fails the
		// test, but a fatal fault ends the binary.
		return openDamagedHere(t, path)
	}
	if ctx.Err() != nil {
		t.Fatalf("opening the damaged file did not finish within %s (killed)", childDeadline)
	}
	_, js, ok := bytes.Cut(out.Bytes(), []byte("\nRESULT "))
	if err != nil || !ok {
		t.Fatalf("child: %v\n%s", err, tail(out.Bytes(), 1500))
	}
	js, _, _ = bytes.Cut(js, []byte("\n"))
	var r childResult
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("child result %q: %v", js, err)
	}
	return r
}

func openDamagedHere(t *testing.T, path string) childResult {
	t.Helper()
	done := make(chan childResult, 1)
	go func() { done <- openDamaged(path) }()
	select {
	case r := <-done:
		return r
	case <-time.After(childDeadline):
		t.Fatalf("opening the damaged file did not finish within %s", childDeadline)
		return childResult{}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
