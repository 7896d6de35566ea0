package alert

import "errors"

// ErrNotAllowed is wrapped by a refusal of who asked, not of what was
// asked: [manage] remote does not list the verb for the channel that sent
// it, or the model went beyond heartbeat.model_may or its bounds. It is
// declared here, in the one package every side may import, so that
// package manage (which decides), the daemon, the transports (which
// answer "add it to [manage] remote") and the control socket's code all
// name the same value.
var ErrNotAllowed = errors.New("not allowed")
