package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEveryDurationBounded finds every duration key of the config by
// reflection ([[sensor]], [[rule]] and sim = {...} included) and expects
// bounds for it, so a new one cannot pass without them.
func TestEveryDurationBounded(t *testing.T) {
	var walk func(rt reflect.Type, prefix string)
	found := 0
	walk = func(rt reflect.Type, prefix string) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct {
			return
		}
		for i := range rt.NumField() {
			key, _, _ := strings.Cut(rt.Field(i).Tag.Get("toml"), ",")
			if key == "" || key == "-" {
				continue
			}
			if rt.Field(i).Type == durationType {
				found++
				b, ok := durationBounds[prefix+key]
				if !ok {
					t.Errorf("duration key %s%s has no bounds in durationBounds", prefix, key)
					continue
				}
				if b.Min <= 0 || b.Max < b.Min {
					t.Errorf("%s%s: bounds %s make no range", prefix, key, b)
				}
			}
			if rt.Field(i).Type != reflect.TypeOf(time.Time{}) {
				walk(rt.Field(i).Type, prefix+key+".")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	if found != len(durationBounds) {
		t.Errorf("found %d duration keys, durationBounds has %d: one names no key", found, len(durationBounds))
	}
}
