package control

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vigil-iot/vigil/config"
)

// TestCodesRoundTrip: every error kind the socket carries comes back as
// itself: CodeOf names a wrapped sentinel's code, and the RemoteError the
// client builds from that code unwraps to the same sentinel; a config
// error comes back as a *config.Error with its text; any other error has
// no code and unwraps to nothing.
func TestCodesRoundTrip(t *testing.T) {
	for _, s := range sentinels {
		err := fmt.Errorf("ack: %w", s.err)
		code := CodeOf(err)
		if code != s.code {
			t.Errorf("CodeOf(%v) = %q, want %q", err, code, s.code)
		}
		if back := (&RemoteError{Code: code, Msg: err.Error()}); !errors.Is(back, s.err) || back.Error() != err.Error() {
			t.Errorf("RemoteError{%q} = %v, want it to wrap %v with the text %q", code, back, s.err, err)
		}
	}
	cerr := fmt.Errorf("set: %w", &config.Error{Key: "heartbeat.interval", Err: errors.New("must be at least 1m")})
	if code := CodeOf(cerr); code != CodeConfig {
		t.Errorf("CodeOf(config error) = %q, want %q", code, CodeConfig)
	}
	var ce *config.Error
	if back := (&RemoteError{Code: CodeConfig, Msg: cerr.Error()}); !errors.As(back, &ce) || ce.Err.Error() != cerr.Error() {
		t.Errorf("RemoteError{config} = %v, want a *config.Error with the text %q", back, cerr)
	}
	other := errors.New("disk full")
	if code := CodeOf(other); code != "" {
		t.Errorf("CodeOf(%v) = %q, want none", other, code)
	}
	if back := (&RemoteError{Msg: other.Error()}); errors.Unwrap(back) != nil {
		t.Errorf("RemoteError without a code unwraps to %v, want nil", errors.Unwrap(back))
	}
}
