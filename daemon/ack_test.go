package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/control"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/logtest"
	"github.com/vigil-iot/vigil/status"
	"github.com/vigil-iot/vigil/transport"
)

// twoFiring are two rules that fire at the first sample of the sim board.
const twoFiring = `
[[rule]]
name = "pressure_up"
when = "air.pressure > 0"
renotify = "1m"

[[rule]]
name = "humid"
when = "air.humidity >= 0"
severity = "critical"
`

// airSensor reads a fixed pressure and humidity.
type airSensor struct{}

func (airSensor) Sense(context.Context) ([]device.Reading, error) {
	return []device.Reading{{Quantity: "pressure", Value: 1013, Unit: device.HectoPascal},
		{Quantity: "humidity", Value: 50, Unit: device.Percent}}, nil
}

// newFiringApp is newOverlayApp with twoFiring and more appended, and the
// air sensor wired, so both rules fire at the first sample.
func newFiringApp(t *testing.T, more string) *App {
	t.Helper()
	sensors := func(*config.Config, *slog.Logger) ([]device.Named, func() error) {
		return []device.Named{{Name: "air", Sensor: airSensor{}}}, func() error { return nil }
	}
	a := newWiredApp(t, twoFiring+more, Wiring{Sensors: sensors})
	if err := a.Engine().SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAckOverTheSocket: vigil ack reaches the daemon over the control
// socket; its refusals keep their kind across it (no name with two
// firing, a rule not firing, a notice), and the ack shows in the status
// text, by socket.
func TestAckOverTheSocket(t *testing.T) {
	a := newFiringApp(t, "")
	ctx := context.Background()
	c := &control.Client{StateDir: a.cfg.Device.StateDir, Sockets: []string{serveControl(t, a)}}
	_, err := c.Call(ctx, control.Request{Cmd: "ack"}, 10*time.Second)
	if !errors.Is(err, heartbeat.ErrAmbiguous) || !strings.Contains(err.Error(), "pressure_up") || !strings.Contains(err.Error(), "humid") {
		t.Errorf("ack with no name and two firing = %v, want heartbeat.ErrAmbiguous naming both", err)
	}
	if _, err := c.Call(ctx, control.Request{Cmd: "ack", Target: "too_hot"}, 10*time.Second); !errors.Is(err, heartbeat.ErrNotFiring) {
		t.Errorf("ack too_hot (not firing) = %v, want heartbeat.ErrNotFiring", err)
	}
	n, err := a.Engine().Notice(ctx, "setting", "heartbeat.interval set to 10m by cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, control.Request{Cmd: "ack", Target: n.ID}, 10*time.Second); !errors.Is(err, heartbeat.ErrNotice) {
		t.Errorf("ack of a notice = %v, want heartbeat.ErrNotice", err)
	}
	resp, err := c.Call(ctx, control.Request{Cmd: "ack", Target: "humid"}, 10*time.Second)
	if err != nil || !strings.HasPrefix(resp.Text, "acknowledged humid (critical: ") || !strings.Contains(resp.Text, "by socket at ") {
		t.Fatalf("ack humid = %q, %v; want it acknowledged by socket", resp.Text, err)
	}
	resp, err = c.Call(ctx, control.Request{Cmd: "ack"}, 10*time.Second)
	if err != nil || !strings.HasPrefix(resp.Text, "acknowledged pressure_up") {
		t.Fatalf("ack with no name, humid acknowledged = %q, %v; want pressure_up, the one left", resp.Text, err)
	}
	resp, err = c.Call(ctx, control.Request{Cmd: "status"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	status.WriteStatus(&b, *resp.Status, true, false)
	// Both fired in one sample: which is older, and listed first, is down
	// to nanoseconds, so each line is looked for on its own.
	for _, want := range []string{"problems: ", "humid        critical  since ", "pressure_up  warning   since ", "acknowledged by socket at "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}

// TestRefusedAckLoggedAsRefused: an ack the engine refuses (a rule that
// is not firing) is logged as refused, with why, not as accepted; one it
// makes is logged as accepted.
func TestRefusedAckLoggedAsRefused(t *testing.T) {
	a := newFiringApp(t, "")
	var log logtest.Buffer
	a.log = log.Logger(slog.LevelInfo)
	ctx := context.Background()
	c := &control.Client{StateDir: a.cfg.Device.StateDir, Sockets: []string{serveControl(t, a)}}
	if _, err := c.Call(ctx, control.Request{Cmd: "ack", Target: "too_hot"}, 10*time.Second); !errors.Is(err, heartbeat.ErrNotFiring) {
		t.Fatalf("ack too_hot (not firing) = %v, want heartbeat.ErrNotFiring", err)
	}
	if got := log.String(); strings.Contains(got, "command accepted") || !strings.Contains(got, `msg="command refused" command="ack too_hot"`) {
		t.Errorf("log after a refused ack:\n%s\nwant a command refused line and no command accepted", got)
	}
	if _, err := c.Call(ctx, control.Request{Cmd: "ack", Target: "humid"}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.Contains(got, `msg="command accepted" command="ack humid"`) {
		t.Errorf("log after an ack:\n%s\nwant a command accepted line", got)
	}
}

// TestAckGatedByRemote: ack is in the default [manage] remote, so
// Telegram may acknowledge; a device whose remote list leaves it out
// refuses it from MQTT, and the CLI may always.
func TestAckGatedByRemote(t *testing.T) {
	a := newFiringApp(t, "")
	ctx := context.Background()
	tg := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelTelegram, Chat: 1, User: 2, Name: "@ann"})
	out, err := a.Commander().Ack(tg, "humid")
	if err != nil || !strings.Contains(out, "by telegram chat 1 user 2 (@ann) at ") {
		t.Errorf("ack from Telegram with the default remote = %q, %v; want it acknowledged by the user, named", out, err)
	}

	b := newFiringApp(t, "\n[manage]\nremote = [\"status\"]\n")
	mq := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelMQTT, Topic: "vigil/e2e/cmd/ack"})
	if _, err := b.Commander().Ack(mq, "humid"); !errors.Is(err, alert.ErrNotAllowed) {
		t.Errorf("ack from MQTT with remote = [status] = %v, want alert.ErrNotAllowed", err)
	}
	cli := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelCLI})
	if out, err := b.Commander().Ack(cli, "humid"); err != nil || !strings.Contains(out, "by cli at ") {
		t.Errorf("ack from the CLI = %q, %v; want it acknowledged", out, err)
	}
}
