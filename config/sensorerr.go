package config

// SensorError returns err as an *Error naming the key of the i-th
// [[sensor]] ("sensor.air.bus") with the file and the key's line, or the
// line of the sensor's [[sensor]] header when the key is not set: for
// problems found after Parse against the machine, such as a bus the board
// profile does not name and the machine does not settle.
func (c *Config) SensorError(i int, key string, err error) error {
	s := c.Sensors[i]
	line, ok := c.lines[indexedKey(at("sensor", i, key))]
	if !ok {
		line = s.Line
	}
	return &Error{File: c.file, Key: "sensor." + s.Name + "." + key, Line: line, Err: err}
}
