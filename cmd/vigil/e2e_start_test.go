package main

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestNoDeliveryWarningAtStart: alerts queued while no daemon ran, then
// `vigil run` with the broker up, several times over. The queue drains on
// the first connection and the log never says "delivery failing": the
// attempts before the first connect are no outage. (At 77ff7c0 a start
// warned about one time in three.)
func TestNoDeliveryWarningAtStart(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	live := mosquittotest.Subscribe(t, b.URL(), topicAlert)
	cfg := writeConfig(t, t.TempDir(), mqttConfig(b.URL()))
	const starts, queued = 6, 3
	for i := range starts {
		for range queued {
			if out, errOut, code := runVigil(t, "-c", cfg, "test-alert"); code != 0 {
				t.Fatalf("start %d: vigil test-alert: exit %d\n%s%s", i, code, out, errOut)
			}
		}
		d := startDaemon(t, cfg)
		live.WaitN(topicAlert, (i+1)*queued, 15*time.Second)
		d.waitLog(t, regexp.MustCompile(`msg=alert id=`), 5*time.Second)
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("start %d: vigil did not stop on SIGTERM", i)
		}
		if log := d.logText(); strings.Contains(log, "delivery failing") || strings.Contains(log, "delivery recovered") {
			t.Fatalf("start %d of %d: an outage logged before the first connect:\n%s", i+1, starts, log)
		}
	}
}
