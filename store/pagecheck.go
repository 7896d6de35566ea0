package store

// This file checks the structure of a state file before bbolt maps it. bbolt
// v1.5.0 trusts its pages: Meta.Validate checks the magic, version and
// checksum but not that the root, the free list or the high-water mark lie
// within the file; DB.page indexes the mapping without a bound; forEachPage
// and Tx.Check recurse into every branch element without a visited set (Check
// reports a page referenced twice, then follows it again, and its key-order
// walk recurses without end), and Check runs on a goroutine of its own, where
// a memory fault is fatal. A branch that points at itself thus made `vigil
// status` spin and grow without bound, and a meta root beyond the file
// crashed it. So before bolt.Open, checkPages reads the file with ReadAt,
// never through the mapping, and walks every tree from the meta page bbolt
// would choose, with one mark per page: a page reached twice (a cycle, a
// shared subtree, a page that is also free), a page id at or beyond the
// high-water mark, a count or an overflow that does not fit, or an element
// that points outside its page is an error wrapping ErrCorrupt. Each page is
// read once, so the check is bounded by the file: at most maxCheckPages
// pages, one page span in memory at a time and one byte of marks per page.
// Only when it passes does bbolt open the file and run its own Check (free
// list, key order, unreachable pages), which then meets only pages within
// the file and no cycle.
//
// The layout below mirrors bbolt v1.5.0 internal/common: page.go (page
// header and elements), meta.go (meta page and checksum), bucket.go (bucket
// header and inline page), types.go (magic, version, PgidNoFreelist) and
// db.go (getPageSize, meta: which meta page is used).

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's on-disk layout, in the machine's byte order.
const (
	pageHeaderSize = 16 // id u64, flags u16, count u16, overflow u32
	elemSize       = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketHdrSize  = 16 // root u64, sequence u64; an inline page follows when root is 0

	branchFlag   = 0x01
	leafFlag     = 0x02
	metaFlag     = 0x04
	freelistFlag = 0x10
	bucketLeaf   = 0x01 // leaf element flag: the value is a bucket

	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)
	metaSumOffset  = 56 // the checksum is FNV-64a of the meta up to here
	metaSize       = 64
	minPageSize    = 1024
	maxPageSize    = 64 << 10
	freelistBigCnt = 0xFFFF // count field saturated: the first id is the count
)

// maxCheckPages bounds the pages checkPages visits (and marks). vigil's file
// is a few MB; 1<<20 pages is 4 GiB at 4 KiB a page.
const maxCheckPages = 1 << 20

var ne = binary.NativeEndian

// meta is the part of bbolt's meta page that checkPages uses.
type meta struct {
	pageSize uint32
	root     uint64 // root bucket's page
	freelist uint64
	hwm      uint64 // high-water mark: the first page id not in use
	txid     uint64
}

// readMeta decodes the meta page at off and validates it as bbolt's
// Meta.Validate does.
func readMeta(f io.ReaderAt, off int64) (meta, error) {
	var b [pageHeaderSize + metaSize]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return meta{}, fmt.Errorf("read meta page at %d: %w", off, err)
	}
	m := b[pageHeaderSize:]
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	switch {
	case ne.Uint32(m) != boltMagic:
		return meta{}, fmt.Errorf("meta page at %d: not a bbolt meta page", off)
	case ne.Uint32(m[4:]) != boltVersion:
		return meta{}, fmt.Errorf("meta page at %d: version %d, want %d", off, ne.Uint32(m[4:]), boltVersion)
	case ne.Uint64(m[metaSumOffset:]) != h.Sum64():
		return meta{}, fmt.Errorf("meta page at %d: checksum mismatch", off)
	}
	return meta{pageSize: ne.Uint32(m[8:]), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]),
		hwm: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}, nil
}

// chooseMeta returns the meta page bbolt would use (db.go: getPageSize takes
// the page size from the first valid meta, meta takes the valid one with the
// higher transaction id).
func chooseMeta(f io.ReaderAt, size int64) (meta, error) {
	m0, err0 := readMeta(f, 0)
	ps := int64(m0.pageSize)
	if err0 != nil {
		// bbolt probes for the second meta page at every page size.
		ps = 0
		for s := int64(minPageSize); s <= maxPageSize && s < size-minPageSize; s <<= 1 {
			if m, err := readMeta(f, s); err == nil && int64(m.pageSize) == s {
				ps = s
				break
			}
		}
		if ps == 0 {
			return meta{}, fmt.Errorf("no valid meta page: %w", err0)
		}
	}
	if ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0 {
		return meta{}, fmt.Errorf("meta page: page size %d (want a power of two from %d to %d)", ps, minPageSize, maxPageSize)
	}
	m1, err1 := readMeta(f, ps)
	switch {
	case err0 != nil && err1 != nil:
		return meta{}, fmt.Errorf("no valid meta page: %w", err0)
	case err1 != nil || (err0 == nil && m0.txid >= m1.txid):
		return m0, nil
	case int64(m1.pageSize) != ps:
		return meta{}, fmt.Errorf("meta pages disagree on the page size: %d and %d", ps, m1.pageSize)
	}
	return m1, nil
}

