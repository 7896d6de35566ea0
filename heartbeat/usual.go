package heartbeat

import "time"

// UsualHour is what the baseline holds as usual for one hour of the day,
// as a chart draws it behind a series: from Time (the start of an hour in
// the device's zone) for an hour, Usual with the band from Low to High.
// An hour whose baseline is still warming up has none.
type UsualHour struct {
	Time  time.Time `json:"t"`
	Usual float64   `json:"usual"`
	Low   float64   `json:"low"`
	High  float64   `json:"high"`
}
