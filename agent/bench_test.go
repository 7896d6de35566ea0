package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkThink measures vigil's own CPU and allocations for one heartbeat
// against an instant local server: prompt, encoding, HTTP, decoding, one
// tool call and the decision.
func BenchmarkThink(b *testing.B) {
	for _, p := range providers {
		b.Run(p, func(b *testing.B) {
			f := newFakeFunc(b, p, func(n int) turn {
				if n%2 == 0 {
					return turn{calls: []call{{"c1", ToolReadSensor, `{"name":"air"}`}}, in: 1000, out: 20}
				}
				return turn{calls: []call{respond("ok", "", "")}, in: 1100, out: 10}
			})
			a, err := New(testConfig(f), nil, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			in := quietInput()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				d, err := a.Think(ctx, in)
				if err != nil || d.Outcome != OutcomeOK {
					b.Fatalf("Think = %+v, %v", d, err)
				}
			}
		})
	}
}

func BenchmarkBuildPrompt(b *testing.B) {
	in := quietInput()
	b.ReportAllocs()
	for b.Loop() {
		BuildPrompt(in)
	}
}

// memoryInput is quietInput as a scheduled heartbeat with the meta
// snapshot filled and four notes of the longest length remember accepts.
func memoryInput() Input {
	in := quietInput()
	in.Meta = Meta{Trigger: "changed", ScheduledAt: in.Now.Add(-3 * time.Second), Interval: 30 * time.Minute,
		FailureStreak: 2, LastErrorClass: "http_5xx"}
	for i := range 4 {
		text := fmt.Sprintf("note %d: soil moisture fell 2 %% in 30 min after the pump ran; freezer door was open at 14:02. ", i+1)
		text = strings.Repeat(text, MaxNoteLen/len(text)+1)
		in.Notes = append(in.Notes, Note{Time: in.Now.Add(-time.Duration(4-i) * time.Hour), Text: clip(text, MaxNoteLen)})
	}
	return in
}

// promptBytes is what the model reads of one heartbeat: system prompt,
// user message and the tools as name, description and schema.
func promptBytes(in Input, tools []toolDef) (system, user, toolBytes int) {
	s, u := BuildPrompt(in)
	for _, td := range tools {
		toolBytes += len(td.name) + len(td.description) + len(td.schema)
	}
	return len(s), len(u), toolBytes
}

// BenchmarkPromptMemory reports the default five-sensor prompt with the
// meta snapshot, four notes of 280 characters and every tool model_may
// can add (pause, interval, notes): prompt-bytes (system + user + tools,
// must stay under 6,000), meta-bytes (what the meta snapshot line adds)
// and notes-bytes (what the four notes add). make bench reports it.
func BenchmarkPromptMemory(b *testing.B) {
	in := memoryInput()
	tools := mainTools(Config{ModelMay: []string{MayPause, MayInterval, MayNotes}, IntervalMin: DefaultIntervalMin, IntervalMax: DefaultIntervalMax})
	sys, user, tb := promptBytes(in, tools)
	noMeta := in
	noMeta.Meta = Meta{}
	_, userNoMeta, _ := promptBytes(noMeta, tools)
	noNotes := in
	noNotes.Notes = nil
	_, userNoNotes, _ := promptBytes(noNotes, tools)
	b.ReportAllocs()
	for b.Loop() {
		BuildPrompt(in)
	}
	b.ReportMetric(float64(sys+user+tb), "prompt-bytes")
	b.ReportMetric(float64(user-userNoMeta), "meta-bytes")
	b.ReportMetric(float64(user-userNoNotes), "notes-bytes")
}

// BenchmarkPromptProposeRule reports what offering propose_rule adds to
// the request (propose-rule-bytes: its name, description and schema) and
// the whole prompt of BenchmarkPromptMemory with it offered and three
// proposals listed (prompt-bytes).
func BenchmarkPromptProposeRule(b *testing.B) {
	in := memoryInput()
	in.Proposed = []Proposed{{"freezer_door_climb", "pending"}, {"warm_afternoon", "rejected"}, {"tank_low", "approved"}}
	cfg := Config{ModelMay: []string{MayPause, MayInterval, MayNotes}, IntervalMin: DefaultIntervalMin, IntervalMax: DefaultIntervalMax}
	_, _, without := promptBytes(in, mainTools(cfg))
	cfg.ModelMay, cfg.Self = append(cfg.ModelMay, MayRules), &fakeProposer{}
	sys, user, tb := promptBytes(in, mainTools(cfg))
	b.ReportAllocs()
	for b.Loop() {
		BuildPrompt(in)
	}
	b.ReportMetric(float64(tb-without), "propose-rule-bytes")
	b.ReportMetric(float64(sys+user+tb), "prompt-bytes")
}
