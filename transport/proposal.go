package transport

import (
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/alert"
)

// A rule the model proposed, as every channel shows it to a person (the
// Telegram notice, the page, `vigil rules`): the rule in one line and its
// backtest in one line, which starts with "noisy" when it is.

// ProposedRule is p's rule in one line: "air.temperature > 34 for 10s,
// clear air.temperature < 33 → warning: too warm".
func ProposedRule(p alert.Proposal) string {
	s := p.When
	if p.For != "" {
		s += " for " + p.For
	}
	if p.Clear != "" {
		s += ", clear " + p.Clear
	}
	s += " → " + p.Severity
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}

// BacktestText is what the rule would have done over the device's own
// history, in one line with times in loc; a noisy rule's line starts with
// "noisy".
func BacktestText(b alert.Backtest, loc *time.Location) string {
	if b.Samples == 0 {
		return "not tested: no history yet"
	}
	over := fmt.Sprintf("over %s of history (%d samples)", span(b.To.Sub(b.From)), b.Samples)
	s := "would not have fired " + over
	if b.Fired > 0 {
		s = fmt.Sprintf("would have fired %s %s, %.1f a day, %s in all, first %s, last %s", times(b.Fired), over, b.PerDay,
			span(time.Duration(b.FiringS*float64(time.Second))), b.First.In(loc).Format(TimeLayout), b.Last.In(loc).Format(TimeLayout))
	}
	if b.OnPrompt {
		s += "; fires on the readings that prompted it"
	} else {
		s += "; does not fire on the readings that prompted it"
	}
	if b.Noisy {
		s = "noisy: " + s
	}
	return s
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// span is a duration as a person reads it: 47 h, 25m0s, 40s.
func span(d time.Duration) string {
	if d >= 2*time.Hour {
		return fmt.Sprintf("%.0f h", d.Hours())
	}
	return d.Round(time.Second).String()
}
