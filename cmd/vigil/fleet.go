package main

// `vigil fleet`: every device seen on a broker, from the topics the daemons
// publish. It needs no config file and no state; it connects as the daemon
// does (mqtt.ClientOptions: TLS, credentials, ws:// and wss://), subscribes
// and feeds package fleet's view.
//
// Output policy: --once waits for the retained messages (until no retained
// message came for fleetQuiet, at most fleetSettle after subscribing) and
// prints one snapshot. Otherwise it runs until interrupted: on a terminal it
// redraws the table in place, at most once a second and at least once a
// second (ages move and devices turn stale without a message); when stdout
// is not a terminal it prints the table (or one JSON document per line with
// --json) each time something changed, at most once a second.

import (
	"context"
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

	"github.com/vigil-iot/vigil/fleet"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

const (
	fleetQuiet       = 500 * time.Millisecond // --once: no message for this long means the retained ones are in
	fleetSettle      = 5 * time.Second        // --once: print at the latest this long after subscribing
	fleetRedraw      = time.Second            // the live table's pace
	fleetConnectWait = 15 * time.Second
	fleetKeepalive   = 30 * time.Second
)

type fleetFlags struct {
	broker, prefix, clientID            string
	username, passwordEnv, passwordFile string
	caFile, certFile, keyFile           string
	asJSON, once                        bool
	staleAfter                          time.Duration
}

func (e *env) cmdFleet(ctx context.Context, args []string) error {
	var f fleetFlags
	if _, err := e.flags("fleet", args, func(fs *flag.FlagSet) {
		fs.StringVar(&f.broker, "broker", "", "broker URL: tcp://, ssl://, mqtts://, ws:// or wss://")
		fs.StringVar(&f.prefix, "prefix", mqtt.DefaultTopicPrefix, "topic prefix the devices publish under")
		fs.StringVar(&f.clientID, "client-id", "", "MQTT client id (default vigil-fleet-<host>-<pid>)")
		fs.StringVar(&f.username, "username", "", "MQTT user name")
		fs.StringVar(&f.passwordEnv, "password-env", "", "environment variable holding the password")
		fs.StringVar(&f.passwordFile, "password-file", "", "file holding the password (relative to $CREDENTIALS_DIRECTORY when set)")
		fs.StringVar(&f.caFile, "ca-file", "", "CA certificate (PEM) for ssl://, mqtts:// and wss://")
		fs.StringVar(&f.certFile, "cert-file", "", "client certificate (PEM)")
		fs.StringVar(&f.keyFile, "key-file", "", "client key (PEM)")
		fs.BoolVar(&f.asJSON, "json", false, "machine-readable output")
		fs.BoolVar(&f.once, "once", false, "print one snapshot after the retained messages arrived, then exit")
		fs.DurationVar(&f.staleAfter, "stale-after", 0, "silence after which an online device is stale; 0 means 3× its heartbeat interval")
	}, 0); err != nil {
		return err
	}
	if f.broker == "" {
		return usageErr("fleet: --broker is required (e.g. --broker tcp://127.0.0.1:1883)")
	}
	mc, err := f.mqttConfig()
	if err != nil {
		return configErr(err)
	}
	log := e.logger()
	clock := clockwork.NewRealClock()
	view := fleet.New(strings.TrimSuffix(f.prefix, "/"), clock)
	view.StaleAfter = f.staleAfter

	retained := make(chan struct{}, 1)
	opts := mqtt.ClientOptions(mc).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			if err := view.Handle(m.Topic(), m.Payload(), m.Retained()); err != nil {
				log.Warn("fleet: skipped a message", "err", err)
			}
			// Only retained messages tell --once that the broker's
			// backlog is still coming: a busy fleet's live traffic
			// never pauses for fleetQuiet.
			if m.Retained() {
				select {
				case retained <- struct{}{}:
				default:
				}
			}
		})
	subscribed := make(chan error, 1)
	opts.SetOnConnectHandler(func(c paho.Client) {
		// Clean session: subscribe again after every (re)connect.
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
		return fmt.Errorf("fleet: connect to %s: no answer within %s", f.broker, fleetConnectWait)
	}
	if err := tok.Error(); err != nil {
		return fmt.Errorf("fleet: connect to %s: %w", f.broker, err)
	}
	defer cli.Disconnect(250)
	select {
	case err := <-subscribed:
		if err != nil {
			return fmt.Errorf("fleet: subscribe on %s: %w", f.broker, err)
		}
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(fleetConnectWait):
		return fmt.Errorf("fleet: subscribe on %s: no answer within %s", f.broker, fleetConnectWait)
	}

	if f.once {
		settle := time.After(fleetSettle)
		quiet := time.NewTimer(fleetQuiet)
	wait:
		for {
			select {
			case <-retained:
				quiet.Reset(fleetQuiet)
			case <-quiet.C:
				break wait
			case <-settle:
				break wait
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return e.writeFleet(f.asJSON, false, clock.Now(), view.Devices())
	}
	return e.liveFleet(ctx, f.asJSON, view, clock, log)
}

// liveFleet redraws until ctx ends.
func (e *env) liveFleet(ctx context.Context, asJSON bool, view *fleet.View, clock clockwork.Clock, log *slog.Logger) error {
	tty := isTerminal(e.stdout) && !asJSON
	tick := time.NewTicker(fleetRedraw)
	defer tick.Stop()
	dirty := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-view.Changed():
			dirty = true
			continue
		case <-tick.C:
		}
		if !dirty && !tty {
			continue
		}
		dirty = false
		if err := e.writeFleet(asJSON, tty, clock.Now(), view.Devices()); err != nil {
			log.Warn("fleet: write", "err", err)
			return err
		}
	}
}

func (e *env) writeFleet(asJSON, redraw bool, now time.Time, devs []fleet.Device) error {
	if asJSON {
		return fleet.WriteJSON(e.stdout, now, devs)
	}
	if redraw {
		fmt.Fprint(e.stdout, "\x1b[H\x1b[2J") // home, clear screen
	}
	return fleet.WriteTable(e.stdout, now, devs)
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
	mc := mqtt.Config{Broker: f.broker, ClientID: id, Username: f.username, Keepalive: fleetKeepalive}
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
