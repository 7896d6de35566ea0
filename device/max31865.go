package device

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
)

// MAX31865 is a Maxim MAX31865 RTD-to-digital converter on SPI with a PT100
// or PT1000 probe in 2-, 3- or 4-wire connection and a reference resistor
// of the board's value. Each Sense switches the bias on, runs the automatic
// fault-detection cycle and one 1-shot conversion, switches the bias off
// again (so the RTD does not warm itself) and converts the resistance to
// °C with the Callendar–Van Dusen equation of IEC 60751, below and above
// 0 °C. A fault the chip latched is a reading error naming each fault
// status bit, and the fault status is cleared for the next read.
type MAX31865 struct {
	c     *chip
	conn  spi.Conn
	sleep Sleep
	cfg   byte    // configuration register with the bias off
	r0    float64 // RTD resistance at 0 °C: 100 or 1000 Ω
	rref  float64 // reference resistor, Ω
}

var _ Sensor = (*MAX31865)(nil)

// Serial interface: SPI modes 1 and 3, SCLK up to 5 MHz (datasheet,
// "Serial Interface"); 1 MHz leaves room for long wires.
const (
	max31865Speed = physic.MegaHertz
	max31865Mode  = spi.Mode1
)

// Registers (datasheet Table 1, "Register Memory Map"): addresses 0xh are
// read, 8xh written, multi-byte transfers go on to the next register.
const (
	max31865Config    = 0x00 // Configuration (00h)
	max31865RTD       = 0x01 // RTD MSBs (01h), RTD LSBs (02h)
	max31865Threshold = 0x03 // High Fault Threshold MSB/LSB (03h-04h), Low (05h-06h)
	max31865Status    = 0x07 // Fault Status (07h)
	max31865Write     = 0x80
)

// Configuration register bits (datasheet, "Configuration Register (00h)").
const (
	max31865Bias       = 1 << 7 // D7: VBIAS on
	max31865OneShot    = 1 << 5 // D5: 1-shot conversion
	max31865ThreeWire  = 1 << 4 // D4: 3-wire RTD
	max31865FaultAuto  = 1 << 2 // D3:D2 = 01: automatic fault-detection cycle (write 100X010Xb)
	max31865FaultClear = 1 << 1 // D1: fault status clear
	max31865Filter50Hz = 1 << 0 // D0: 50 Hz notch filter
)

// Timing. VBIAS must be on for 10.5 time constants of the input filter
// before a conversion ("BIAS (D7)"); 10 ms covers the datasheet's
// application circuits. The automatic fault-detection cycle inserts 100 µs
// delays before each of its checks and clears D3:D2 when done ("Fault
// Detection Cycle (D3:D2)"); vigil gives it 1 ms. A 1-shot conversion with
// the 50 Hz filter takes 62.5 ms, at most 66 ms (Electrical
// Characteristics, conversion time).
const (
	max31865TBias  = 10 * time.Millisecond
	max31865TFault = time.Millisecond
	max31865TConv  = 66 * time.Millisecond
)

// IEC 60751 Callendar–Van Dusen coefficients (α = 0.00385 Ω/Ω/°C), and the
// range the standard covers.
const (
	cvdA                       = 3.9083e-3
	cvdB                       = -5.775e-7
	cvdC                       = -4.183e-12
	max31865MinC, max31865MaxC = -200, 850
)

// max31865Faults are the Fault Status register bits (datasheet Table 7,
// "Fault Status Register Definition"), with the causes Tables 10-12
// ("Decoding RTD Faults") give and what to check.
var max31865Faults = []faultBit{
	{1 << 7, "RTD resistance at or above the high fault threshold (850 °C): the RTD or a wire to it is open; check the RTD and its wires at FORCE+, RTDIN+, RTDIN− and FORCE−"},
	{1 << 6, "RTD resistance at or below the low fault threshold (−200 °C): the RTD is shorted; check for a short across the RTD or between RTDIN+ and RTDIN−"},
	{1 << 5, "REFIN− above 0.85 × VBIAS: the RTD is open or FORCE− is unconnected; check the wires at FORCE+ and FORCE−"},
	{1 << 4, "REFIN− below 0.85 × VBIAS with FORCE− open: FORCE− or RTDIN− is shorted to GND; check those wires"},
	{1 << 3, "RTDIN− below 0.85 × VBIAS with FORCE− open: FORCE+ or RTDIN− is shorted to GND; check those wires"},
	{1 << 2, "overvoltage or undervoltage: an input is above VDD or below GND; check the RTD wires for a short to a supply"},
}

