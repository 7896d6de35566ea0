package setup

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/device"
)

// DeviceSurvey is the Surveyor of a real run: device.Survey on this
// machine (on the sim board, the I²C bus VIGIL_SIM_I2C emulates).
type DeviceSurvey struct {
	Init   func() error // periph.io's host drivers, before the first bus
	Getenv func(string) string
	Now    func() time.Time // the drivers' clock: each sensor is read once
	Sleep  device.Sleep
}

var _ Surveyor = DeviceSurvey{}

// Survey runs device.Survey and puts what it found as the wizard shows
// and writes it.
func (d DeviceSurvey) Survey(ctx context.Context, board string, buses []int) (*Survey, error) {
	var only []string
	for _, b := range buses {
		only = append(only, strconv.Itoa(b))
	}
	rep, err := device.Survey(ctx, device.SurveyOptions{Board: board, Init: d.Init, Getenv: d.Getenv, OnlyBuses: only, Now: d.Now, Sleep: d.Sleep})
	if err != nil {
		return nil, err
	}
	sv := &Survey{Board: rep.Board.Name, How: rep.Detected}
	for _, p := range append(append(rep.I2C, rep.SPI...), rep.W1...) {
		sv.Lines = append(sv.Lines, portLine(p))
	}
	sv.Lines = append(sv.Lines, rep.Notes...)
	var kept []device.Found
	for _, f := range rep.Sensors {
		if !f.Suggest {
			continue
		}
		kept = append(kept, f)
		s := f.Spec
		fd := Found{Name: s.Name, Driver: s.Driver, Bus: s.Bus, Addr: s.Address, Note: f.Identity.How, Err: f.Err,
			Comment: strings.TrimPrefix(strings.SplitN(f.TOML(), "\n", 2)[0], "# ")}
		for _, kv := range [][2]string{{"serial", s.Serial}, {"device", s.Device}, {"path", s.Path}} {
			if kv[1] != "" {
				fd.Extra = append(fd.Extra, KV{kv[0], strconv.Quote(kv[1])})
			}
		}
		var vals []string
		for _, r := range f.Readings {
			vals = append(vals, fmt.Sprintf("%s %s %s", r.Quantity, strconv.FormatFloat(math.Round(r.Value*100)/100, 'f', -1, 64), r.Unit))
		}
		fd.Reading = strings.Join(vals, ", ")
		sv.Found = append(sv.Found, fd)
	}
	sv.Rules = rules(device.StarterRules(kept))
	sv.Health = rules(device.BoardRules(rep.Board.ThrottlePath != ""))
	return sv, nil
}

func portLine(p device.Port) string {
	kind := map[string]string{"i2c": "I²C bus", "spi": "SPI port", "w1": "1-Wire"}[p.Kind]
	if kind == "" {
		kind = p.Kind
	}
	s := kind + " " + p.Name
	switch {
	case !p.On:
		s += ": off"
		if p.Hint != "" {
			s += " (turn it on: " + p.Hint + ")"
		}
	case p.Err != nil:
		s += ": " + p.Err.Error()
	default:
		s += ": on"
	}
	if p.Note != "" {
		s += "; " + p.Note
	}
	var chips []string
	for _, c := range p.Chips {
		what := c.Chip
		if what == "" {
			what = "unknown"
		}
		chips = append(chips, fmt.Sprintf("0x%02x %s", c.Addr, what))
	}
	if len(chips) > 0 {
		s += "; answering: " + strings.Join(chips, ", ")
	}
	if len(p.Devices) > 0 {
		s += "; devices: " + strings.Join(p.Devices, ", ")
	}
	return s
}

// rules are device's starter rules as the wizard offers them.
func rules(in []device.StarterRule) []Rule {
	var out []Rule
	for _, r := range in {
		out = append(out, Rule{Name: r.Name, When: r.When, Clear: r.Clear, For: durText(r.For), Severity: r.Severity, Message: r.Message, Sensor: r.Sensor})
	}
	return out
}

// durText writes 2m rather than 2m0s; "" for none.
func durText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	s := d.String()
	s = strings.TrimSuffix(s, "m0s")
	if s != d.String() {
		s += "m"
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
