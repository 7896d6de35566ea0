package device_test

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/device"
)

// Survey on the sim board with an emulated I²C bus: what `vigil init`
// shows, and the blocks it writes.
func ExampleSurvey() {
	env := map[string]string{device.SimI2CEnv: "bme280@0x76,bmp280@0x77"}
	rep, err := device.Survey(context.Background(), device.SurveyOptions{
		Board:  "sim",
		Getenv: func(k string) string { return env[k] },
		Now:    func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) },
		Sleep:  func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("board:", rep.Board.Name, "-", rep.Detected)
	for _, p := range rep.I2C {
		fmt.Printf("i2c bus %s (%s):\n", p.Name, p.Note)
		for _, id := range p.Chips {
			fmt.Println(" ", id)
		}
	}
	for _, f := range rep.Sensors {
		fmt.Printf("%s: %v\n", f.Spec.Name, f.Readings)
	}
	fmt.Print(rep.Sensors[0].TOML())
	fmt.Print(device.StarterRules(rep.Sensors[:1])[1].TOML())
	// Output:
	// board: sim - named with --board
	// i2c bus 1 (emulated by VIGIL_SIM_I2C):
	//   0x76 bme280 (chip id 0x60 at register 0xd0)
	//   0x77 bmp280 (chip id 0x58 at register 0xd0)
	// air: [{temperature 25.08 °C} {humidity 39.48 %} {pressure 1006.53 hPa}]
	// air2: [{temperature 25.08 °C} {pressure 1006.53 hPa}]
	// # Bosch BME280: temperature, humidity, pressure
	// [[sensor]]
	// name = "air"
	// driver = "bme280"
	// bus = "1"
	// address = 0x76
	// [[rule]]
	// name = "air_hot"
	// when = "air.temperature > 40"
	// clear = "air.temperature < 38"
	// for = "2m"
	// severity = "warning"
	// message = "air.temperature above 40 °C: {air.temperature}"
}
