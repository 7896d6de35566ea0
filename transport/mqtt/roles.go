package mqtt

import "github.com/vigil-iot/vigil/transport"

// CmdHandler is every role of the daemon the cmd topics call (declared once
// in package transport): cmd/check, cmd/pause and cmd/resume, cmd/get,
// cmd/set and cmd/unset, cmd/checklist, cmd/ack and cmd/rule. Each answers with a
// short text for the result topic.
type CmdHandler interface {
	transport.Checker
	transport.Pauser
	transport.SettingsEditor
	transport.Checklister
	transport.Acker
	transport.RuleDecider
}
