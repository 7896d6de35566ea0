package heartbeat

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/rule"
)

// countingSensor counts the reads of the sensor it wraps.
type countingSensor struct {
	device.Sensor
	n atomic.Int32
}

func (c *countingSensor) Sense(ctx context.Context) ([]device.Reading, error) {
	c.n.Add(1)
	return c.Sensor.Sense(ctx)
}

func ruleStateOf(t *testing.T, e *Engine) map[string]string {
	t.Helper()
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, r := range st.Rules {
		m[r.Name] = r.State
	}
	return m
}

// TestReconfigureKeepsRuleStateAndAppliesNewRules: a reload keeps a firing
// rule firing by name, judges it by its new clear condition from the next
// sample on, starts added rules and forgets removed ones.
func TestReconfigureKeepsRuleStateAndAppliesNewRules(t *testing.T) {
	h := newHarness(t, nil)
	h.sensor.set(36)
	h.sample()
	if got := ruleStateOf(t, h.e)["too_hot"]; got != RuleFiring {
		t.Fatalf("too_hot = %q before the reload, want firing", got)
	}
	cfg := h.cfg
	cfg.Rules = []Rule{
		{Spec: rule.Spec{Name: "too_hot", When: mustCompile(t, "air.temperature > 40"), Clear: mustCompile(t, "air.temperature < 38")}, Severity: alert.Critical},
		{Spec: rule.Spec{Name: "warm", When: mustCompile(t, "air.temperature > 30")}, Severity: alert.Warning},
	}
	h.e.Reconfigure(cfg, h.e.deps.Sensors, h.e.deps.Thinker)
	got := ruleStateOf(t, h.e)
	if got["too_hot"] != RuleFiring || len(got) != 2 {
		t.Fatalf("rules right after the reload = %v, want too_hot still firing and warm new", got)
	}
	h.sample() // 36: below the new clear, above warm's threshold
	got = ruleStateOf(t, h.e)
	if got["too_hot"] != RuleOK || got["warm"] != RuleFiring {
		t.Errorf("rules after a sample = %v, want too_hot ok (new clear < 38) and warm firing", got)
	}
}

// TestReconfigureSampleInterval: the sample loop samples at once after a
// reload and then at the new interval.
func TestReconfigureSampleInterval(t *testing.T) {
	h := newHarness(t, nil)
	cs := &countingSensor{Sensor: h.sensor}
	sensors := []device.Named{{Name: "air", Sensor: cs}}
	cfg := h.cfg
	h.e.Reconfigure(cfg, sensors, h.e.deps.Thinker)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.e.sampleLoop(ctx) }()
	waitReads := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for cs.n.Load() < want {
			if time.Now().After(deadline) {
				t.Fatalf("reads = %d, want %d", cs.n.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitReads(1)
	h.clock.BlockUntilContext(ctx, 1)
	h.clock.Advance(cfg.SampleInterval) // 2s
	waitReads(2)
	h.clock.BlockUntilContext(ctx, 1)

	cfg.SampleInterval = 10 * time.Second
	h.e.Reconfigure(cfg, sensors, h.e.deps.Thinker)
	waitReads(3) // at once
	h.clock.BlockUntilContext(ctx, 1)
	h.clock.Advance(5 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := cs.n.Load(); n != 3 {
		t.Fatalf("reads = %d 5s after a reload to 10s, want 3", n)
	}
	h.clock.BlockUntilContext(ctx, 1)
	h.clock.Advance(5 * time.Second)
	waitReads(4)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
