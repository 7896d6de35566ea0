package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestDaemonFailsOverAcrossBrokers: a real daemon with brokers = [a, b]
// is online on a; a dies; the daemon is online on b within seconds (its
// reconnect backoff is up to a minute), and an alert queued as a died
// arrives on b.
func TestDaemonFailsOverAcrossBrokers(t *testing.T) {
	t.Parallel()
	a := startMosquitto(t)
	b := startMosquitto(t)
	onA := mosquittotest.Subscribe(t, a.URL(), "vigil/+/status")
	onB := mosquittotest.Subscribe(t, b.URL(), "vigil/+/status", "vigil/+/alert")
	cfg := fleetDevice(t, "failover", "", false, `brokers = ["`+a.URL()+`", "`+b.URL()+`"]`)
	writeFile(t, cfg, strings.Replace(readFile(t, cfg), "broker = \"\"\n", "", 1))
	d := startDaemon(t, cfg)
	defer func() { d.logIfFailed(t) }()
	onA.Wait("vigil/failover/status", 15*time.Second, payloadIs("online"))
	a.Kill()
	killed := time.Now()
	if out, errOut, code := runVigil(t, "-c", cfg, "test-alert"); code != 0 {
		t.Fatalf("vigil test-alert: exit %d\n%s%s", code, out, errOut)
	}
	onB.Wait("vigil/failover/status", 5*time.Second, payloadIs("online"))
	t.Logf("online on b %v after a died", time.Since(killed).Round(10*time.Millisecond))
	m := onB.Wait("vigil/failover/alert", 10*time.Second, nil)
	if !strings.Contains(m.Payload, `"rule":"test"`) {
		t.Errorf("alert on b = %s, want the test alert", m.Payload)
	}
}
