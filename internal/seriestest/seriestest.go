// Package seriestest holds the history the tests of status and web share:
// a known hour of samples that their sparklines, charts and exports are
// checked against. It is test support only: nothing outside _test.go files
// imports it.
package seriestest

import (
	"time"

	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
)

// T0 is when KnownHistory starts.
var T0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// KnownHistory is an hour of one-minute samples from T0: a temperature
// that climbs from 20 to 31.8 °C and a humidity that falls, with a
// ten-minute gap in the humidity (the sensor failed); humidity first.
func KnownHistory() []heartbeat.Series {
	temp := heartbeat.Series{Key: "air.temperature", Unit: device.Celsius}
	hum := heartbeat.Series{Key: "air.humidity", Unit: device.Percent}
	for i := range 60 {
		at := T0.Add(time.Duration(i) * time.Minute)
		temp.Points = append(temp.Points, heartbeat.Point{Time: at, Value: 20 + 0.2*float64(i)})
		if i < 30 || i >= 40 {
			hum.Points = append(hum.Points, heartbeat.Point{Time: at, Value: 60 - 0.5*float64(i)})
		}
	}
	return []heartbeat.Series{hum, temp}
}
