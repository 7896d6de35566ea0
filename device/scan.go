package device

import "periph.io/x/conn/v3/i2c"

// Scan probes the I²C addresses from..to on bus and returns those that
// acknowledge, in order. Like `i2cdetect -r` it reads one byte from each
// address rather than writing: a write, even an empty one, can change the
// state of some chips (EEPROM write pointers, some sensors' commands), and
// periph.io offers no SMBus quick command. A read is harmless for every chip
// vigil knows; on a bus with unknown parts it is still the cautious probe.
func Scan(bus i2c.Bus, from, to uint16) []uint16 {
	var found []uint16
	var b [1]byte
	for a := from; a <= to && a <= 0x7F; a++ {
		if bus.Tx(a, nil, b[:]) == nil {
			found = append(found, a)
		}
	}
	return found
}
