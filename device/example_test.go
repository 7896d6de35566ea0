package device_test

import (
	"fmt"

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