// NewMAX31865 connects to a MAX31865 on a borrowed SPI port for an RTD of
// r0 ohms at 0 °C (100 for a PT100, 1000 for a PT1000) in a 2-, 3- or 4-wire
// connection, with a reference resistor of rref ohms (430 on the common
// PT100 boards, 4300 for PT1000). It writes the configuration (bias off,
// the wiring, the 50 Hz filter, faults cleared) and fault thresholds at
// the resistances of −200 and 850 °C, the range of IEC 60751, so an open
// or shorted RTD is reported as such. sleep waits out the bias settling and
// the conversion.
func NewMAX31865(port spi.Port, portName string, r0 float64, wires int, rref float64, sleep Sleep) (*MAX31865, error) {
	a := at{"max31865", "spi " + portName}
	switch {
	case r0 != 100 && r0 != 1000:
		return nil, fmt.Errorf("%s: %s: RTD of %g Ω: want a PT100 (100) or PT1000 (1000)", a.chip, a.where, r0)
	case wires < 2 || wires > 4:
		return nil, fmt.Errorf("%s: %s: %d wires: want 2, 3 or 4", a.chip, a.where, wires)
	case !(rref > r0) || math.IsInf(rref, 0):
		return nil, fmt.Errorf("%s: %s: reference resistor %g Ω: want more than the RTD's %g Ω at 0 °C (430 for a PT100, 4300 for a PT1000)", a.chip, a.where, rref, r0)
	case sleep == nil:
		return nil, fmt.Errorf("%s: %s: no sleep function", a.chip, a.where)
	}
	c, conn, err := spiChip("max31865", port, portName, max31865Speed, max31865Mode)
	if err != nil {
		return nil, err
	}
	d := &MAX31865{c: c, conn: conn, sleep: sleep, cfg: max31865Filter50Hz, r0: r0, rref: rref}
	if wires == 3 {
		d.cfg |= max31865ThreeWire
	}
	hi, lo := d.code(cvdRatio(max31865MaxC)), d.code(cvdRatio(max31865MinC))
	if err := c.open(func() error {
		if err := d.write(max31865Config, d.cfg|max31865FaultClear); err != nil {
			return err
		}
		// The threshold registers have the RTD registers' format: the
		// 15-bit code in D15-D1 ("Fault Threshold Registers (03h-06h)").
		return d.write(max31865Threshold, byte(hi>>7), byte(hi<<1), byte(lo>>7), byte(lo<<1))
	}); err != nil {
		return nil, err
	}
	return d, nil
}

// code is the 15-bit ADC code of a resistance ratio R/R0: R/Rref · 2¹⁵
// ("RTD Resistance Registers (01h-02h)", Table 5).
func (d *MAX31865) code(ratio float64) uint16 {
	return uint16(min(math.Round(ratio*d.r0/d.rref*32768), 32767))
}

