package board_test

import (
	"fmt"

	"github.com/vigil-iot/vigil/board"
)

func ExampleDetect() {
	// testdata/rpi4 is a fake root whose /proc/device-tree/model reads
	// "Raspberry Pi 4 Model B Rev 1.4\x00".
	p, ok := board.Detect("testdata/rpi4")
	fmt.Println(p.Name, ok, "i2c bus", p.I2CBus, p.GOARCH)

	p, ok = board.Detect("testdata/x86")
	fmt.Println(p.Name, ok)
	// Output:
	// rpi4 true i2c bus 1 arm64
	// generic false
}
