package web

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/VictoriaMetrics/metrics"
)

// metrics serves Prometheus text: the last readings, rule states, pause,
// budget, queues and counters, plus the process's own metrics (resident
// memory, CPU, Go runtime). Everything is written at the scrape from the
// engine's status: nothing is registered, nothing kept between scrapes.
// (The library's metrics.Set would validate names with regexp: 66 KB more
// on linux/arm64 for names that are constants here.)
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if refuse(w, s.live(), "status") {
		return
	}
	st, err := s.src.Status(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var buf bytes.Buffer
	g := func(name string, v float64) { metrics.WriteGaugeFloat64(&buf, name, v) }
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	g("vigil_up", 1)
	g("vigil_uptime_seconds", st.Uptime.Seconds())
	g("vigil_paused", b2f(!st.PausedUntil.IsZero()))
	g("vigil_clock_plausible", b2f(st.ClockPlausible))
	g("vigil_llm_down", b2f(st.LLMDown))
	g("vigil_consecutive_failures", float64(st.Failures))
	g("vigil_llm_calls_today", float64(st.BudgetCalls))
	g("vigil_llm_tokens_today", float64(st.BudgetTokens))
	g("vigil_llm_calls_per_day", float64(st.BudgetMax))
	g("vigil_outbox_dropped", float64(st.OutboxDropped))
	for name, d := range st.Outbox {
		g(fmt.Sprintf("vigil_outbox_depth{transport=%s}", quote(name)), float64(d))
	}
	for _, ru := range st.Rules {
		g(fmt.Sprintf("vigil_rule_firing{rule=%s}", quote(ru.Name)), b2f(ru.State == "firing"))
	}
	if snap := st.Snapshot; snap != nil {
		for _, k := range snap.Keys() {
			v := snap.Readings[k]
			g(fmt.Sprintf("vigil_reading{reading=%s,unit=%s}", quote(k), quote(string(v.Unit))), v.Value)
		}
		errs := make([]string, 0, len(snap.Errors))
		for name := range snap.Errors {
			errs = append(errs, name)
		}
		sort.Strings(errs)
		for _, name := range errs {
			g(fmt.Sprintf("vigil_sensor_error{sensor=%s}", quote(name)), 1)
		}
	}
	names := make([]string, 0, len(st.Counters))
	for k := range st.Counters {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		g(fmt.Sprintf("vigil_events{event=%s}", quote(k)), float64(st.Counters[k]))
	}
	metrics.WriteProcessMetrics(&buf)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// quote makes a Prometheus label value.
func quote(s string) string {
	return `"` + labelEscaper.Replace(strings.ToValidUTF8(s, "?")) + `"`
}