// Who holds a page, in checkPages' marks.
const (
	heldByNone byte = iota
	heldByMeta
	heldByFreelist
	heldByFree // listed as free
	heldByTree
)

var heldBy = [...]string{"nothing", "a meta page", "the free list", "the free list as free", "a tree"}

// pageChecker walks a file's pages with ReadAt.
type pageChecker struct {
	f    io.ReaderAt
	ps   uint64
	hwm  uint64
	held []byte   // one mark per page below hwm
	todo []uint64 // pages to visit (bucket roots and branch children)
}

// checkPages checks the structure of the bbolt file f of size bytes, as
// described at the top of this file. The error wraps ErrCorrupt and names
// the page.
func checkPages(f io.ReaderAt, size int64) error {
	if err := checkPagesRaw(f, size); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return nil
}

// checkFile runs checkPages on the file at path.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("check pages: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check pages: %w", err)
	}
	return checkPages(f, fi.Size())
}

func checkPagesRaw(f io.ReaderAt, size int64) error {
	m, err := chooseMeta(f, size)
	if err != nil {
		return err
	}
	c := &pageChecker{f: f, ps: uint64(m.pageSize), hwm: m.hwm}
	switch {
	case m.hwm < 4 || m.hwm > maxCheckPages:
		return fmt.Errorf("meta page: high-water mark %d pages (want 4 to %d)", m.hwm, maxCheckPages)
	case m.hwm*c.ps > uint64(size):
		return fmt.Errorf("file is %d bytes, its meta page says %d (truncated)", size, m.hwm*c.ps)
	case m.root < 2 || m.root >= m.hwm:
		return fmt.Errorf("meta page: root page %d outside the file's pages 2 to %d", m.root, m.hwm-1)
	case m.freelist == noFreelist:
		// bbolt then rebuilds the list on a goroutine that panics on the
		// first fault; vigil always writes its free list.
		return fmt.Errorf("meta page: no free list (vigil always writes one)")
	case m.freelist < 2 || m.freelist >= m.hwm:
		return fmt.Errorf("meta page: free list page %d outside the file's pages 2 to %d", m.freelist, m.hwm-1)
	}
	c.held = make([]byte, m.hwm)
	c.held[0], c.held[1] = heldByMeta, heldByMeta
	if err := c.checkFreelist(m.freelist); err != nil {
		return err
	}
	c.todo = append(c.todo, m.root)
	for len(c.todo) > 0 {
		id := c.todo[len(c.todo)-1]
		c.todo = c.todo[:len(c.todo)-1]
		if err := c.checkTreePage(id); err != nil {
			return err
		}
	}
	return nil
}

// claim reads the page id and its overflow pages and marks them held by
// who. A page below 2, at or beyond the high-water mark, or already held is
// an error: this is what stops a cycle.
func (c *pageChecker) claim(id uint64, who byte) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d: outside the file's pages 2 to %d", id, c.hwm-1)
	}
	var hdr [pageHeaderSize]byte
	if _, err := c.f.ReadAt(hdr[:], int64(id*c.ps)); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	over := uint64(ne.Uint32(hdr[12:]))
	if got := ne.Uint64(hdr[:]); got != id {
		return nil, fmt.Errorf("page %d: identifies itself as page %d", id, got)
	}
	if id+over >= c.hwm {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the file's last page %d", id, over, c.hwm-1)
	}
	for p := id; p <= id+over; p++ {
		if c.held[p] != heldByNone {
			return nil, fmt.Errorf("page %d: reached again from %s (already held by %s: a cycle or a double reference)", p, heldBy[who], heldBy[c.held[p]])
		}
		c.held[p] = who
	}
	buf := make([]byte, (over+1)*c.ps)
	if _, err := c.f.ReadAt(buf, int64(id*c.ps)); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

