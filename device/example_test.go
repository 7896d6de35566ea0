package device_test

import (
	"context"
	"fmt"
	"os"

	"github.com/vigil-iot/vigil/device"
)

func ExampleChipsAt() {
	for _, addr := range []uint16{0x38, 0x76, 0x62} {
		fmt.Printf("0x%02x %v\n", addr, device.ChipsAt(addr))
	}
	// Output:
	// 0x38 [aht20 aht10]
	// 0x76 [bme280 bmp280 tca9548a i2c mux]
	// 0x62 [scd4x]
}

func ExampleSensorQuantities() {
	q, _ := device.SensorQuantities("ads1115", []int{0, 2})
	for _, r := range q {
		fmt.Println(r.Quantity, r.Unit)
	}
	// Output:
	// ch0 V
	// ch2 V
}

// A BME680 that the kernel drives (dtoverlay=i2c-sensor,bme680), read from
// sysfs; on a board the file system is os.DirFS("/").
func ExampleNewIIO() {
	d, err := device.NewIIO(os.DirFS("testdata/sysfs/iio"), "", "bme680", []string{"temperature", "pressure"})
	if err != nil {
		fmt.Println(err)
		return
	}
	readings, err := d.Sense(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range readings {
		fmt.Println(r.Quantity, r.Value, r.Unit)
	}
	// Output:
	// temperature 23.45 °C
	// pressure 1013.25 hPa
}

// A soil probe on an MCP3008 input gives 0-3.3 V for 0-100 %.
func ExampleADCChannel_Reading() {
	soil := device.ADCChannel{Channel: 0, Quantity: "soil", Unit: device.Percent, Volts: [2]float64{0, 3.3}, Values: [2]float64{0, 100}}
	fmt.Println(soil.Reading(1.65))
	// Output:
	// {soil 50 %}
}

// A humidity sensor that reads 35 % in a 33.2 % salt box and 75 % in a
// 76.1 % one: the line through the two points corrects every reading.
func ExampleTwoPoint() {
	c := device.TwoPoint(35, 33.2, 75, 76.1)
	for _, raw := range []float64{35, 55, 75} {
		fmt.Printf("%g -> %.2f\n", raw, c.Apply(raw))
	}
	// Output:
	// 35 -> 33.20
	// 55 -> 54.65
	// 75 -> 76.10
}
