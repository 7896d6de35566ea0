package store

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vigil-iot/vigil/device"
)

func TestSnapshotCodec(t *testing.T) {
	tests := []struct {
		name string
		s    device.Snapshot
	}{
		{"zero", device.Snapshot{}},
		{"1970 boot clock", device.Snapshot{Time: time.Unix(12, 5).UTC(), Readings: map[string]device.Value{"board.uptime": {Value: 12, Unit: device.Second}}}},
		{"readings and errors", snap(t0, 5)},
		{"nan and inf", device.Snapshot{Time: t0, Readings: map[string]device.Value{
			"a.x": {Value: math.NaN(), Unit: device.Count}, "a.y": {Value: math.Inf(-1), Unit: device.Volt}, "a.z": {Value: math.MaxFloat64, Unit: device.Lux}}}},
		{"errors only", device.Snapshot{Time: t0, Errors: map[string]string{"air": "bme280: nack", "": ""}}},
		{"zone", device.Snapshot{Time: t0.In(time.FixedZone("IST", 5*3600+1800))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := appendSnapshot(nil, tt.s)
			got, err := decodeSnapshot(enc)
			if err != nil {
				t.Fatalf("decodeSnapshot: %v", err)
			}
			if diff := cmp.Diff(tt.s, got, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
			if !got.Time.Equal(tt.s.Time) {
				t.Errorf("time = %v, want %v", got.Time, tt.s.Time)
			}
			if _, off := got.Time.Zone(); func() int { _, o := tt.s.Time.Zone(); return o }() != off {
				t.Errorf("zone offset lost: %v", got.Time)
			}
			if tm, err := snapshotTime(enc); err != nil || !tm.Equal(tt.s.Time) {
				t.Errorf("snapshotTime = %v, %v, want %v", tm, err, tt.s.Time)
			}
			// Every strict prefix is rejected, never misread.
			for n := range len(enc) {
				if _, err := decodeSnapshot(enc[:n]); err == nil {
					t.Errorf("decodeSnapshot(prefix %d of %d) succeeded", n, len(enc))
				}
			}
			if _, err := decodeSnapshot(append(enc, 0)); err == nil {
				t.Error("decodeSnapshot with trailing byte succeeded")
			}
		})
	}
}

func TestSnapshotEncodingIsSmall(t *testing.T) {
	s := snap(t0, 5)
	bin := appendSnapshot(nil, s)
	js, _ := jsonMarshal(s)
	if len(bin) >= len(js) {
		t.Errorf("binary encoding %d bytes, JSON %d: the binary codec does not pay for itself", len(bin), len(js))
	}
	t.Logf("snapshot with 5 readings: %d bytes binary, %d bytes JSON", len(bin), len(js))
}

// FuzzSnapshotCodec feeds arbitrary bytes to the decoder: it must never
// panic, and whatever it accepts must encode back to the same bytes.
func FuzzSnapshotCodec(f *testing.F) {
	f.Add(appendSnapshot(nil, snap(t0, 3)))
	f.Add(appendSnapshot(nil, device.Snapshot{Time: t0, Errors: map[string]string{"air": "nack"}}))
	f.Add([]byte{snapshotV1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot(b)
		if err != nil {
			return
		}
		if _, err := snapshotTime(b); err != nil {
			t.Fatalf("decodeSnapshot accepted what snapshotTime rejects: %v", err)
		}
		again := appendSnapshot(nil, s)
		s2, err := decodeSnapshot(again)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !bytes.Equal(appendSnapshot(nil, s2), again) {
			t.Fatalf("encoding not stable")
		}
	})
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
