package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/transport"
)

// TestRemoteWritesRateLimited: a remote channel (MQTT, Telegram, the
// page) may make RemoteWritesPerMinute changes a minute; more are refused
// with ErrRateLimited and a text that says so, the first refusal of a
// burst queues one notice (not one per change), and other channels and
// the local socket are not held back. A minute later the channel may
// change again.
func TestRemoteWritesRateLimited(t *testing.T) {
	base := readBase(t, configtest.Write(t, t.TempDir(), configtest.OverlayRules+"\n[manage]\nremote = [\"status\", \"get\", \"set\", \"pause\", \"resume\"]\n"))
	cfg, err := base.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	a, err := New(context.Background(), cfg, Options{Store: StoreWrite, Base: base, Log: slog.New(slog.DiscardHandler), Redactor: base.Red, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	mctx := transport.WithSource(context.Background(), mqttSet)
	tctx := transport.WithSource(context.Background(), telegramSrc)
	sctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	values := []string{"10m", "11m"}

	ok, limited := 0, 0
	for i := range 30 {
		_, err := a.cmds.Set(mctx, "heartbeat.interval", values[i%2])
		switch {
		case err == nil:
			ok++
		case errors.Is(err, transport.ErrRateLimited):
			limited++
			if !strings.Contains(err.Error(), "more than 10 changes a minute from mqtt") {
				t.Errorf("refusal %q does not say why", err)
			}
		default:
			t.Fatalf("mqtt Set #%d = %v", i, err)
		}
	}
	if ok != 10 || limited != 20 {
		t.Errorf("30 mqtt sets in a moment: %d accepted, %d refused as rate-limited; want 10 and 20", ok, limited)
	}
	if _, err := a.cmds.Pause(mctx, 5*time.Minute); !errors.Is(err, transport.ErrRateLimited) {
		t.Errorf("mqtt Pause after the limit = %v, want ErrRateLimited", err)
	}
	notices := queuedInfo(t, a.db)
	refusals := 0
	for _, n := range notices {
		if strings.Contains(n, "refused") {
			refusals++
		}
	}
	if len(notices) != 11 || refusals != 1 {
		t.Errorf("notices after 30 sets = %d (%d about refusals), want 11: one per accepted change and one for the burst of refusals:\n%s", len(notices), refusals, strings.Join(notices, "\n"))
	}
	if _, err := a.cmds.Set(tctx, "heartbeat.interval", "12m"); err != nil {
		t.Errorf("telegram Set while mqtt is limited = %v, want ok (each channel has its own rate)", err)
	}
	for i := range 15 {
		if _, err := a.cmds.Set(sctx, "heartbeat.interval", values[i%2]); err != nil {
			t.Fatalf("socket Set #%d = %v, want ok (the local socket is not limited)", i, err)
		}
	}
	clock.Advance(time.Minute)
	if _, err := a.cmds.Set(mctx, "heartbeat.interval", "13m"); err != nil {
		t.Errorf("mqtt Set a minute later = %v, want ok", err)
	}
}
