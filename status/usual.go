package status

// What is usual, as text: the band beside each reading in `vigil status`
// and `vigil sensors`, and the bands that `vigil sensors --json` carries.

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
)

// UsualText says what is usual now for a reading: "usual 18.2–22.0 now"
// from this hour's own baseline; "usual 14.5–29.5 over the last 24 h,
// hourly from Nov 29 03:03" while the hour's own warms up and the band is
// the last day's median and MAD; "warming up, ready at 21:40" before that.
// A reading at least k spreads off adds its z-score: "; z=+8.7, unusual".
// Times are in now's zone, with the date when not today.
func UsualText(b heartbeat.BandStatus, k float64, now time.Time) string {
	if !b.Ready {
		if b.ReadyAt.IsZero() {
			return "warming up"
		}
		return "warming up, ready at " + clock(b.ReadyAt, now)
	}
	txt := "usual " + bandRange(b.Low, b.High) + " now"
	if !b.Hourly {
		txt = "usual " + bandRange(b.Low, b.High) + " over the last 24 h"
		if !b.ReadyAt.IsZero() {
			txt += ", hourly from " + clock(b.ReadyAt, now)
		}
	}
	if k > 0 && math.Abs(b.Z) >= k {
		txt += fmt.Sprintf("; z=%+.1f, unusual", b.Z)
	}
	return txt
}

// bandRange prints low–high with the decimals the band's width needs:
// none from 100 wide, two under 1.
func bandRange(lo, hi float64) string {
	prec := 1
	switch w := hi - lo; {
	case w >= 100:
		prec = 0
	case w < 1:
		prec = 2
	}
	return strconv.FormatFloat(lo, 'f', prec, 64) + "–" + strconv.FormatFloat(hi, 'f', prec, 64)
}

// clock is t as a clock time in now's zone, with the date when not today.
func clock(t, now time.Time) string {
	t = t.In(now.Location())
	y, m, d := t.Date()
	if ny, nm, nd := now.Date(); y == ny && m == nm && d == nd {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// SensorsJSON is `vigil sensors --json`: the table of a fresh snapshot
// and, by reading, what is usual now with the fresh reading's z-score, as
// `vigil status --json` carries them.
type SensorsJSON struct {
	device.Table
	Baselines map[string]heartbeat.BandStatus `json:"baselines,omitempty"`
}

// BandsFor gives bands (the status's, of its last sample) the z-scores
// of snap's readings, for the readings snap has.
func BandsFor(snap device.Snapshot, bands map[string]heartbeat.BandStatus) map[string]heartbeat.BandStatus {
	var out map[string]heartbeat.BandStatus
	for k, v := range snap.Readings {
		b, ok := bands[k]
		if !ok {
			continue
		}
		b.Z = 0
		if b.Ready {
			b.Z = math.Round(b.Band.Z(v.Value)*100) / 100
		}
		if out == nil {
			out = map[string]heartbeat.BandStatus{}
		}
		out[k] = b
	}
	return out
}

// UsualCells is the USUAL NOW column of `vigil sensors`: UsualText by
// reading, for the readings that have a band; nil when none has.
func UsualCells(bands map[string]heartbeat.BandStatus, k float64, now time.Time) map[string]string {
	var out map[string]string
	for key, b := range bands {
		if out == nil {
			out = map[string]string{}
		}
		out[key] = UsualText(b, k, now)
	}
	return out
}
