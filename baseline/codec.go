package baseline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The encoding, little-endian: the version byte, a uvarint count of keys,
// then per key (sorted) a uvarint length and the key, three varints
// (lastMin, lastSlot, firstSlot), Hours bins of binSize bytes and Slots ring
// values as float32 bits: 4 + 27·24 + 4·144 = 1228 bytes plus the key and
// varints, under 1.3 KB a quantity.
const (
	version = 1
	binSize = 8 + 8 + 4 + 2 + 4 + 1
	maxKey  = 256
)

// ErrFormat reports bytes that are not a baseline this version wrote.
var ErrFormat = errors.New("baseline: bad encoding")

// MarshalBinary encodes every key's baseline.
func (s *Set) MarshalBinary() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.keysLocked()
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(keys)*1300)
	out = append(out, version)
	out = binary.AppendUvarint(out, uint64(len(keys)))
	for _, k := range keys {
		out = s.m[k].appendTo(out, k)
	}
	return out, nil
}

func (sr *series) appendTo(out []byte, key string) []byte {
	out = binary.AppendUvarint(out, uint64(len(key)))
	out = append(out, key...)
	out = binary.AppendVarint(out, sr.lastMin)
	out = binary.AppendVarint(out, sr.lastSlot)
	out = binary.AppendVarint(out, sr.firstSlot)
	for _, b := range sr.bins {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(b.mean))
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(b.vari))
		out = binary.LittleEndian.AppendUint32(out, b.n)
		out = binary.LittleEndian.AppendUint16(out, b.days)
		out = binary.LittleEndian.AppendUint32(out, uint32(b.lastDay))
		out = append(out, b.dayN)
	}
	for _, v := range sr.ring {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
	}
	return out
}

// UnmarshalBinary replaces the Set's baselines with the ones in data; the
// zone, floor and k stay. On an error the Set is unchanged.
func (s *Set) UnmarshalBinary(data []byte) error {
	m, err := decode(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.m = m
	s.mu.Unlock()
	return nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrFormat, what)
	}
}

func (r *reader) uvarint(what string) uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint(what string) int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) next(n int, what string) []byte {
	if r.err != nil || len(r.b) < n {
		r.fail(what)
		return make([]byte, n)
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func decode(data []byte) (map[string]*series, error) {
	m := map[string]*series{}
	if len(data) == 0 {
		return m, nil
	}
	if data[0] != version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrFormat, data[0], version)
	}
	r := &reader{b: data[1:]}
	n := r.uvarint("key count")
	for i := uint64(0); i < n && r.err == nil; i++ {
		kl := r.uvarint("key length")
		if kl == 0 || kl > maxKey {
			r.fail(fmt.Sprintf("key %d: length %d", i, kl))
			break
		}
		key := string(r.next(int(kl), "key"))
		sr := &series{
			lastMin:   r.varint("last minute of " + key),
			lastSlot:  r.varint("last slot of " + key),
			firstSlot: r.varint("first slot of " + key),
		}
		raw := r.next(Hours*binSize+Slots*4, "bins of "+key)
		if r.err != nil {
			break
		}
		le := binary.LittleEndian
		for h := range sr.bins {
			b := raw[h*binSize:]
			sr.bins[h] = bin{
				mean:    math.Float64frombits(le.Uint64(b)),
				vari:    math.Float64frombits(le.Uint64(b[8:])),
				n:       le.Uint32(b[16:]),
				days:    le.Uint16(b[20:]),
				lastDay: int32(le.Uint32(b[22:])),
				dayN:    b[26],
			}
			if bad(sr.bins[h].mean) || bad(sr.bins[h].vari) || sr.bins[h].vari < 0 {
				r.fail(fmt.Sprintf("%s: hour %d: mean %v, variance %v", key, h, sr.bins[h].mean, sr.bins[h].vari))
			}
		}
		raw = raw[Hours*binSize:]
		for j := range sr.ring {
			sr.ring[j] = math.Float32frombits(le.Uint32(raw[j*4:]))
		}
		if _, dup := m[key]; dup {
			r.fail("key " + key + " twice")
		}
		m[key] = sr
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Sprintf("%d bytes after the last key", len(r.b)))
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

func bad(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }
