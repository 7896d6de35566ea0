package baseline_test

import (
	"fmt"
	"math"
	"time"

	"github.com/vigil-iot/vigil/baseline"
)

// A greenhouse: 15 °C at night, 30 °C in the afternoon. After three days
// 28 °C is usual at 14:00 and very unusual at 03:00.
func Example() {
	loc := time.FixedZone("CET", 3600)
	set := baseline.New(loc, func(string) float64 { return 0.01 }) // BME280 resolution
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, loc)
	for m := 0; m < 3*24*60; m++ {
		at := start.Add(time.Duration(m) * time.Minute)
		h := float64(at.Hour()) + float64(at.Minute())/60
		temp := 22.5 - 7.5*math.Cos(2*math.Pi*(h-2)/24) // 15 at 02:00, 30 at 14:00
		set.Observe("air.temperature", temp+0.2*math.Sin(float64(m)), at)
	}
	for _, hour := range []int{3, 14} {
		at := time.Date(2026, 6, 4, hour, 0, 0, 0, loc)
		b, _ := set.Band("air.temperature", at)
		fmt.Printf("%02d:00 usual %.1f, 28 °C has z %+.0f\n", hour, b.Usual, b.Z(28))
	}
	b, _ := set.Band("air.temperature", start.Add(time.Hour))
	fmt.Println("ready", b.Ready, "hourly", b.Hourly)
	// Output:
	// 03:00 usual 15.6, 28 °C has z +48
	// 14:00 usual 29.9, 28 °C has z -12
	// ready true hourly true
}
