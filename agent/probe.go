package agent

import (
	"context"
	"fmt"
)

// probeSystem is the system prompt of Probe.
const probeSystem = "You are vigil, the watchdog of a small Linux board. A person is setting you up and checks that you answer. Reply with one short friendly sentence."

// Probe sends the model one small request without tools, as `vigil init`
// does to prove that provider, base URL, model and key work, and returns
// the answer's text, redacted. It is retried as Config.MaxRetries says
// (set it negative for one attempt). The error is a *ProviderError
// (ErrUnreachable, ErrRejected, ErrMalformed, ErrNoAnswer) or ctx's, with
// the secrets redacted.
func (a *Agent) Probe(ctx context.Context, question string) (string, error) {
	var dec Decision
	rep, err := a.complete(ctx, &request{model: a.cfg.Model, system: probeSystem, msgs: []message{{role: roleUser, text: question}}}, &dec, 0)
	if err != nil {
		return "", a.red.Error(fmt.Errorf("ask %s: %w", a.cfg.Model, err))
	}
	return a.red.String(rep.text), nil
}
