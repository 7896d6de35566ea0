package config

import (
	"strings"
	"testing"
)

// TestRuleSpecCompiledOnce: Parse compiles each rule expression once, and
// RuleSpec hands out what it compiled: an apply of a new config compiles
// no rule again.
func TestRuleSpecCompiledOnce(t *testing.T) {
	c, err := Parse(strings.NewReader(`
[[sensor]]
name = "air"
driver = "bme280"

[[rule]]
name = "too_hot"
when = "air.temperature > 30"
clear = "air.temperature < 28"
for = "1m"
`), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.RuleSpec(c.Rules[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.RuleSpec(c.Rules[0])
	if a.When != b.When || a.Clear != b.Clear || a.When == nil || a.Clear == nil {
		t.Errorf("RuleSpec compiled again: when %p then %p, clear %p then %p", a.When, b.When, a.Clear, b.Clear)
	}
	if a.Name != "too_hot" || a.When.String() != "air.temperature > 30" || a.For.String() != "1m0s" {
		t.Errorf("RuleSpec = %+v", a)
	}
}
