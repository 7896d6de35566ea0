package daemon

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
	"github.com/vigil-iot/vigil/transport"
)

// announcer is a transport that records what it is told to announce.
type announcer struct{ told chan transport.DeviceInfo }

func (f *announcer) Name() string                              { return "mqtt" }
func (f *announcer) Notify(context.Context, alert.Alert) error { return nil }
func (f *announcer) SetInfo(_ context.Context, in transport.DeviceInfo) error {
	f.told <- in
	return nil
}

// TestInfoAnnouncedAfterEveryChange: after a set, an unset and a checklist
// set the transports are told the config in force at once (what MQTT
// republishes on info): the new interval and a new digest, which a set
// and its unset take there and back.
func TestInfoAnnouncedAfterEveryChange(t *testing.T) {
	f := &announcer{told: make(chan transport.DeviceInfo, 8)}
	a := newWiredApp(t, "", Wiring{Transports: func(context.Context, *config.Config, *store.DB, *Commander, transport.ProblemSource, *slog.Logger) ([]Transport, error) {
		return []Transport{{Notifier: f, Run: func(ctx context.Context) error { <-ctx.Done(); return nil }}}, nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.runCtx = ctx // as cmdRun: a change applies to the running daemon
	sock := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelSocket})
	start := DeviceInfo(a.current())
	if len(start.Config) != config.DigestLen {
		t.Fatalf("digest at start = %q, want %d hex digits", start.Config, config.DigestLen)
	}
	told := func(what string) transport.DeviceInfo {
		t.Helper()
		select {
		case in := <-f.told:
			return in
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the transport was not told the config in force", what)
		}
		return transport.DeviceInfo{}
	}

	if _, err := a.cmds.Set(sock, "heartbeat.interval", "10m"); err != nil {
		t.Fatal(err)
	}
	set := told("set heartbeat.interval 10m")
	if set.Interval != 10*time.Minute || set.Config == start.Config || set.Config != DeviceInfo(a.current()).Config {
		t.Errorf("after the set: told %+v, want interval 10m and a new digest (was %s)", set, start.Config)
	}
	// The device shows the digest it announces: vigil status (and the
	// page's /api/status) name the same 12 digits as vigil fleet.
	if v, err := a.Status(ctx); err != nil || v.Runtime == nil || v.Runtime.Digest != set.Config {
		t.Errorf("status after the set: err %v, runtime %+v; want the digest %s the transports were told", err, v.Runtime, set.Config)
	}
	if _, err := a.cmds.Unset(sock, "heartbeat.interval"); err != nil {
		t.Fatal(err)
	}
	if unset := told("unset heartbeat.interval"); unset.Interval != start.Interval || unset.Config != start.Config {
		t.Errorf("after the unset: told %+v, want %+v again", unset, start)
	}
	if _, err := a.cmds.Checklist(sock, transport.ChecklistSet, "- is the fan on?\n"); err != nil {
		t.Fatal(err)
	}
	if list := told("checklist set"); list.Config == start.Config || list.Interval != start.Interval {
		t.Errorf("after the checklist set: told %+v, want a new digest and the same interval", list)
	}
	if _, err := a.cmds.Checklist(sock, transport.ChecklistReset, ""); err != nil {
		t.Fatal(err)
	}
	if reset := told("checklist reset"); reset.Config != start.Config {
		t.Errorf("after the checklist reset: told %+v, want the digest of the start, %s", reset, start.Config)
	}
}
