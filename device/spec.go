package device

import (
	"io/fs"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/spi"

	"github.com/vigil-iot/vigil/board"
)

// Spec is a configured sensor, as a driver's constructor takes it: the
// config's [[sensor]] table, checked and with its defaults filled in
// (config.Sensor.Spec builds one).
type Spec struct {
	Name    string
	Driver  string
	Bus     string // "" for the board's default, an I²C bus ("1"), or "spi:BUS.CS"
	Address uint16 // 0 for the driver's default
	Timeout time.Duration
	// Calibrate maps a quantity to the correction Sense applies to it.
	Calibrate map[string]Calibration

	ShuntOhms, MaxCurrent float64      // ina219
	Channels              []ADCChannel // an ADC's inputs
	Gain                  float64      // ads1x15: full-scale volts
	VRef                  float64      // mcp3x08: volts at VREF
	RTDOhms               float64      // max31865: the probe's resistance at 0 °C
	Wires                 int          // max31865
	RefOhms               float64      // max31865: the reference resistor
	Serial, W1Dir         string       // ds18b20
	Path, Device          string       // iio, hwmon
	Quantities            []string     // iio, hwmon: the quantities it must report
	Sim                   *SimWave     // board = "sim": the simulated excursion
}

// SimWave tunes a simulated sensor's temperature excursion, or replaces it
// by a script (SimWeek).
type SimWave struct {
	Every, Length time.Duration
	Rise          float64
	Start         time.Time      // zero: when vigil started
	Script        string         // "" (the excursion) | SimWeek
	Location      *time.Location // the device's zone, for the week's days and nights (nil: UTC)
}

func (s Spec) channelNumbers() []int {
	out := make([]int, len(s.Channels))
	for i, c := range s.Channels {
		out[i] = c.Channel
	}
	return out
}

// Opening is what a driver's Open gets: the configured sensor, the bus it
// is on, and what the machine lends it.
type Opening struct {
	Spec
	I2C   i2c.Bus  // an I²C chip's bus; borrowed, never closed
	SPI   spi.Port // an SPI chip's port; borrowed, never closed
	Bus   string   // its name, for errors: "1", "0.0"
	Addr  uint16   // an I²C chip's address
	Board board.Profile
	FS    fs.FS // the root file system, for sysfs
	Now   func() time.Time
	Sleep Sleep // for drivers that wait out a conversion
}
