// Package damagetest aims structured damage at a real bbolt state file:
// cycles, double references, counts and overflows beyond the page, meta
// pages that point beyond the file with valid checksums, truncation and
// swapped pages. The store's own tests open each damaged file, and the
// end-to-end tests run vigil on it. It is test support only: nothing
// outside _test.go files imports it.
//
// The layout constants mirror bbolt v1.5.0 internal/common/page.go and
// meta.go; the damage needs them to aim.
package damagetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

var ne = binary.NativeEndian

// Page layout (bbolt internal/common/page.go): a 16-byte header (id u64,
// flags u16, count u16, overflow u32), then 16-byte elements.
const (
	tHdr        = 16
	tElem       = 16
	tBranchFlag = 0x01
	tLeafFlag   = 0x02
)

// Layout is what a test needs to aim its damage at a real file.
type Layout struct {
	PS       int64  // page size
	RootPage int64  // the root bucket's page (in the meta page bbolt uses)
	Branch   int64  // a bucket's root page that is a branch page
	Child    int64  // that branch's first child
	Bucket   string // the bucket whose root is branch
	EntryOff int64  // file offset of that bucket's value (its root pgid) in rootPage
	OtherOff int64  // file offset of another non-inline bucket's value in rootPage
	HWM      int64
}

// ReadLayout finds, in a file written with enough data that a bucket has
// a branch root page, the pages the damage aims at.
func ReadLayout(t testing.TB, b []byte) Layout {
	t.Helper()
	l := Layout{PS: int64(ne.Uint32(b[tHdr+8:]))}
	m := tHdr // meta0
	if ne.Uint64(b[l.PS+tHdr+48:]) > ne.Uint64(b[tHdr+48:]) {
		m = int(l.PS) + tHdr
	}
	l.RootPage = int64(ne.Uint64(b[m+16:]))
	l.HWM = int64(ne.Uint64(b[m+40:]))
	p := b[l.RootPage*l.PS:]
	if ne.Uint16(p[8:]) != tLeafFlag {
		t.Fatalf("root bucket page %d is not a leaf", l.RootPage)
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
		if l.Branch == 0 && ne.Uint16(b[root*l.PS+8:]) == tBranchFlag {
			l.Branch, l.Bucket, l.EntryOff = root, string(p[off-int64(ksize):off]), l.RootPage*l.PS+off
			l.Child = int64(ne.Uint64(b[root*l.PS+tHdr+8:]))
		} else if l.OtherOff == 0 {
			l.OtherOff = l.RootPage*l.PS + off
		}
	}
	if l.Branch == 0 || l.OtherOff == 0 {
		t.Fatalf("no bucket with a branch root page and another on its own page: %+v; grow the file", l)
	}
	return l
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

// Case is one structured damage of a file with the given layout.
type Case struct {
	Name   string
	Damage func(b []byte, l Layout) []byte
}

// Cases are the structured damages of a file with layout l.
func Cases() []Case {
	cases := []Case{
		{"branch element points at its own page", func(b []byte, l Layout) []byte {
			put64(b, l.Branch*l.PS+tHdr+8, uint64(l.Branch))
			return b
		}},
		{"last branch element points at its own page", func(b []byte, l Layout) []byte {
			n := int64(ne.Uint16(b[l.Branch*l.PS+10:]))
			put64(b, l.Branch*l.PS+tHdr+(n-1)*tElem+8, uint64(l.Branch))
			return b
		}},
		{"branch element points at an ancestor", func(b []byte, l Layout) []byte {
			put64(b, l.Branch*l.PS+tHdr+8, uint64(l.RootPage))
			return b
		}},
		{"bucket root points back up", func(b []byte, l Layout) []byte {
			put64(b, l.EntryOff, uint64(l.RootPage))
			return b
		}},
		{"two buckets share a root", func(b []byte, l Layout) []byte {
			put64(b, l.OtherOff, uint64(l.Branch))
			return b
		}},
		{"huge overflow in a branch page", func(b []byte, l Layout) []byte {
			ne.PutUint32(b[l.Branch*l.PS+12:], 0xFFFFFFFF)
			return b
		}},
		{"huge overflow in a leaf page", func(b []byte, l Layout) []byte {
			ne.PutUint32(b[l.Child*l.PS+12:], 0x7FFFFFFF)
			return b
		}},
		{"huge element count", func(b []byte, l Layout) []byte {
			ne.PutUint16(b[l.Branch*l.PS+10:], 0xFFFF)
			return b
		}},
		{"meta roots beyond the file", func(b []byte, l Layout) []byte {
			setMetas(b, l.PS, func(m []byte) { put64(m, 16, 1<<20) })
			return b
		}},
		{"meta roots far beyond the file", func(b []byte, l Layout) []byte {
			setMetas(b, l.PS, func(m []byte) { put64(m, 16, 1<<40); put64(m, 40, 1<<41) })
			return b
		}},
		{"meta free lists beyond the file", func(b []byte, l Layout) []byte {
			setMetas(b, l.PS, func(m []byte) { put64(m, 32, 1<<20) })
			return b
		}},
		{"meta high-water mark beyond the file", func(b []byte, l Layout) []byte {
			setMetas(b, l.PS, func(m []byte) { put64(m, 40, uint64(l.HWM)+1000) })
			return b
		}},
		{"truncated through a branch page", func(b []byte, l Layout) []byte {
			return b[:l.Branch*l.PS+l.PS/2]
		}},
		{"branch and child swapped", func(b []byte, l Layout) []byte {
			x, y := b[l.Branch*l.PS:(l.Branch+1)*l.PS], b[l.Child*l.PS:(l.Child+1)*l.PS]
			tmp := bytes.Clone(x)
			copy(x, y)
			copy(y, tmp)
			return b
		}},
		{"branch and child swapped, ids fixed", func(b []byte, l Layout) []byte {
			x, y := b[l.Branch*l.PS:(l.Branch+1)*l.PS], b[l.Child*l.PS:(l.Child+1)*l.PS]
			tmp := bytes.Clone(x)
			copy(x, y)
			copy(y, tmp)
			put64(b, l.Branch*l.PS, uint64(l.Branch))
			put64(b, l.Child*l.PS, uint64(l.Child))
			return b
		}},
	}
	for seed := range uint64(4) {
		cases = append(cases, Case{fmt.Sprintf("random bytes in a branch page (seed %d)", seed), func(b []byte, l Layout) []byte {
			rng := rand.New(rand.NewPCG(seed, 17))
			p := b[l.Branch*l.PS : (l.Branch+1)*l.PS]
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
