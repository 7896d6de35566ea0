package setup

import (
	"errors"
	"fmt"
)

// Exit codes of vigil init (INIT-SPEC).
const (
	CodeFailed = 1  // refused, or a check failed: the old config is untouched
	CodeUsage  = 2  // a bad flag or variable
	CodeConfig = 78 // the config would not validate: nothing written
)

// Error is a failure with the exit code it means.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ErrExists is the refusal to replace a config without --force.
var ErrExists = errors.New("vigil init changes nothing without --force (a backup is kept)")

func usage(format string, args ...any) error {
	return &Error{CodeUsage, fmt.Errorf(format, args...)}
}

func failed(err error) error { return &Error{CodeFailed, err} }
