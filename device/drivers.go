package device

import (
	"slices"
	"strconv"
)

// DriverInfo describes a sensor driver: what `vigil sensors --drivers`
// prints and what the config accepts.
type DriverInfo struct {
	Name      string   // the config's driver = "..."
	Chip      string   // what it is
	Bus       string   // "i2c", "i2c or spi", "spi", "w1" (kernel 1-Wire), "sysfs" (kernel IIO/hwmon), "none"
	Addresses []uint16 // I²C addresses the chip can be strapped to; the first is the default
	Keys      []string // driver-specific config keys, besides name, driver, bus, address, timeout, deadband, calibrate
}

func addrRange(from, to uint16) []uint16 {
	var a []uint16
	for x := from; x <= to; x++ {
		a = append(a, x)
	}
	return a
}

func drivers() []DriverInfo {
	return []DriverInfo{
		{Name: "bme280", Chip: "Bosch BME280: temperature, humidity, pressure", Bus: "i2c or spi", Addresses: []uint16{0x76, 0x77}},
		{Name: "bmp280", Chip: "Bosch BMP280: temperature, pressure", Bus: "i2c or spi", Addresses: []uint16{0x76, 0x77}},
		{Name: "aht20", Chip: "Aosong AHT20: temperature, humidity", Bus: "i2c", Addresses: []uint16{AHT20Addr}},
		{Name: "sht3x", Chip: "Sensirion SHT30/SHT31/SHT35: temperature, humidity", Bus: "i2c", Addresses: sht3xAddrs},
		{Name: "sht4x", Chip: "Sensirion SHT40/SHT41/SHT43/SHT45: temperature, humidity", Bus: "i2c", Addresses: sht4xAddrs},
		{Name: "mcp9808", Chip: "Microchip MCP9808: temperature ±0.25 °C", Bus: "i2c", Addresses: addrRange(0x18, 0x1F)},
		{Name: "tmp102", Chip: "Texas Instruments TMP102: temperature ±0.5 °C", Bus: "i2c", Addresses: addrRange(0x48, 0x4B)},
		{Name: "ina219", Chip: "Texas Instruments INA219: bus voltage, current, power", Bus: "i2c", Addresses: addrRange(0x40, 0x4F), Keys: []string{"shunt_ohms", "max_current"}},
		{Name: "bh1750", Chip: "ROHM BH1750: illuminance", Bus: "i2c", Addresses: []uint16{0x23, 0x5C}},
		{Name: "scd4x", Chip: "Sensirion SCD40/SCD41: CO₂, temperature, humidity", Bus: "i2c", Addresses: []uint16{SCD4xAddr}},
		{Name: "ads1015", Chip: "Texas Instruments ADS1015: 12-bit ADC, channels ch0-ch3 in volts", Bus: "i2c", Addresses: addrRange(0x48, 0x4B), Keys: []string{"channels", "gain"}},
		{Name: "ads1115", Chip: "Texas Instruments ADS1115: 16-bit ADC, channels ch0-ch3 in volts", Bus: "i2c", Addresses: addrRange(0x48, 0x4B), Keys: []string{"channels", "gain"}},
		{Name: "max31855", Chip: "Maxim MAX31855: thermocouple and cold-junction temperature", Bus: "spi"},
		{Name: "max31865", Chip: "Maxim MAX31865: PT100/PT1000 RTD temperature, 2/3/4-wire", Bus: "spi", Keys: []string{"rtd", "wires", "ref_ohms"}},
		{Name: "mcp3008", Chip: "Microchip MCP3008: 10-bit ADC, channels ch0-ch7 in volts or scaled to a quantity", Bus: "spi", Keys: []string{"channels", "vref"}},
		{Name: "mcp3208", Chip: "Microchip MCP3208: 12-bit ADC, channels ch0-ch7 in volts or scaled to a quantity", Bus: "spi", Keys: []string{"channels", "vref"}},
		{Name: "ds18b20", Chip: "Maxim DS18B20: temperature, through the kernel's 1-Wire driver", Bus: "w1", Keys: []string{"serial", "w1_dir"}},
		{Name: "iio", Chip: "any sensor the kernel drives through IIO (BME680, DHT22, SCD30, ...)", Bus: "sysfs", Keys: []string{"path", "device", "quantities"}},
		{Name: "hwmon", Chip: "any chip the kernel drives through hwmon (LM75, SHT3x, INA2xx, ...)", Bus: "sysfs", Keys: []string{"path", "device", "quantities"}},
		{Name: "sim", Chip: "simulated temperature and humidity, for demos", Bus: "none"},
	}
}

// Drivers returns every sensor driver.
func Drivers() []DriverInfo { return drivers() }

// LookupDriver returns the driver with the given name.
func LookupDriver(name string) (DriverInfo, bool) {
	for _, d := range drivers() {
		if d.Name == name {
			return d, true
		}
	}
	return DriverInfo{}, false
}

// otherChips are common I²C parts vigil has no driver for, so that a scan
// can still say what an address probably is.
var otherChips = []struct {
	from, to uint16
	name     string
}{
	{0x0D, 0x0D, "qmc5883l"},
	{0x1E, 0x1E, "hmc5883l"},
	{0x20, 0x27, "pcf8574/mcp23017"},
	{0x29, 0x29, "vl53l0x/tsl2591"},
	{0x38, 0x38, "aht10"},
	{0x39, 0x39, "tsl2561/apds9960"},
	{0x3C, 0x3D, "ssd1306 oled"},
	{0x40, 0x40, "si7021/htu21d/pca9685"},
	{0x50, 0x57, "eeprom 24cxx"},
	{0x53, 0x53, "adxl345"},
	{0x58, 0x58, "sgp30"},
	{0x5A, 0x5B, "ccs811"},
	{0x5C, 0x5C, "am2320"},
	{0x68, 0x68, "ds3231/ds1307 rtc, mpu6050"},
	{0x69, 0x69, "mpu6050"},
	{0x70, 0x77, "tca9548a i2c mux"},
	{0x77, 0x77, "bmp180"},
}

// ChipsAt returns the chips that may answer at an I²C address: vigil's
// drivers first, then common parts it has no driver for.
func ChipsAt(addr uint16) []string {
	var out []string
	for _, d := range drivers() {
		if slices.Contains(d.Addresses, addr) {
			out = append(out, d.Name)
		}
	}
	for _, c := range otherChips {
		if addr >= c.from && addr <= c.to {
			out = append(out, c.name)
		}
	}
	return out
}

// SensorQuantities returns the readings (quantity and unit, zero values) a
// configured sensor produces: the driver's, limited for the ADS1x15 and the
// MCP3008/MCP3208 to the configured channels read in volts (none means
// ch0).
func SensorQuantities(driver string, channels []int) ([]Reading, bool) {
	q, ok := Quantities(driver)
	switch {
	case !ok:
		return nil, false
	case driver == "ads1015" || driver == "ads1115" || driver == "mcp3008" || driver == "mcp3208":
		return adsQuantities(q, channels), true
	}
	return q, true
}

func adsQuantities(all []Reading, channels []int) []Reading {
	if len(channels) == 0 {
		channels = []int{0}
	}
	var out []Reading
	for _, ch := range channels {
		for _, r := range all {
			if r.Quantity == "ch"+strconv.Itoa(ch) {
				out = append(out, r)
			}
		}
	}
	return out
}
