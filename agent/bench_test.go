package agent

import (
	"context"
	"testing"
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
