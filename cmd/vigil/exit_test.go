package main

import (
	"fmt"
	"io"
	"testing"

	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/transport"
)

// TestExitCodeOfDaemonErrors: the one place that maps an error to an exit
// code maps the daemon's answers by their kind (the code they crossed the
// socket with), never by their text: a refused set exits 78, a pause out
// of range 2, and the same errors from the CLI working on the state file
// the same.
func TestExitCodeOfDaemonErrors(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{&control.RemoteError{Code: control.CodeConfig, Msg: `heartbeat.interval: must be at least 1m (got "30s")`}, exitConfig},
		{fmt.Errorf("set: %w", &control.RemoteError{Code: control.CodeConfig, Msg: "x"}), exitConfig},
		{&control.RemoteError{Code: control.CodeUsage, Msg: "pause: minutes must be 1..1440 (at most 24 h), got 0"}, exitUsage},
		{transport.CheckPause(0), exitUsage},
		{&control.RemoteError{Code: control.CodeNoTransport, Msg: `"telegram" is not a configured transport (configured: log)`}, exitUsage},
		{&control.RemoteError{Code: control.CodeNotFound, Msg: "heartbeat.interval: not set at run time"}, exitFailure},
		{&control.RemoteError{Msg: "pause: minutes must be 1..1440 (at most 24 h), got 0"}, exitFailure}, // the text alone means nothing
	} {
		if got := exitCode(tt.err, io.Discard); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
