package main

// `vigil fleet`: every device seen on a broker, from the topics the daemons
// publish. It needs no config file and no state; it connects as the daemon
// does (mqtt.ClientOptions: TLS, credentials, ws:// and wss://, the nodes of
// a cluster with failover), subscribes and feeds package fleet's view.
//
// Output policy: after every (re)connect and subscription it publishes a
// roll call (mqtt.RollCallTopic, not retained): every device answers with
// its status, info, heartbeat and problem state, so the view fills on a
// broker that keeps no retained messages for wildcards (RabbitMQ). --once
// waits until neither a retained message nor an answer (a live info) came
// for fleetQuiet, at most fleetSettle after the roll call, and prints one
// snapshot; when no device at all came, it says so on stderr (the broker,
// the prefix, and that neither retained messages nor the roll call brought
// one) and exits 1: an empty fleet is never silent. Otherwise it runs until
// interrupted, with a roll call every --rollcall: on a terminal it redraws
// the table in place, at most once a second and at least once a second
// (ages move and devices turn stale without a message); when stdout is not
// a terminal it prints the table (or one JSON document per line with
// --json) each time something changed, at most once a second. A live view
// that has seen no device after fleetSettle says so on stderr once, and
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
	"github.com/vigil-iot/vigil/fleet"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

const (
	fleetQuiet       = 500 * time.Millisecond // --once: no retained message or answer for this long means the fleet is in
	fleetSettle      = 10 * time.Second       // --once: print at the latest this long after the roll call
	fleetRedraw      = time.Second            // the live table's pace
	fleetConnectWait = 15 * time.Second
	fleetKeepalive   = 30 * time.Second
	fleetRollCall    = 5 * time.Minute // default --rollcall
)

