package alert

import (
	"errors"
	"time"
)

// Proposal states.
const (
	ProposalPending  = "pending"
	ProposalApproved = "approved" // in force as a run-time rule
	ProposalRejected = "rejected"
	ProposalDropped  = "dropped" // dropped unseen (the 17th pending), or an approved rule dropped later
)

// ErrNoProposal is wrapped by a decision on an ID or name that names no
// pending proposal (or, for drop, no run-time rule): nothing changes.
var ErrNoProposal = errors.New("no such proposal")

// Proposal is a rule the model proposed (the propose_rule tool), as the
// state file keeps it and every channel shows it: the rule as a [[rule]]
// would hold it, the model's reason, the backtest and the person's
// decision. It is the payload's `proposal` object of a notice alert.
type Proposal struct {
	ID       string    `json:"id"` // "p7": short, for `vigil rule approve p7` and the buttons
	Name     string    `json:"name"`
	When     string    `json:"when"`
	Clear    string    `json:"clear,omitempty"`
	For      string    `json:"for,omitempty"` // a Go duration, as config.toml takes it
	Severity string    `json:"severity"`      // info | warning | critical
	Message  string    `json:"message"`
	Why      string    `json:"why"` // the model's one sentence for the person: untrusted text
	At       time.Time `json:"proposed_at"`
	State    string    `json:"state"` // pending | approved | rejected | dropped
	// DecidedBy and DecidedAt say who approved, rejected or dropped it.
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	Backtest  Backtest  `json:"backtest"`
}

// Backtest is what the proposed rule would have done over the device's
// own history (the kept one-minute rows and the samples in memory), run
// through the sample loop's evaluator.
type Backtest struct {
	From    time.Time `json:"from,omitzero"` // the history replayed
	To      time.Time `json:"to,omitzero"`
	Samples int       `json:"samples"`
	Fired   int       `json:"fired"`    // times it would have fired
	FiringS float64   `json:"firing_s"` // total time firing, in seconds
	First   time.Time `json:"first,omitzero"`
	Last    time.Time `json:"last,omitzero"`
	// OnPrompt: it fires on the readings that prompted the proposal.
	OnPrompt bool    `json:"on_prompt"`
	PerDay   float64 `json:"per_day"` // firings per day of history
	// Noisy: more than [manage] proposal_max_per_day firings a day.
	Noisy bool `json:"noisy"`
}
