package control

import (
	"errors"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// Code is the kind of error a control socket answer carries. An error
// crosses the socket as its text and its code, and the client gives it
// back as an error of the same kind (RemoteError), so the CLI tells
// errors apart with errors.Is and errors.As, never by their text.
type Code string

const (
	CodeConfig      Code = "config"       // a *config.Error, such as a refused set: the CLI exits 78
	CodeNotAllowed  Code = "not_allowed"  // alert.ErrNotAllowed
	CodeNotFound    Code = "not_found"    // manage.ErrNotSet: an unset of a key the overlay does not hold
	CodeUsage       Code = "usage"        // transport.ErrPauseRange: the CLI exits 2
	CodeNotFiring   Code = "not_firing"   // heartbeat.ErrNotFiring: an ack of what is not firing
	CodeNotice      Code = "notice"       // heartbeat.ErrNotice: an ack of a notice
	CodeAmbiguous   Code = "ambiguous"    // heartbeat.ErrAmbiguous: an ack without a name, several firing
	CodeNoProposal  Code = "no_proposal"  // alert.ErrNoProposal: a rule decision on an unknown ID or name
	CodeNoTransport Code = "no_transport" // transport.ErrNoTransport: the CLI exits 2
)

// sentinels are the errors each code but CodeConfig stands for: CodeOf
// reads the table one way, RemoteError.Unwrap the other, so the two
// directions cannot drift apart.
var sentinels = []struct {
	code Code
	err  error
}{
	{CodeNotAllowed, alert.ErrNotAllowed},
	{CodeNotFound, manage.ErrNotSet},
	{CodeUsage, transport.ErrPauseRange},
	{CodeNotFiring, heartbeat.ErrNotFiring},
	{CodeNotice, heartbeat.ErrNotice},
	{CodeAmbiguous, heartbeat.ErrAmbiguous},
	{CodeNoProposal, alert.ErrNoProposal},
	{CodeNoTransport, transport.ErrNoTransport},
}

// CodeOf is the code of err ("" for any other error).
func CodeOf(err error) Code {
	var ce *config.Error
	if errors.As(err, &ce) {
		return CodeConfig
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return ""
}

// RemoteError is an error the daemon answered with: its text, and the
// error its code stands for.
type RemoteError struct {
	Code Code
	Msg  string
}

func (e *RemoteError) Error() string { return e.Msg }

// Unwrap is the error e's code stands for: a *config.Error with e's text
// for CodeConfig, the sentinel for the others, nil for none.
func (e *RemoteError) Unwrap() error {
	if e.Code == CodeConfig {
		return &config.Error{Err: errors.New(e.Msg)}
	}
	for _, s := range sentinels {
		if s.code == e.Code {
			return s.err
		}
	}
	return nil
}
