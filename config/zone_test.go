package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestZoneWithoutDatabase: on a machine with no zone database (no tzdata,
// a bare binary on a minimal image) a zone name is refused with what to
// install, not as an unknown name; UTC still works.
func TestZoneWithoutDatabase(t *testing.T) {
	defer func(f func(string) (*time.Location, error)) { loadLocation = f }(loadLocation)
	loadLocation = func(name string) (*time.Location, error) {
		if name == "UTC" {
			return time.UTC, nil
		}
		return nil, errors.New("unknown time zone " + name)
	}
	_, err := Parse(strings.NewReader("[device]\ntimezone = \"Europe/Berlin\"\n"), "config.toml")
	if err == nil || !strings.Contains(err.Error(), "config.toml:2") || !strings.Contains(err.Error(), "apt install tzdata") {
		t.Fatalf("Europe/Berlin without a zone database: err = %v, want config.toml:2 and how to install tzdata", err)
	}
	if _, err := Parse(strings.NewReader("[device]\ntimezone = \"UTC\"\n"), "config.toml"); err != nil {
		t.Fatalf("UTC without a zone database: %v", err)
	}
	loadLocation = time.LoadLocation
	_, err = Parse(strings.NewReader("[device]\ntimezone = \"Europe/Berlim\"\n"), "config.toml")
	if err == nil || !strings.Contains(err.Error(), `unknown time zone "Europe/Berlim"`) || strings.Contains(err.Error(), "tzdata") {
		t.Fatalf("a misspelt zone with a database: err = %v, want unknown time zone and no word of tzdata", err)
	}
}
