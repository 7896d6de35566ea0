package device

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestWriteTableBaseline: given what is usual by reading, the table shows
// it in a BASELINE column, blank for a reading without one and "-" for a
// failed sensor; without, there is no such column.
func TestWriteTableBaseline(t *testing.T) {
	specs := []Spec{{Name: "air", Driver: "bme280"}, {Name: "freezer", Driver: "ds18b20"}}
	sensors := []Named{
		specs[0].Named(fixedReadings{{Quantity: "temperature", Value: 21.4, Unit: Celsius}, {Quantity: "pressure", Value: 1013.25, Unit: HectoPascal}}),
		specs[1].Named(Failed{Err: errors.New("ds18b20: no sensor")}),
	}
	snap := Sense(context.Background(), sensors, time.Unix(0, 0))
	var b strings.Builder
	WriteTable(&b, specs, sensors, snap, map[string]string{"air.temperature": "usual 18.2–22.0 now"})
	want := "" +
		"SENSOR   QUANTITY     VALUE    UNIT  BASELINE             ERROR\n" +
		"air      temperature  21.4     °C    usual 18.2–22.0 now  \n" +
		"air      pressure     1013.25  hPa                        \n" +
		"freezer  -            -        -     -                    ds18b20: no sensor\n"
	if got := b.String(); got != want {
		t.Errorf("WriteTable with a band =\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	WriteTable(&b, specs, sensors, snap, nil)
	if strings.Contains(b.String(), "BASELINE") {
		t.Errorf("WriteTable without bands has a BASELINE column:\n%s", b.String())
	}
}

type fixedReadings []Reading

func (f fixedReadings) Sense(context.Context) ([]Reading, error) {
	return append([]Reading(nil), f...), nil
}
