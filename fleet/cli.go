package fleet

// The command `vigil fleet`: every device seen on a broker, from the topics
// the daemons publish. It needs no config file and no state; it connects as
// the daemon does (mqtt.ClientOptions: TLS, credentials, ws:// and wss://,
// the nodes of a cluster with failover), subscribes and feeds a View.
// cmd/vigil only parses the line (Command.Define) and maps the errors to
// exit codes (UsageError, ConfigError).
//
// Output policy: after every (re)connect and subscription it publishes a
// roll call (mqtt.RollCallTopic, not retained): every device answers with
// its status, info, heartbeat and problem state, so the view fills on a
// broker that keeps no retained messages for wildcards (RabbitMQ). --once
// waits until neither a retained message nor an answer (a live info) came
// for Quiet, at most Settle after the roll call, and prints one snapshot;
// when no device at all came, it says so on stderr (the broker, the
// prefix, and that neither retained messages nor the roll call brought
// one) and exits 1: an empty fleet is never silent. Otherwise it runs
// until interrupted, with a roll call every --rollcall: on a terminal it
// redraws the table in place, at most once a second and at least once a
// second (ages move and devices turn stale without a message); when stdout
// is not a terminal it prints the table (or one JSON document per line
// with --json) each time something changed, at most once a second. A live
// view that has seen no device after Settle says so on stderr once, and
// keeps waiting. --firing, --offline and --stale show only those devices
// (any of them); the summary line always counts the whole fleet.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

const (
	quietFor    = 500 * time.Millisecond // --once: no retained message or answer for this long means the fleet is in
	settleFor   = 10 * time.Second       // --once: print at the latest this long after the roll call
	redrawEvery = time.Second            // the live table's pace
	connectWait = 15 * time.Second
	keepalive   = 30 * time.Second
	rollCallDef = 5 * time.Minute // default --rollcall
)

// UsageError is a command line that cannot be run as given (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ConfigError is a setting the command cannot use: a TLS file, a
// password file (exit 78).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func usageErr(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// Command is `vigil fleet`: its flags, filled by the flag set Define
// registers, and where it writes.
type Command struct {
	Stdout, Stderr io.Writer
	Terminal       bool // Stdout is a terminal: redraw in place
	Log            *slog.Logger

	brokers                             brokerList
	prefix, clientID                    string
	username, passwordEnv, passwordFile string
	caFile, certFile, keyFile           string
	asJSON, once                        bool
	staleAfter, rollCall                time.Duration
	filter                              Filter
}

// brokerList is --broker: repeated, or URLs separated by commas.
type brokerList []string

func (b *brokerList) String() string { return strings.Join(*b, ",") }

func (b *brokerList) Set(v string) error {
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u == "" {
			return errors.New("empty broker URL")
		}
		*b = append(*b, u)
	}
	return nil
}

// Define registers the command's flags on fs.
func (c *Command) Define(fs *flag.FlagSet) {
	fs.Var(&c.brokers, "broker", "broker `URL`: tcp://, ssl://, mqtts://, ws:// or wss://; repeat it, or separate URLs by commas, for the nodes of a cluster")
	fs.StringVar(&c.prefix, "prefix", mqtt.DefaultTopicPrefix, "topic prefix the devices publish under")
	fs.StringVar(&c.clientID, "client-id", "", "MQTT client id (default vigil-fleet-<host>-<pid>)")
	fs.StringVar(&c.username, "username", "", "MQTT user name")
	fs.StringVar(&c.passwordEnv, "password-env", "", "environment variable holding the password")
	fs.StringVar(&c.passwordFile, "password-file", "", "file holding the password (relative to $CREDENTIALS_DIRECTORY when set)")
	fs.StringVar(&c.caFile, "ca-file", "", "CA certificate (PEM) for ssl://, mqtts:// and wss://")
	fs.StringVar(&c.certFile, "cert-file", "", "client certificate (PEM)")
	fs.StringVar(&c.keyFile, "key-file", "", "client key (PEM)")
	fs.BoolVar(&c.asJSON, "json", false, "machine-readable output")
	fs.BoolVar(&c.once, "once", false, "print one snapshot once the retained messages and the answers to the roll call are in, then exit")
	fs.DurationVar(&c.staleAfter, "stale-after", 0, "silence after which an online device is stale; 0 means 3× its heartbeat interval")
	c.rollCall = rollCallDef
	fs.DurationVar(&c.rollCall, "rollcall", rollCallDef, "live: ask every device to answer this often (0: only after connecting; at least "+mqtt.RollCallLimit.String()+", which is how often a device answers)")
	fs.BoolVar(&c.filter.Firing, "firing", false, "show only devices with a problem firing")
	fs.BoolVar(&c.filter.Offline, "offline", false, "show only offline devices")
	fs.BoolVar(&c.filter.Stale, "stale", false, "show only stale devices (several filters: any of them)")
}

