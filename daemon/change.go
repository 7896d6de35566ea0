package daemon

// The one path of a change. Every command that changes something (a set,
// an unset or a toggle, a checklist set or reset, an ack, a pause or
// resume, a test alert), from every channel (the control socket, MQTT,
// Telegram, the page) and from the CLI working on the state file with no
// daemon (which calls the same Commander on an App of its own), goes
// through Commander.change: the channel's gate ([manage] remote, for a
// remote channel: transport.Source.Remote), the argument's check, the
// rate of changes (ratelimit.go), the INFO line, then the change itself,
// which validates once (a setting: manage.Base.Check), stores, applies
// and audits (settings.go, ack.go), and finally the count of an accepted
// change. Package manage holds the policy and the one validation of a
// set; the daemon holds this path, because only it can apply a change
// and audit it (the engine's notices, the running transports).

import "context"

// A change is one command that changes something.
type change struct {
	verb    string       // what [manage] remote must list for it ("set" for a toggle)
	name    string       // the change as the rate limit's notice names it ("toggle", "checklist set")
	command string       // as the INFO line logs it ("set heartbeat.interval 10m")
	listed  bool         // listed in `vigil status` once accepted (the settings are listed by their audit, an ack once it acted)
	check   func() error // refuses a bad argument before the change is counted (nil: none)
	do      func(context.Context) (string, error)
}

// change runs ch on the one path.
func (c *Commander) change(ctx context.Context, ch change) (string, error) {
	if err := c.gate(ctx, ch.verb); err != nil {
		return "", err
	}
	if ch.check != nil {
		if err := ch.check(); err != nil {
			return "", err
		}
	}
	if err := c.limitWrite(ctx, ch.name); err != nil {
		return "", err
	}
	out, err := ch.do(ctx)
	if err != nil {
		// Refused where it is made (an ack of what is not firing, a
		// set the config refuses): not an accepted command.
		c.refused(ctx, ch.command, err)
		return out, err
	}
	c.accept(ctx, ch.command, ch.listed)
	c.wrote(ctx)
	return out, err
}
