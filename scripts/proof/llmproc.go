package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// llmFaultsProcess runs the real daemon against the local LLM server and
// takes the server through an outage and garbage answers: vigil must stay
// up, alert once that the LLM is unreachable, keep its rules alerting, and
// say once that the LLM is back.
func (e *relEnv) llmFaultsProcess(ctx context.Context) {
	const suite = "LLM faults"
	llm, err := newLLMServer()
	if err != nil {
		e.add(suite, "real daemon: setup", false, "%v", err)
		return
	}
	defer llm.close()
	id, _ := idWithPhase("llmproc", time.Minute, 3*time.Second)
	c := alertConfig(id, "", 1, false)
	c.LLM = llm.baseURL()
	c.Checklist = "- Is the air fine?\n"
	cfg, err := c.write(filepath.Join(e.work, "llmproc"))
	if err != nil {
		e.add(suite, "real daemon: setup", false, "%v", err)
		return
	}
	d, err := startDaemon([]string{e.bin}, cfg, "VIGIL_PROOF_KEY=sk-proof")
	if err != nil {
		e.add(suite, "real daemon: setup", false, "%v", err)
		return
	}
	defer d.stop(10 * time.Second)
	began := time.Now()
	step := func(re string, timeout time.Duration) error {
		_, err := d.waitLog(ctx, regexp.MustCompile(re), timeout)
		return err
	}
	fail := func(err error) {
		e.add(suite, "real daemon: outage and recovery", false, "%v", err)
	}
	if err := step(`msg=heartbeat outcome=ok`, 30*time.Second); err != nil {
		fail(err)
		return
	}
	llm.setMode("outage")
	outageFrom := time.Now()
	if err := step(`rule=llm_unreachable state=firing`, 3*time.Minute); err != nil {
		fail(err)
		return
	}
	rulesBefore := strings.Count(d.logText(), "msg=alert") - 1
	// A second failed heartbeat in the outage, then garbage for a while.
	time.Sleep(65 * time.Second)
	llm.setMode("broken")
	time.Sleep(30 * time.Second)
	rulesDuring := strings.Count(d.logText(), "msg=alert") - 1 - rulesBefore
	llm.setMode("ok")
	outage := time.Since(outageFrom)
	if err := step(`rule=llm_unreachable state=resolved`, 9*time.Minute); err != nil {
		fail(err)
		return
	}
	log := d.logText()
	firing := strings.Count(log, "rule=llm_unreachable state=firing")
	resolved := strings.Count(log, "rule=llm_unreachable state=resolved")
	alive := !d.exited() && !strings.Contains(log, "panic")
	llm.mu.Lock()
	var fl []string
	for k, n := range llm.faults {
		fl = append(fl, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(fl)
	faults := strings.Join(fl, ", ")
	requests := llm.requests
	llm.mu.Unlock()
	e.add(suite, "real daemon: stays up through an outage and garbage answers", alive,
		"%s of faults (%s), %d requests (budget 96)", outage.Round(time.Second), faults, requests)
	e.add(suite, "real daemon: exactly one llm_unreachable, one resolved", firing == 1 && resolved == 1 && requests <= 96,
		"%d firing, %d resolved in %s", firing, resolved, time.Since(began).Round(time.Second))
	e.add(suite, "real daemon: rules keep alerting while the LLM is down", rulesDuring > 0,
		"%d rule alerts delivered during the outage", rulesDuring)
	e.section(func(r *report) {
		r.h(2, "LLM faults (real daemon)")
		r.p("`vigil run` with `interval = \"1m\"` against the local OpenAI-compatible server: answers ok, then an outage (429/500/503/hang/mid-body close at random) until the first `llm_unreachable`, a minute more of it, 30 s of garbage, 400s and tool loops, then healthy again until vigil reports the LLM reachable. Faults served: %s.", faults)
		r.table([]string{"faulty for", "requests", "llm_unreachable firing", "resolved", "rule alerts during the outage"},
			[][]string{{outage.Round(time.Second).String(), strconv.Itoa(requests), strconv.Itoa(firing), strconv.Itoa(resolved), strconv.Itoa(rulesDuring)}})
	})
}
