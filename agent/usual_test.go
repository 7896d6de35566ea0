package agent

import (
	"strings"
	"testing"
)

// usualInput is quietInput with what is usual for every reading that has
// a baseline (all but the board's flag).
func usualInput() Input {
	in := quietInput()
	in.Usual = map[string]Usual{}
	for k, v := range in.Snapshot.Readings {
		if k != "board.throttled" {
			in.Usual[k] = Usual{Value: v.Value - 0.37, Z: 0.8}
		}
	}
	in.Usual["air.temperature"] = Usual{Value: 15.126, Z: 8.74}
	return in
}

// requestBytes is what one heartbeat's OpenAI request body weighs.
func requestBytes(t *testing.T, in Input) int {
	t.Helper()
	system, user := BuildPrompt(in)
	body, err := openAI{}.encode(&request{model: "gpt-4o-mini", system: system, tools: allTools(),
		msgs: []message{{role: roleUser, text: user}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(body)
}

// TestPromptUsual: each reading carries its usual value and z-score for
// this hour, compactly, and the request grows by at most 15 %.
func TestPromptUsual(t *testing.T) {
	_, user := BuildPrompt(usualInput())
	for _, want := range []string{
		"- air.temperature = 21.43 °C (+0.33) usual 15.13 z=+8.7\n",
		"- freezer.temperature = -18.25 °C (±0) usual -18.62 z=+0.8\n",
		"- board.throttled = false (unchanged)\n",
		"; usual = expected at this hour, z = robust z-score:\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
	before, after := requestBytes(t, quietInput()), requestBytes(t, usualInput())
	t.Logf("request body: %d B without what is usual, %d B with it (+%.1f %%)", before, after, 100*float64(after-before)/float64(before))
	if float64(after) > 1.15*float64(before) {
		t.Errorf("request grew from %d to %d bytes, more than 15 %%", before, after)
	}
	if _, u := BuildPrompt(quietInput()); strings.Contains(u, "usual") {
		t.Errorf("a prompt without baselines mentions usual:\n%s", u)
	}
}