type fleetFlags struct {
	brokers                             brokerList
	prefix, clientID                    string
	username, passwordEnv, passwordFile string
	caFile, certFile, keyFile           string
	asJSON, once                        bool
	staleAfter, rollCall                time.Duration
	filter                              fleet.Filter
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

func (e *env) cmdFleet(ctx context.Context, args []string) error {
	f := fleetFlags{rollCall: fleetRollCall}
	if _, err := e.flags("fleet", args, func(fs *flag.FlagSet) {
		fs.Var(&f.brokers, "broker", "broker `URL`: tcp://, ssl://, mqtts://, ws:// or wss://; repeat it, or separate URLs by commas, for the nodes of a cluster")
		fs.StringVar(&f.prefix, "prefix", mqtt.DefaultTopicPrefix, "topic prefix the devices publish under")
		fs.StringVar(&f.clientID, "client-id", "", "MQTT client id (default vigil-fleet-<host>-<pid>)")
		fs.StringVar(&f.username, "username", "", "MQTT user name")
		fs.StringVar(&f.passwordEnv, "password-env", "", "environment variable holding the password")
		fs.StringVar(&f.passwordFile, "password-file", "", "file holding the password (relative to $CREDENTIALS_DIRECTORY when set)")
		fs.StringVar(&f.caFile, "ca-file", "", "CA certificate (PEM) for ssl://, mqtts:// and wss://")
		fs.StringVar(&f.certFile, "cert-file", "", "client certificate (PEM)")
		fs.StringVar(&f.keyFile, "key-file", "", "client key (PEM)")
		fs.BoolVar(&f.asJSON, "json", false, "machine-readable output")
		fs.BoolVar(&f.once, "once", false, "print one snapshot once the retained messages and the answers to the roll call are in, then exit")
		fs.DurationVar(&f.staleAfter, "stale-after", 0, "silence after which an online device is stale; 0 means 3× its heartbeat interval")
		fs.DurationVar(&f.rollCall, "rollcall", fleetRollCall, "live: ask every device to answer this often (0: only after connecting; at least "+mqtt.RollCallLimit.String()+", which is how often a device answers)")
		fs.BoolVar(&f.filter.Firing, "firing", false, "show only devices with a problem firing")
		fs.BoolVar(&f.filter.Offline, "offline", false, "show only offline devices")
		fs.BoolVar(&f.filter.Stale, "stale", false, "show only stale devices (several filters: any of them)")
	}, 0); err != nil {
		return err
	}
	if len(f.brokers) == 0 {
		return usageErr("fleet: --broker is required (e.g. --broker tcp://127.0.0.1:1883)")
	}
	// The daemon's own check: a plain node after a TLS one would get the
	// password in the clear when the TLS node fails.
	if _, err := config.CheckBrokers(f.brokers); err != nil {
		return usageErr("fleet: --broker: %v", err)
	}
	prefix := strings.TrimSuffix(f.prefix, "/")
	if err := config.CheckTopicPrefix(prefix); err != nil {
		return usageErr("fleet: --prefix: %v", err)
	}
	if f.rollCall != 0 && f.rollCall < mqtt.RollCallLimit {
		return usageErr("fleet: --rollcall %v: must be 0 or at least %v (a device answers at most once per %v)", f.rollCall, mqtt.RollCallLimit, mqtt.RollCallLimit)
	}
	mc, err := f.mqttConfig()
	if err != nil {
		return configErr(err)
	}
	log := e.logger()
	clock := clockwork.NewRealClock()
	view := fleet.New(prefix, clock)
	view.StaleAfter = f.staleAfter
	where := strings.Join(f.brokers, ", ")
	rollCallTopic := mqtt.RollCallTopic(prefix)

	// activity: a retained message (the broker's backlog) or a live info
	// (a device's answer to the roll call, or one coming online) came.
	// Only these tell --once that the fleet is still arriving: a busy
	// fleet's live traffic never pauses for fleetQuiet.
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
	rollCall := func(c paho.Client) paho.Token {
		payload, _ := json.Marshal(struct {
			Time time.Time `json:"time"`
		}{clock.Now().UTC()})
		return c.Publish(rollCallTopic, 1, false, payload)
	}
	subscribed := make(chan error, 1)
	opts.SetOnConnectHandler(func(c paho.Client) {
		// Clean session: subscribe again after every (re)connect, then
		// call the roll: on another node of a cluster, or after an
		// outage, the view learns what changed meanwhile.
		filters := map[string]byte{}
		for _, t := range view.Topics() {
			filters[t] = 1
		}
		tok := c.SubscribeMultiple(filters, nil)
		go func() {
			tok.WaitTimeout(fleetConnectWait)
			err := tok.Error()
			if err != nil {
				log.Warn("fleet: subscribe", "err", err)
			} else if rc := rollCall(c); rc.WaitTimeout(fleetConnectWait) && rc.Error() != nil {
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
	case <-time.After(fleetConnectWait):
		return fmt.Errorf("fleet: connect to %s: no answer within %s", where, fleetConnectWait)
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
	case <-time.After(fleetConnectWait):
		return fmt.Errorf("fleet: subscribe on %s: no answer within %s", where, fleetConnectWait)
	}
	called := clock.Now()
	nobody := func() error {
		return fmt.Errorf("fleet: no device under %s/ on %s: neither retained messages nor the roll call on %s brought any within %s",
			prefix, where, rollCallTopic, clock.Since(called).Round(100*time.Millisecond))
	}

	if f.once {
		settle := time.After(fleetSettle)
		quiet := time.NewTimer(fleetQuiet)
	wait:
		for {
			select {
			case <-activity:
				quiet.Reset(fleetQuiet)
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
		return e.writeFleet(f.asJSON, false, fleet.NewSnapshot(clock.Now(), devs, f.filter))
	}
	return e.liveFleet(ctx, f, view, clock, log, func() {
		tok := rollCall(cli)
		go func() {
			if tok.WaitTimeout(fleetConnectWait) && tok.Error() != nil {
				log.Warn("fleet: roll call", "topic", rollCallTopic, "err", tok.Error())
			}
		}()
	}, nobody)
}

// liveFleet redraws until ctx ends, calling the roll every f.rollCall.
func (e *env) liveFleet(ctx context.Context, f fleetFlags, view *fleet.View, clock clockwork.Clock, log *slog.Logger, rollCall func(), nobody func() error) error {
	tty := isTerminal(e.stdout) && !f.asJSON
	tick := time.NewTicker(fleetRedraw)
	defer tick.Stop()
	var again <-chan time.Time
	if f.rollCall > 0 {
		t := time.NewTicker(f.rollCall)
		defer t.Stop()
		again = t.C
	}
	empty := time.After(fleetSettle)
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
				fmt.Fprintf(e.stderr, "vigil: %v; still listening\n", nobody())
			}
			continue
		case <-tick.C:
		}
		if !dirty && !tty {
			continue
		}
		dirty = false
		if err := e.writeFleet(f.asJSON, tty, fleet.NewSnapshot(clock.Now(), view.Devices(), f.filter)); err != nil {
			log.Warn("fleet: write", "err", err)
			return err
		}
	}
}

func (e *env) writeFleet(asJSON, redraw bool, snap fleet.Snapshot) error {
	if asJSON {
		return snap.WriteJSON(e.stdout)
	}
	if redraw {
		fmt.Fprint(e.stdout, "\x1b[H\x1b[2J") // home, clear screen
	}
	return snap.WriteTable(e.stdout)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// mqttConfig resolves the flags' secrets and TLS files into the settings
// mqtt.ClientOptions reads. Errors name the flag.
func (f *fleetFlags) mqttConfig() (mqtt.Config, error) {
	id := f.clientID
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("vigil-fleet-%s-%d", host, os.Getpid())
	}
	mc := mqtt.Config{Brokers: f.brokers, ClientID: id, Username: f.username, Keepalive: fleetKeepalive}
	switch {
	case f.passwordFile != "":
		path := f.passwordFile
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
	case f.passwordEnv != "":
		mc.Password = os.Getenv(f.passwordEnv)
	}
	if f.caFile == "" && f.certFile == "" && f.keyFile == "" {
		return mc, nil
	}
	if (f.certFile == "") != (f.keyFile == "") {
		return mc, errors.New("fleet: --cert-file and --key-file go together")
	}
	tc, err := readTLS([3]tlsFile{{"--ca-file", f.caFile}, {"--cert-file", f.certFile}, {"--key-file", f.keyFile}}, func(flag string, err error) error {
		if errors.Is(err, mqtt.ErrCA) || errors.Is(err, mqtt.ErrClientCert) {
			return fmt.Errorf("fleet: tls: %w", err)
		}
		return fmt.Errorf("fleet: %s: %w", flag, err)
	})
	if err != nil {
		return mc, err
	}
	mc.TLS = tc
	return mc, nil
}
