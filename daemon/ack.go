package daemon

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/transport"
)

// Ack acknowledges a firing problem (heartbeat.Engine.Ack: target is a
// rule, "llm", an alert id, or "" for the only one firing): no reminder
// until it resolves. The transports show it in the background: Telegram
// edits the problem's messages, MQTT republishes its problem sensor.
func (c *Commander) Ack(ctx context.Context, target string) (string, error) {
	return c.change(ctx, change{verb: "ack", name: "ack", command: strings.TrimSpace("ack " + target),
		do: func(ctx context.Context) (string, error) {
			res, err := c.app.engine.Ack(ctx, target)
			if err != nil {
				return "", err
			}
			c.app.engine.NoteCommand(transport.SourceOf(ctx).String(), "ack "+res.Problem.Name()) // listed once it acted
			if !res.Already {
				c.app.acknowledged(res)
			}
			return ackText(res, c.app.current().Device.Location), nil
		}})
}

// ackText is the answer to an ack, with times in loc.
func ackText(res heartbeat.Acked, loc *time.Location) string {
	p := res.Problem
	name := p.Name()
	at := p.AckedAt.In(loc).Format(TimeLayout)
	if res.Already {
		return fmt.Sprintf("%s was acknowledged already, by %s at %s", name, p.AckedBy, at)
	}
	return fmt.Sprintf("acknowledged %s (%s: %s) by %s at %s: no reminders until it resolves", name, p.Severity, p.Summary, p.AckedBy, at)
}

// acknowledged tells every transport that shows acks, each in the
// background (a slow Telegram must not hold the answer); Close waits.
func (a *App) acknowledged(res heartbeat.Acked) {
	ctx := a.runCtx
	if ctx == nil { // the CLI on the state file: no transport runs
		return
	}
	for _, lt := range a.live {
		ack, ok := lt.current().Notifier.(transport.Acknowledger)
		if !ok {
			continue
		}
		a.bg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := ack.Acknowledged(ctx, res.Problem, res.Alerts); err != nil && ctx.Err() == nil {
				a.log.Warn("show an ack", "transport", lt.name, "err", err)
			}
		})
	}
}
