package heartbeat

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/internal/logtest"
	"github.com/vigil-iot/vigil/store"
)

func (h *harness) reopenWithLog(buf *logtest.Buffer, level slog.Level, notifiers ...Notifier) {
	h.t.Helper()
	log := buf.Logger(level)
	e, err := New(h.cfg, Deps{Clock: h.clock, Wall: h.wall.Now, DB: h.db, Sensors: h.e.deps.Sensors,
		Notifiers: notifiers, Log: log})
	if err != nil {
		h.t.Fatal(err)
	}
	h.e = e
}

func TestDeliveryFailuresAreSummarised(t *testing.T) {
	h := newHarness(t, nil)
	var buf logtest.Buffer
	h.reopenWithLog(&buf, slog.LevelInfo, h.notes)
	h.notes.fail = errors.New("not connected")
	h.flap(3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.e.deliveryLoop(ctx, h.notes) }()
	defer func() { cancel(); <-done }()

	// Six failed attempts, spread over more than a minute of backoff.
	for i := 0; i < 6; i++ {
		h.clock.BlockUntilContext(ctx, 1)
		h.clock.Advance(deliverMaxBackoff)
	}
	h.clock.BlockUntilContext(ctx, 1)
	warnings := regexp.MustCompile(`(?m)^.*level=WARN.*$`).FindAllString(buf.String(), -1)
	if len(warnings) != 1 || !strings.Contains(warnings[0], `msg="rec: delivery failing, 3 alerts waiting: not connected"`) {
		t.Fatalf("warnings during the outage = %q, want exactly one 'rec: delivery failing, 3 alerts waiting: not connected'", warnings)
	}

	h.notes.mu.Lock()
	h.notes.fail = nil
	h.notes.mu.Unlock()
	h.clock.Advance(deliverMaxBackoff)
	waitFor(t, "the recovery line", func() bool { return strings.Contains(buf.String(), "recovered") })
	if n := len(h.notes.alerts()); n != 3 {
		t.Errorf("delivered %d alerts after recovery, want 3", n)
	}
	rec := regexp.MustCompile(`(?m)^.*level=INFO msg="rec: delivery recovered after (\d+m)?\d+s, 3 alerts delivered".*$`).FindAllString(buf.String(), -1)
	if len(rec) != 1 {
		t.Errorf("recovery lines = %q, want one 'rec: delivery recovered after …, 3 alerts delivered'\nlog:\n%s", rec, buf.String())
	}
	if n := strings.Count(buf.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings in all, want 1\nlog:\n%s", n, buf.String())
	}

	// A second outage warns again, once.
	h.notes.mu.Lock()
	h.notes.fail = errors.New("broker gone")
	h.notes.mu.Unlock()
	if _, err := h.e.TestAlert(ctx, alert.Info, ""); err != nil {
		t.Fatal(err)
	}
	h.clock.BlockUntilContext(ctx, 1)
	h.clock.Advance(deliverMaxBackoff)
	h.clock.BlockUntilContext(ctx, 1)
	if n := strings.Count(buf.String(), "delivery failing"); n != 2 {
		t.Errorf("%d 'delivery failing' warnings after a second outage, want 2\nlog:\n%s", n, buf.String())
	}
}

func TestDeliveryAttemptsLoggedWithVerbose(t *testing.T) {
	h := newHarness(t, nil)
	var buf logtest.Buffer
	h.reopenWithLog(&buf, slog.LevelDebug, h.notes)
	h.flap(2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.e.deliveryLoop(ctx, h.notes) }()
	waitFor(t, "2 deliveries", func() bool { return len(h.notes.alerts()) == 2 })
	cancel()
	<-done
	if n := strings.Count(buf.String(), "msg=deliver transport=rec id=test-dev-"); n != 2 {
		t.Errorf("%d delivery attempt lines, want 2\nlog:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "result=delivered") {
		t.Errorf("no result=delivered in\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), `msg="rule evaluated" rule=too_hot event=firing`) ||
		!strings.Contains(buf.String(), "msg=sample air.temperature=") {
		t.Errorf("-v log lacks the sample and rule evaluation lines:\n%s", buf.String())
	}
}

// other is a second transport that records what it was handed.
type other struct{ recorder }

func (o *other) Name() string { return "other" }

func TestTestAlertToOneTransport(t *testing.T) {
	h := newHarness(t, nil)
	var buf logtest.Buffer
	o := &other{}
	h.reopenWithLog(&buf, slog.LevelInfo, h.notes, o)
	a, err := h.e.TestAlert(context.Background(), alert.Warning, "other")
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != alert.SourceSystem || a.Rule != alert.RuleTest || !strings.Contains(a.Summary, "Test alert from vigil on test-dev") {
		t.Errorf("test alert = %+v, want source system, rule test and a clear summary", a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- h.e.deliveryLoop(ctx, h.notes) }()
	go func() { done <- h.e.deliveryLoop(ctx, o) }()
	waitFor(t, "the test alert at the other transport", func() bool { return len(o.alerts()) == 1 })
	waitFor(t, "an empty outbox", func() bool { return len(h.outbox()) == 0 })
	cancel()
	<-done
	<-done
	if got := h.notes.alerts(); len(got) != 0 {
		t.Errorf("transport rec was handed %d alerts, want none (the test alert was for 'other' only)", len(got))
	}
	if got := o.alerts()[0]; got.ID != a.ID || got.Transport != "other" {
		t.Errorf("other got %+v, want %s with transport other", got, a.ID)
	}
	var depth int
	h.db.View(func(tx *store.Tx) error { depth, err = tx.Depth("rec"); return err })
	if depth != 0 {
		t.Errorf("rec's queue = %d, want 0 (acknowledged without sending)", depth)
	}
}
