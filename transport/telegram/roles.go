package telegram

import "github.com/vigil-iot/vigil/transport"

// BotHandler is every role of the daemon the bot's commands call (declared
// once in package transport): /status, /sensors and /logs; /check;
// /pause and /resume; /get, /set and /unset; /toggle; /checklist; /notes;
// /ack and the Acknowledge button; the Approve and Reject buttons of a
// rule the model proposed. Each answers with a short text for the
// reply.
type BotHandler interface {
	transport.Reporter
	transport.Checker
	transport.Pauser
	transport.SettingsEditor
	transport.Toggler
	transport.Checklister
	transport.Notebook
	transport.Acker
	transport.RuleDecider
}