// Sense measures the RTD once and returns its temperature.
func (d *MAX31865) Sense(ctx context.Context) ([]Reading, error) {
	var raw uint16
	var status byte
	if err := d.c.do(ctx, "read", func() error {
		var err error
		raw, status, err = d.convert(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	if status != 0 || raw&1 != 0 {
		return nil, fmt.Errorf("%s: %s: %w", d.c.chip, d.c.where, max31865Fault(status))
	}
	ratio := float64(raw>>1) / 32768 * d.rref / d.r0
	r := Reading{Quantity: "temperature", Value: round(cvdTemperature(ratio), 2), Unit: Celsius}
	if err := d.c.check(r, max31865MinC, max31865MaxC); err != nil {
		return nil, err
	}
	return []Reading{r}, nil
}

// convert runs one conversion and returns the RTD registers (code in
// D15-D1, fault flag in D0) and, when the fault flag is set, the fault
// status, which it then clears. The bias is switched off in every case.
func (d *MAX31865) convert(ctx context.Context) (raw uint16, status byte, err error) {
	on := d.cfg | max31865Bias
	steps := []struct {
		cfg  byte
		wait time.Duration
	}{
		{on, max31865TBias},
		{on | max31865FaultAuto, max31865TFault},
		{on | max31865OneShot, max31865TConv},
	}
	for _, s := range steps {
		if err := d.write(max31865Config, s.cfg); err != nil {
			return 0, 0, errors.Join(err, d.write(max31865Config, d.cfg))
		}
		if err := d.sleep(ctx, s.wait); err != nil {
			return 0, 0, errors.Join(err, d.write(max31865Config, d.cfg))
		}
	}
	b, err := d.read(max31865RTD, 2)
	if err := errors.Join(err, d.write(max31865Config, d.cfg)); err != nil {
		return 0, 0, err
	}
	raw = uint16(b[0])<<8 | uint16(b[1])
	if raw&1 == 0 {
		return raw, 0, nil
	}
	b, err = d.read(max31865Status, 1)
	if err != nil {
		return 0, 0, err
	}
	return raw, b[0], d.write(max31865Config, d.cfg|max31865FaultClear)
}

// write writes data to the registers from reg on.
func (d *MAX31865) write(reg byte, data ...byte) error {
	return d.conn.Tx(append([]byte{max31865Write | reg}, data...), nil)
}

// read reads n registers from reg on.
func (d *MAX31865) read(reg byte, n int) ([]byte, error) {
	w := make([]byte, n+1)
	r := make([]byte, n+1)
	w[0] = reg
	if err := d.conn.Tx(w, r); err != nil {
		return nil, err
	}
	return r[1:], nil
}

// max31865Fault names the faults in a Fault Status register value.
func max31865Fault(status byte) error {
	if err := faults(uint32(status), max31865Faults); err != nil {
		return err
	}
	return fmt.Errorf("fault flag set with fault status 0x%02x: check the RTD wiring", status)
}

// cvdRatio is R(t)/R0 by the Callendar–Van Dusen equation (IEC 60751):
// 1 + A·t + B·t² from 0 to 850 °C, plus C·(t − 100)·t³ below 0 °C.
func cvdRatio(t float64) float64 {
	r := 1 + cvdA*t + cvdB*t*t
	if t < 0 {
		r += cvdC * (t - 100) * t * t * t
	}
	return r
}

// cvdTemperature inverts cvdRatio. At or above 0 °C (ratio ≥ 1) the
// quadratic has a closed-form root; below, Newton's method on the quartic
// starts from that root and converges in a few steps.
func cvdTemperature(ratio float64) float64 {
	t := (-cvdA + math.Sqrt(cvdA*cvdA-4*cvdB*(1-ratio))) / (2 * cvdB)
	if ratio >= 1 {
		return t
	}
	for range 20 {
		f := cvdRatio(t) - ratio
		df := cvdA + 2*cvdB*t + cvdC*(4*t*t*t-300*t*t)
		step := f / df
		t -= step
		if math.Abs(step) < 1e-9 {
			break
		}
	}
	return t
}

func max31865Driver() DriverInfo {
	return DriverInfo{
		Name: "max31865", Chip: "Maxim MAX31865: PT100/PT1000 RTD temperature, 2/3/4-wire", Bus: "spi", Keys: []string{"rtd", "wires", "ref_ohms"},
		Quantities: []Reading{{Quantity: "temperature", Unit: Celsius}},
		Open: func(o Opening) (Sensor, error) {
			return NewMAX31865(o.SPI, o.Bus, o.RTDOhms, o.Wires, o.RefOhms, o.Sleep)
		},
	}
}
