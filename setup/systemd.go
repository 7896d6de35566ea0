package setup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Unit is vigil.service under the systemd that runs this machine.
type Unit struct{}

var _ Systemd = Unit{}

// Running reports whether systemd runs this machine (sd_booted(3)).
func (Unit) Running() bool {
	st, err := os.Stat("/run/systemd/system")
	return err == nil && st.IsDir()
}

// EnableRestart enables vigil.service and restarts it, so it runs on the
// new config now and at every boot.
func (Unit) EnableRestart(ctx context.Context) error {
	for _, args := range [][]string{{"enable", "vigil.service"}, {"restart", "vigil.service"}} {
		out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
