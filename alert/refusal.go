package alert

import "errors"

// ErrRefused is matched (errors.Is) by every refusal of a device's policy,
// as opposed to an error of what was asked or of the device: ErrNotAllowed,
// the daemon's rate limit on changes from afar (transport.ErrRateLimited)
// and the bounds on what a remote channel may set (a raise of the daily
// LLM budget, a model [manage] models does not list). A channel that
// answers a machine (MQTT's cmd/result) says "refused" for these.
var ErrRefused = errors.New("refused by the device's policy")

// Refusal returns a new error with the given text that errors.Is
// ErrRefused, for a package's own sentinel of a refusal.
func Refusal(text string) error { return &refusal{text} }

type refusal struct{ text string }

func (r *refusal) Error() string        { return r.text }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

// ErrNotAllowed is wrapped by a refusal of who asked, not of what was
// asked: [manage] remote does not list the verb for the channel that sent
// it, or the model went beyond heartbeat.model_may or its bounds. It is
// declared here, in the one package every side may import, so that
// package manage (which decides), the daemon, the transports (which
// answer "add it to [manage] remote") and the control socket's code all
// name the same value.
var ErrNotAllowed = Refusal("not allowed")