// checkFreelist checks the free list page and marks the pages it lists.
func (c *pageChecker) checkFreelist(id uint64) error {
	p, err := c.claim(id, heldByFreelist)
	if err != nil {
		return fmt.Errorf("free list: %w", err)
	}
	if f := ne.Uint16(p[8:]); f != freelistFlag {
		return fmt.Errorf("free list: page %d has flags %#x, want %#x", id, f, freelistFlag)
	}
	first, n := uint64(0), uint64(ne.Uint16(p[10:]))
	if n == freelistBigCnt {
		if len(p) < pageHeaderSize+8 {
			return fmt.Errorf("free list: page %d too short", id)
		}
		first, n = 1, ne.Uint64(p[pageHeaderSize:])
	}
	if max := uint64(len(p)-pageHeaderSize) / 8; n > max || first+n > max {
		return fmt.Errorf("free list: page %d lists %d pages, room for %d", id, n, max)
	}
	for i := first; i < first+n; i++ {
		free := ne.Uint64(p[pageHeaderSize+8*i:])
		if free < 2 || free >= c.hwm {
			return fmt.Errorf("free list: page %d lists page %d, outside the file's pages 2 to %d", id, free, c.hwm-1)
		}
		if c.held[free] != heldByNone {
			return fmt.Errorf("free list: page %d lists page %d, already held by %s", id, free, heldBy[c.held[free]])
		}
		c.held[free] = heldByFree
	}
	return nil
}

// checkTreePage checks one branch or leaf page of a bucket's tree and queues
// its children and the roots of the buckets it holds.
func (c *pageChecker) checkTreePage(id uint64) error {
	p, err := c.claim(id, heldByTree)
	if err != nil {
		return err
	}
	flags, n := ne.Uint16(p[8:]), uint64(ne.Uint16(p[10:]))
	if flags != branchFlag && flags != leafFlag {
		return fmt.Errorf("page %d: flags %#x, want a branch or a leaf page", id, flags)
	}
	if pageHeaderSize+n*elemSize > uint64(len(p)) {
		return fmt.Errorf("page %d: %d elements do not fit in %d bytes", id, n, len(p))
	}
	if flags == branchFlag {
		if n == 0 {
			return fmt.Errorf("page %d: a branch page without elements", id)
		}
		for i := range n {
			e := p[pageHeaderSize+i*elemSize:]
			if err := inside(p, pageHeaderSize+i*elemSize, ne.Uint32(e), ne.Uint32(e[4:]), 0); err != nil {
				return fmt.Errorf("page %d: branch element %d: %w", id, i, err)
			}
			c.todo = append(c.todo, ne.Uint64(e[8:]))
		}
		return nil
	}
	return c.checkLeaf(p, id, n, false)
}

// checkLeaf checks the n elements of the leaf page p (a page of the file,
// or an inline bucket's page when inline) and queues the roots of the
// buckets it holds.
func (c *pageChecker) checkLeaf(p []byte, id, n uint64, inline bool) error {
	where := fmt.Sprintf("page %d", id)
	if inline {
		where = fmt.Sprintf("an inline bucket in page %d", id)
	}
	for i := range n {
		at := pageHeaderSize + i*elemSize
		e := p[at:]
		flags, pos, ksize, vsize := ne.Uint32(e), ne.Uint32(e[4:]), ne.Uint32(e[8:]), ne.Uint32(e[12:])
		if err := inside(p, at, pos, ksize, vsize); err != nil {
			return fmt.Errorf("%s: leaf element %d: %w", where, i, err)
		}
		if flags&bucketLeaf == 0 {
			continue
		}
		if inline {
			// bbolt never writes a bucket inside an inline bucket.
			return fmt.Errorf("%s: leaf element %d: a bucket inside an inline bucket", where, i)
		}
		v := p[at+uint64(pos)+uint64(ksize) : at+uint64(pos)+uint64(ksize)+uint64(vsize)]
		if len(v) < bucketHdrSize {
			return fmt.Errorf("%s: leaf element %d: a bucket value of %d bytes, want at least %d", where, i, len(v), bucketHdrSize)
		}
		if root := ne.Uint64(v); root != 0 {
			c.todo = append(c.todo, root)
			continue
		}
		ip := v[bucketHdrSize:]
		if len(ip) < pageHeaderSize {
			return fmt.Errorf("%s: leaf element %d: an inline bucket of %d bytes", where, i, len(ip))
		}
		if f := ne.Uint16(ip[8:]); f != leafFlag {
			return fmt.Errorf("%s: leaf element %d: an inline bucket with flags %#x, want a leaf", where, i, f)
		}
		in := uint64(ne.Uint16(ip[10:]))
		if pageHeaderSize+in*elemSize > uint64(len(ip)) {
			return fmt.Errorf("%s: leaf element %d: an inline bucket's %d elements do not fit in %d bytes", where, i, in, len(ip))
		}
		if err := c.checkLeaf(ip, id, in, true); err != nil {
			return err
		}
	}
	return nil
}

// inside reports whether the key (and value) of the element at offset at
// in p lie within p: bbolt finds them pos bytes after the element.
func inside(p []byte, at uint64, pos, ksize, vsize uint32) error {
	end := at + uint64(pos) + uint64(ksize) + uint64(vsize)
	if end > uint64(len(p)) {
		return fmt.Errorf("key and value end at byte %d, past the page's %d", end, len(p))
	}
	return nil
}