// Run runs the command with the flags Define's flag set parsed.
func (c *Command) Run(ctx context.Context) error {
	if len(c.brokers) == 0 {
		return usageErr("fleet: --broker is required (e.g. --broker tcp://127.0.0.1:1883)")
	}
	// The daemon's own check: a plain node after a TLS one would get the
	// password in the clear when the TLS node fails.
	if _, err := config.CheckBrokers(c.brokers); err != nil {
		return usageErr("fleet: --broker: %v", err)
	}
	prefix := strings.TrimSuffix(c.prefix, "/")
	if err := config.CheckTopicPrefix(prefix); err != nil {
		return usageErr("fleet: --prefix: %v", err)
	}
	if c.rollCall != 0 && c.rollCall < mqtt.RollCallLimit {
		return usageErr("fleet: --rollcall %v: must be 0 or at least %v (a device answers at most once per %v)", c.rollCall, mqtt.RollCallLimit, mqtt.RollCallLimit)
	}
	mc, err := c.mqttConfig()
	if err != nil {
		return &ConfigError{err}
	}
	log := c.Log
	clock := clockwork.NewRealClock()
	view := New(prefix, clock)
	view.StaleAfter = c.staleAfter
	where := strings.Join(c.brokers, ", ")
	rollCallTopic := mqtt.RollCallTopic(prefix)

	// activity: a retained message (the broker's backlog) or a live info
	// (a device's answer to the roll call, or one coming online) came.
	// Only these tell --once that the fleet is still arriving: a busy
	// fleet's live traffic never pauses for quietFor.
	activity := make(chan struct{}, 1)
	opts := mqtt.ClientOptions(mc).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			if err := view.Handle(m.Topic(), m.Payload(), m.Retained()); err != nil {
				log.Warn("fleet: skipped a message", "err", err)
			}
			if m.Retained() || strings.HasSuffix(m.Topic(), "/info") {
				select {
				case activity <- struct{}{}:
				default:
				}
			}
		})
	rollCall := func(cl paho.Client) paho.Token {
		payload, _ := json.Marshal(struct {
			Time time.Time `json:"time"`
		}{clock.Now().UTC()})
		return cl.Publish(rollCallTopic, 1, false, payload)
	}
	subscribed := make(chan error, 1)
	opts.SetOnConnectHandler(func(cl paho.Client) {
		// Clean session: subscribe again after every (re)connect, then
		// call the roll: on another node of a cluster, or after an
		// outage, the view learns what changed meanwhile.
		filters := map[string]byte{}
		for _, t := range view.Topics() {
			filters[t] = 1
		}
		tok := cl.SubscribeMultiple(filters, nil)
		go func() {
			tok.WaitTimeout(connectWait)
			err := tok.Error()
			if err != nil {
				log.Warn("fleet: subscribe", "err", err)
			} else if rc := rollCall(cl); rc.WaitTimeout(connectWait) && rc.Error() != nil {
				log.Warn("fleet: roll call", "topic", rollCallTopic, "err", rc.Error())
			}
			select {
			case subscribed <- err:
			default:
			}
		}()
	})
	cli := paho.NewClient(opts)
	tok := cli.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(connectWait):
		return fmt.Errorf("fleet: connect to %s: no answer within %s", where, connectWait)
	}
	if err := tok.Error(); err != nil {
		return fmt.Errorf("fleet: connect to %s: %w", where, err)
	}
	defer cli.Disconnect(250)
	select {
	case err := <-subscribed:
		if err != nil {
			return fmt.Errorf("fleet: subscribe on %s: %w", where, err)
		}
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(connectWait):
		return fmt.Errorf("fleet: subscribe on %s: no answer within %s", where, connectWait)
	}
	called := clock.Now()
	nobody := func() error {
		return fmt.Errorf("fleet: no device under %s/ on %s: neither retained messages nor the roll call on %s brought any within %s",
			prefix, where, rollCallTopic, clock.Since(called).Round(100*time.Millisecond))
	}

	if c.once {
		settle := time.After(settleFor)
		quiet := time.NewTimer(quietFor)
	wait:
		for {
			select {
			case <-activity:
				quiet.Reset(quietFor)
			case <-quiet.C:
				break wait
			case <-settle:
				break wait
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		devs := view.Devices()
		if len(devs) == 0 {
			return nobody()
		}
		return c.write(false, NewSnapshot(clock.Now(), devs, c.filter))
	}
	return c.live(ctx, view, clock, func() {
		tok := rollCall(cli)
		go func() {
			if tok.WaitTimeout(connectWait) && tok.Error() != nil {
				log.Warn("fleet: roll call", "topic", rollCallTopic, "err", tok.Error())
			}
		}()
	}, nobody)
}

// live redraws until ctx ends, calling the roll every c.rollCall.
func (c *Command) live(ctx context.Context, view *View, clock clockwork.Clock, rollCall func(), nobody func() error) error {
	tty := c.Terminal && !c.asJSON
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	var again <-chan time.Time
	if c.rollCall > 0 {
		t := time.NewTicker(c.rollCall)
		defer t.Stop()
		again = t.C
	}
	empty := time.After(settleFor)
	dirty := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-view.Changed():
			dirty = true
			continue
		case <-again:
			rollCall()
			continue
		case <-empty:
			if len(view.Devices()) == 0 {
				fmt.Fprintf(c.Stderr, "vigil: %v; still listening\n", nobody())
			}
			continue
		case <-tick.C:
		}
		if !dirty && !tty {
			continue
		}
		dirty = false
		if err := c.write(tty, NewSnapshot(clock.Now(), view.Devices(), c.filter)); err != nil {
			c.Log.Warn("fleet: write", "err", err)
			return err
		}
	}
}

