package config

import "github.com/vigil-iot/vigil/device"

// Spec is the sensor as its driver's constructor takes it (package
// device's registry opens it): the checked values, with the defaults
// filled in, calibrations as device applies them and channels as the ADC
// reads them.
func (s Sensor) Spec() device.Spec {
	out := device.Spec{
		Name: s.Name, Driver: s.Driver, Bus: s.Bus, Address: uint16(s.Address),
		Timeout: s.Timeout.Duration, Calibrate: s.calibrations(),
		ShuntOhms: s.ShuntOhms, MaxCurrent: s.MaxCurrent,
		Channels: s.adcChannels(), Gain: s.Gain, VRef: s.VRef,
		RTDOhms: RTDs[s.RTD], Wires: s.Wires, RefOhms: s.RefOhms,
		Serial: s.Serial, W1Dir: s.W1Dir,
		Path: s.Path, Device: s.Device, Quantities: s.Quantities,
	}
	if w := s.Sim; w != nil {
		out.Sim = &device.SimWave{Every: w.Every.Duration, Length: w.Length.Duration, Rise: w.Rise, Start: w.Start, Script: w.Script}
	}
	return out
}

// Specs are the configured sensors as their drivers take them.
func (c *Config) Specs() []device.Spec {
	out := make([]device.Spec, len(c.Sensors))
	for i, s := range c.Sensors {
		out[i] = s.Spec()
		if w := out[i].Sim; w != nil {
			w.Location = c.Device.Location // the week's days and nights are local
		}
	}
	return out
}

// calibrations turns the calibrate table into device's, which device.Sense
// applies before anything sees a reading. Validation has made sure each is
// an offset or two points with different raw values.
func (s Sensor) calibrations() map[string]device.Calibration {
	if len(s.Calibrate) == 0 {
		return nil
	}
	out := make(map[string]device.Calibration, len(s.Calibrate))
	for q, c := range s.Calibrate {
		switch p := c.Points; {
		case c.Offset != nil:
			out[q] = device.Offset(*c.Offset)
		case len(p) == 2 && len(p[0]) == 2 && len(p[1]) == 2:
			out[q] = device.TwoPoint(p[0][0], p[0][1], p[1][0], p[1][1])
		}
	}
	return out
}

// adcChannels maps an ADC's configured channels to the driver's: a bare
// number reads volts as chN; a table maps volts (default 0 to vref)
// linearly to values (default: the volts).
func (s Sensor) adcChannels() []device.ADCChannel {
	if len(s.Channels) == 0 {
		return nil
	}
	out := make([]device.ADCChannel, 0, len(s.Channels))
	for _, c := range s.Channels {
		if c.Quantity == "" {
			out = append(out, device.VoltsChannel(c.Channel))
			continue
		}
		ch := device.ADCChannel{Channel: c.Channel, Quantity: c.Quantity, Unit: device.Unit(c.Unit), Volts: [2]float64{0, s.VRef}}
		if len(c.Volts) == 2 {
			ch.Volts = [2]float64{c.Volts[0], c.Volts[1]}
		}
		ch.Values = ch.Volts
		if len(c.Values) == 2 {
			ch.Values = [2]float64{c.Values[0], c.Values[1]}
		}
		out = append(out, ch)
	}
	return out
}
