package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/vigil-iot/vigil/internal/damagetest"
)

// patches encodes where damaged differs from base as a list of
// (offset u32, length u8, bytes) records: the fuzzer's input format.
func patches(base, damaged []byte) []byte {
	var out []byte
	n := min(len(base), len(damaged))
	for i := 0; i < n; {
		if base[i] == damaged[i] {
			i++
			continue
		}
		j := i
		for j < n && j-i < 255 && base[j] != damaged[j] {
			j++
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(i))
		out = append(out, byte(j-i))
		out = append(out, damaged[i:j]...)
		i = j
	}
	return out
}

// applyPatches writes the records of p over b (offsets wrap at its length)
// and cuts it to size when size is below its length.
func applyPatches(b, p []byte, size uint32) []byte {
	for len(p) >= 5 && len(b) > 0 {
		off := int(binary.LittleEndian.Uint32(p) % uint32(len(b)))
		n := int(p[4])
		p = p[5:]
		n = min(n, len(p))
		copy(b[off:], p[:n])
		p = p[n:]
	}
	if int(size) < len(b) {
		b = b[:size]
	}
	return b
}

// FuzzPages damages a real state file with branch pages, seeded with the
// structured damages of TestOpenDamaged (cycles, double references, huge
// counts and overflows, meta pages beyond the file with valid checksums,
// truncation, swapped pages): opening it must end, with the file either
// sound (or of a newer schema) or ErrCorrupt, and never a hang or a crash.
// Corpus entries are patches of the base file the test builds: one found
// by the fuzzer replays only as long as the store writes the same pages.
func FuzzPages(f *testing.F) {
	base := branchyFile(f)
	l := damagetest.ReadLayout(f, base)
	for _, c := range damagetest.Cases() {
		d := c.Damage(bytes.Clone(base), l)
		f.Add(patches(base, d), uint32(len(d)))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, p []byte, size uint32) {
		path := filepath.Join(dir, "vigil.db")
		if err := os.WriteFile(path, applyPatches(bytes.Clone(base), p, size), 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSchema) { // a patched schema version is no damage
				t.Fatalf("Open = %v, want nil, ErrCorrupt or ErrSchema", err)
			}
			return
		}
		if err := db.Check(); err != nil {
			t.Errorf("Check after a clean Open = %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheckPagesSound: the check passes a sound file, however it was
// written, and a fresh one.
func TestCheckPagesSound(t *testing.T) {
	for _, b := range [][]byte{branchyFile(t), func() []byte {
		db := openTemp(t, Options{})
		db.Close()
		b, err := os.ReadFile(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}()} {
		if err := checkPages(bytes.NewReader(b), int64(len(b))); err != nil {
			t.Errorf("checkPages(sound file of %d bytes) = %v", len(b), err)
		}
	}
}

// TestOpenMalformedSchema: a schema version that does not decode is damage
// (found by FuzzPages): Open with Reset moves the file aside instead of
// refusing to start for ever.
func TestOpenMalformedSchema(t *testing.T) {
	db := openTemp(t, Options{})
	if err := db.tx("damage", func(b *bolt.DB) error {
		return b.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(schemaKey, []byte("1\x00")) })
	}); err != nil {
		t.Fatal(err)
	}
	path := db.Path()
	db.Close()
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read-only Open = %v, want ErrCorrupt", err)
	}
	db, err := Open(path, Options{Reset: true, Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatalf("Open with Reset = %v, want the file moved aside", err)
	}
	defer db.Close()
	if _, ok := db.TakeLost(); !ok {
		t.Error("no state lost reported")
	}
}
