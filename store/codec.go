package store

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/vigil-iot/vigil/device"
)

// History snapshots use a small binary encoding instead of JSON: it is about
// half the size, decodes without reflection, lets History skip old entries
// after reading only the time, and keeps NaN and ±Inf readings, which JSON
// cannot encode.
//
//	version   byte (snapshotV1)
//	time      uvarint length + time.MarshalBinary
//	readings  uvarint count, then per reading sorted by key:
//	          string key, 8 bytes IEEE 754 big-endian value, string unit
//	errors    uvarint count, then per error sorted by key: string key, string message
//
// A string is a uvarint length followed by its bytes.
const snapshotV1 = 1

var errCorrupt = errors.New("corrupt snapshot encoding")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendSnapshot appends the encoding of s to b.
func appendSnapshot(b []byte, s device.Snapshot) []byte {
	b = append(b, snapshotV1)
	t := marshalTime(s.Time)
	b = binary.AppendUvarint(b, uint64(len(t)))
	b = append(b, t...)
	b = binary.AppendUvarint(b, uint64(len(s.Readings)))
	for _, k := range s.Keys() {
		v := s.Readings[k]
		b = appendString(b, k)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.Value))
		b = appendString(b, string(v.Unit))
	}
	keys := make([]string, 0, len(s.Errors))
	for k := range s.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, s.Errors[k])
	}
	return b
}

// decoder reads the encoding; the first error sticks and later reads return
// zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) float() float64 {
	b := d.bytes(8)
	if len(b) != 8 {
		return 0
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) } // copies

// count reads an element count and rejects counts the remaining bytes
// cannot hold (each element takes at least min bytes), so corrupt input
// cannot make us allocate a huge map.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) header() time.Time {
	if len(d.b) == 0 || d.b[0] != snapshotV1 {
		d.fail()
		return time.Time{}
	}
	d.b = d.b[1:]
	var t time.Time
	if err := t.UnmarshalBinary(d.bytes(d.uvarint())); err != nil {
		d.fail()
	}
	return t
}

// snapshotTime decodes only the time of an encoded snapshot.
func snapshotTime(b []byte) (time.Time, error) {
	d := decoder{b: b}
	t := d.header()
	return t, d.err
}

// decodeSnapshot decodes an encoded snapshot. The result shares no memory
// with b. Readings and Errors are never nil.
func decodeSnapshot(b []byte) (device.Snapshot, error) {
	d := decoder{b: b}
	s := device.Snapshot{Time: d.header()}
	n := d.count(1 + 8 + 1)
	s.Readings = make(map[string]device.Value, n)
	for range n {
		k := d.string()
		v := d.float()
		u := device.Unit(d.string())
		s.Readings[k] = device.Value{Value: v, Unit: u}
	}
	n = d.count(2)
	s.Errors = make(map[string]string, n)
	for range n {
		k := d.string()
		s.Errors[k] = d.string()
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return device.Snapshot{}, d.err
	}
	return s, nil
}