func (c *Command) write(redraw bool, snap Snapshot) error {
	if c.asJSON {
		return snap.WriteJSON(c.Stdout)
	}
	if redraw {
		fmt.Fprint(c.Stdout, "\x1b[H\x1b[2J") // home, clear screen
	}
	return snap.WriteTable(c.Stdout)
}

// mqttConfig resolves the flags' secrets and TLS files into the settings
// mqtt.ClientOptions reads. Errors name the flag.
func (c *Command) mqttConfig() (mqtt.Config, error) {
	id := c.clientID
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("vigil-fleet-%s-%d", host, os.Getpid())
	}
	mc := mqtt.Config{Brokers: c.brokers, ClientID: id, Username: c.username, Keepalive: keepalive}
	switch {
	case c.passwordFile != "":
		path := c.passwordFile
		if dir := os.Getenv("CREDENTIALS_DIRECTORY"); dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return mc, fmt.Errorf("fleet: --password-file: %w", err)
		}
		if mc.Password = strings.TrimRight(string(b), "\r\n"); mc.Password == "" {
			return mc, fmt.Errorf("fleet: --password-file: %s is empty", path)
		}
	case c.passwordEnv != "":
		mc.Password = os.Getenv(c.passwordEnv)
	}
	if c.caFile == "" && c.certFile == "" && c.keyFile == "" {
		return mc, nil
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return mc, errors.New("fleet: --cert-file and --key-file go together")
	}
	var pem [3][]byte
	for i, f := range [3]struct{ flag, path string }{{"--ca-file", c.caFile}, {"--cert-file", c.certFile}, {"--key-file", c.keyFile}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return mc, fmt.Errorf("fleet: %s: %w", f.flag, err)
		}
		pem[i] = b
	}
	tc, err := mqtt.TLSConfig(pem[0], pem[1], pem[2])
	if err != nil {
		return mc, fmt.Errorf("fleet: tls: %w", err)
	}
	mc.TLS = tc
	return mc, nil
}
