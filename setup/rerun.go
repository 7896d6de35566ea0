package setup

import (
	"fmt"
	"regexp"
	"strings"
)

// sections splits a config's text at its table headers, grouped by the
// top-level name: "device", "sensor" (every [[sensor]]), "rule",
// "telegram", "mqtt", "llm", and the others ("heartbeat", "http", ...)
// by their own names. Text before the first table (the header comment) is
// dropped.
func sections(data []byte) (order []string, text map[string]string) {
	text = map[string]string{}
	cur := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			cur, _, _ = strings.Cut(strings.TrimSpace(m[1]), ".")
			if _, ok := text[cur]; !ok {
				order = append(order, cur)
			} else if !strings.HasSuffix(text[cur], "\n\n") {
				text[cur] += "\n"
			}
		}
		if cur == "" {
			continue
		}
		text[cur] += line
	}
	for k, v := range text {
		text[k] = strings.TrimRight(v, "\n") + "\n"
	}
	return order, text
}

var header = regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_.\-"]+)\s*\]\]?\s*(#.*)?$`)

var summaryKey = regexp.MustCompile(`(?m)^\s*(board|name|chat_id|broker|brokers|provider|model|listen)\s*=\s*(.+?)\s*(#.*)?$`)

// rerun shows what the existing config has and asks which parts to
// change; the others are kept as they are, text and all.
func (w *Wizard) rerun(old []byte, plan *Plan) (map[string]bool, error) {
	order, text := sections(old)
	fmt.Fprintf(w.Out, "%s exists. It has:\n", w.Opts.Config)
	for _, k := range order {
		var vals []string
		for _, m := range summaryKey.FindAllStringSubmatch(text[k], -1) {
			vals = append(vals, m[1]+"="+strings.Trim(m[2], `"`))
		}
		fmt.Fprintf(w.Out, "  [%s] %s\n", k, strings.Join(vals, " "))
	}
	fmt.Fprintln(w.Out, "Only what you choose to change is changed; the rest is kept as it is.")
	change := map[string]bool{}
	for _, k := range []string{"device", "sensor", "rule", "telegram", "mqtt", "llm"} {
		t, has := text[k]
		if !has {
			ok, err := w.p.yes(fmt.Sprintf("  set up %s (there is none)?", what[k]), false)
			if err != nil {
				return nil, err
			}
			change[k] = ok
			continue
		}
		ok, err := w.p.yes(fmt.Sprintf("  change %s?", what[k]), false)
		if err != nil {
			return nil, err
		}
		change[k] = ok
		if !ok {
			plan.Keep[k] = t
		}
	}
	for _, k := range order {
		if _, known := what[k]; !known {
			plan.Keep[k] = text[k]
		}
	}
	return change, nil
}

var what = map[string]string{
	"device": "the board ([device])", "sensor": "the sensors", "rule": "the rules",
	"telegram": "Telegram", "mqtt": "MQTT", "llm": "the LLM",
}
