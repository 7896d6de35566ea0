package daemon

// Rate policy for changes from afar. Every remote channel (MQTT cmd/,
// Telegram, the status page: what transport.Source.Remote says, the
// channels [manage] remote bounds) may make RemoteWritesPerMinute changes in any minute:
// set, unset, toggle, checklist set and reset, pause, resume, ack and
// test-alert, each of which writes the state file and most of which
// queue a notice. Reads (status, get, logs, notes, checklist show) and
// check (bounded by the daily LLM budget) are not counted. The local
// control socket and the CLI, which only root and the service's own user
// reach, are not limited, nor is the model (manage.CheckModelSet bounds
// it). A change over the rate is refused with transport.ErrRateLimited,
// which every channel shows (MQTT cmd/result, the Telegram reply, the
// page's 429), and the first refusal of a burst queues one notice; the
// burst ends with the next change accepted on that channel. Both steps
// are on the one path of a change (change.go).

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// RemoteWritesPerMinute is how many changes one remote channel may make in
// any minute.
const RemoteWritesPerMinute = 10

const writeWindow = time.Minute

// writeLimiter counts the changes of each remote channel; its zero value
// is ready.
type writeLimiter struct {
	mu sync.Mutex
	ch map[string]*writeWindowState
}

type writeWindowState struct {
	times   []time.Time // the accepted changes of the last writeWindow, oldest first
	noticed bool        // a refusal of the current burst queued its notice
}

// wait says how long channel must wait before its next change (0: it may
// change now), and for a refusal whether it is the first of its burst.
func (l *writeLimiter) wait(channel string, now time.Time) (wait time.Duration, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(channel, now)
	if len(s.times) < RemoteWritesPerMinute {
		return 0, false
	}
	first = !s.noticed
	s.noticed = true
	return s.times[0].Add(writeWindow).Sub(now), first
}

// wrote counts an accepted change of channel, which ends a burst.
func (l *writeLimiter) wrote(channel string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(channel, now)
	s.times = append(s.times, now)
	s.noticed = false
}

// state is channel's window with the changes older than writeWindow gone.
func (l *writeLimiter) state(channel string, now time.Time) *writeWindowState {
	if l.ch == nil {
		l.ch = map[string]*writeWindowState{}
	}
	s := l.ch[channel]
	if s == nil {
		s = &writeWindowState{}
		l.ch[channel] = s
	}
	i := 0
	for i < len(s.times) && now.Sub(s.times[i]) >= writeWindow {
		i++
	}
	s.times = s.times[i:]
	return s
}

// limitWrite refuses a change from a remote channel over the rate; the
// caller reports an accepted change with wrote.
func (c *Commander) limitWrite(ctx context.Context, verb string) error {
	if !remote(ctx) {
		return nil
	}
	src := transport.SourceOf(ctx)
	wait, first := c.app.writes.wait(src.Channel, c.app.clock.Now())
	if wait <= 0 {
		return nil
	}
	wait = max(wait.Round(time.Second), time.Second)
	err := fmt.Errorf("%w: more than %d changes a minute from %s; try again in %s", transport.ErrRateLimited, RemoteWritesPerMinute, src.Channel, wait)
	if !first {
		c.app.log.Debug("command refused: rate", append([]any{"command", verb}, src.LogAttrs()...)...)
		return err
	}
	c.app.log.Warn("command refused: more than "+fmt.Sprint(RemoteWritesPerMinute)+" changes a minute", append([]any{"command", verb}, src.LogAttrs()...)...)
	text := fmt.Sprintf("changes from %s refused: more than %d a minute (%s was the first; the others of this burst are refused without a notice)", src.Channel, RemoteWritesPerMinute, verb)
	if _, nerr := c.app.engine.Notice(ctx, alert.RuleSetting, text); nerr != nil {
		c.app.log.Error("queue the rate limit's notice", "err", nerr)
	}
	return err
}

// wrote counts a change accepted from a remote channel.
func (c *Commander) wrote(ctx context.Context) {
	if remote(ctx) {
		c.app.writes.wrote(transport.SourceOf(ctx).Channel, c.app.clock.Now())
	}
}
