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
// for quietFor and every device on the roster (roster.go) is in, at most
// Window (a device's roll-call window, mqtt.RollCallLimit, and a second)
// after the roll call, and prints one snapshot: a device on the roster
// that did not come is missing. When no device at all came, it says so on
// stderr (the broker, the prefix, that neither retained messages nor the
// roll call brought one, and that a device answers once per its window)
// and exits 1: an empty fleet is never silent. Otherwise it runs
// until interrupted, with a roll call every --rollcall: on a terminal it
// redraws the table in place, at most once a second and at least once a
// second (ages move and devices turn stale without a message); when stdout
// is not a terminal it prints the table (or one JSON document per line
// with --json) each time something changed, at most once a second. A live
// view that has seen no device after Settle says so on stderr once, and
// keeps waiting. --firing, --offline and --stale show only those devices
// (any of them); the summary line always counts the whole fleet.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/jonboulle/clockwork"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/termtext"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

const (
	quietFor    = 500 * time.Millisecond           // --once: no retained message or answer for this long means the fleet is in
	settleFor   = mqtt.RollCallLimit + time.Second // --once, do: wait at most this long after the roll call
	redrawEvery = time.Second                      // the live table's pace
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

// Command is `vigil fleet` and `vigil fleet do`: the flags, filled by
// the flag set Define or DefineDo registers, and where it writes.
type Command struct {
	Stdout, Stderr io.Writer
	Terminal       bool // Stdout is a terminal: redraw in place
	Log            *slog.Logger
	// Window is how long --once and do wait for the roll call's answers
	// at most (0: a device's roll-call window and a second).
	Window time.Duration
	// CacheDir holds the roster ("": os.UserCacheDir()).
	CacheDir string

	brokers                             brokerList
	prefix, clientID                    string
	username, passwordEnv, passwordFile string
	caFile, certFile, keyFile           string
	asJSON, once, versions              bool
	staleAfter, rollCall                time.Duration
	filter                              Filter
	do                                  doFlags
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

// listFlag is a flag that may be repeated, each value one or more items
// separated by commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			return fmt.Errorf("empty item in %q", v)
		}
		*l = append(*l, s)
	}
	return nil
}

// defineConn registers the flags of the connection, shared by both verbs.
func (c *Command) defineConn(fs *flag.FlagSet) {
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
}

// Define registers the flags of `vigil fleet` on fs.
func (c *Command) Define(fs *flag.FlagSet) {
	c.defineConn(fs)
	fs.BoolVar(&c.once, "once", false, "print one snapshot once the retained messages and the answers to the roll call are in, then exit")
	fs.BoolVar(&c.versions, "versions", false, "group the devices by version (and config digest)")
	fs.DurationVar(&c.staleAfter, "stale-after", 0, "silence after which an online device is stale; 0 means 3× its heartbeat interval")
	c.rollCall = rollCallDef
	fs.DurationVar(&c.rollCall, "rollcall", rollCallDef, "live: ask every device to answer this often (0: only after connecting; at least "+mqtt.RollCallLimit.String()+", which is how often a device answers)")
	fs.BoolVar(&c.filter.Firing, "firing", false, "show only devices with a problem firing")
	fs.BoolVar(&c.filter.Offline, "offline", false, "show only offline (and missing) devices")
	fs.BoolVar(&c.filter.Stale, "stale", false, "show only stale devices (several filters: any of them)")
	fs.Var((*listFlag)(&c.filter.Tags), "tag", "show only devices tagged `NAME` (repeat, or separate by commas: any of them; with --firing, --offline or --stale: both)")
}

// Run runs `vigil fleet` with the flags Define's flag set parsed and the
// arguments left (none).
func (c *Command) Run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageErr("fleet: unexpected argument %q (to send a command: vigil fleet do VERB ... --select ...)", args[0])
	}
	if c.rollCall != 0 && c.rollCall < mqtt.RollCallLimit {
		return usageErr("fleet: --rollcall %v: must be 0 or at least %v (a device answers at most once per %v)", c.rollCall, mqtt.RollCallLimit, mqtt.RollCallLimit)
	}
	s, err := c.open(ctx, nil)
	if err != nil {
		return err
	}
	defer s.close()
	if c.once {
		devs, err := s.gather(ctx)
		if err != nil {
			return err
		}
		return c.write(false, NewSnapshot(s.clock.Now(), devs, c.filter))
	}
	return c.live(ctx, s)
}

// session is one connection to the broker with the view it feeds.
type session struct {
	c             *Command
	cli           paho.Client
	view          *View
	clock         clockwork.Clock
	prefix, where string
	rollCallTopic string
	activity      chan struct{}
	called        time.Time
	roster        *Roster
	rosterPath    string
}

// open checks the connection flags, connects, subscribes to what feeds
// the view (and, when results is set, to every device's cmd/result,
// handed to it) and calls the roll.
func (c *Command) open(ctx context.Context, results func(id string, payload []byte)) (*session, error) {
	if len(c.brokers) == 0 {
		return nil, usageErr("fleet: --broker is required (e.g. --broker tcp://127.0.0.1:1883)")
	}
	// The daemon's own check: a plain node after a TLS one would get the
	// password in the clear when the TLS node fails.
	if _, err := config.CheckBrokers(c.brokers); err != nil {
		return nil, usageErr("fleet: --broker: %v", err)
	}
	prefix := strings.TrimSuffix(c.prefix, "/")
	if err := config.CheckTopicPrefix(prefix); err != nil {
		return nil, usageErr("fleet: --prefix: %v", err)
	}
	mc, err := c.mqttConfig()
	if err != nil {
		return nil, &ConfigError{err}
	}
	log := c.Log
	clock := clockwork.NewRealClock()
	s := &session{c: c, view: New(prefix, clock), clock: clock, prefix: prefix,
		where: strings.Join(c.brokers, ", "), rollCallTopic: mqtt.RollCallTopic(prefix), activity: make(chan struct{}, 1)}
	s.view.StaleAfter = c.staleAfter
	s.loadRoster()
	resultTopic := prefix + "/+/cmd/result"

	// activity: a retained message (the broker's backlog) or a live info
	// (a device's answer to the roll call, or one coming online) came.
	// Only these tell --once that the fleet is still arriving: a busy
	// fleet's live traffic never pauses for quietFor.
	opts := mqtt.ClientOptions(mc).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			if results != nil && strings.HasSuffix(m.Topic(), "/cmd/result") {
				rest, _ := strings.CutPrefix(m.Topic(), prefix+"/")
				id, _, _ := strings.Cut(rest, "/")
				results(id, m.Payload())
				return
			}
			if err := s.view.Handle(m.Topic(), m.Payload(), m.Retained()); err != nil {
				log.Warn("fleet: skipped a message", "err", err)
			}
			if m.Retained() || strings.HasSuffix(m.Topic(), "/info") {
				select {
				case s.activity <- struct{}{}:
				default:
				}
			}
		})
	subscribed := make(chan error, 1)
	opts.SetOnConnectHandler(func(cl paho.Client) {
		// Clean session: subscribe again after every (re)connect, then
		// call the roll: on another node of a cluster, or after an
		// outage, the view learns what changed meanwhile.
		filters := map[string]byte{}
		for _, t := range s.view.Topics() {
			filters[t] = 1
		}
		if results != nil {
			filters[resultTopic] = 1
		}
		tok := cl.SubscribeMultiple(filters, nil)
		go func() {
			tok.WaitTimeout(connectWait)
			err := tok.Error()
			if err != nil {
				log.Warn("fleet: subscribe", "err", err)
			} else if rc := s.rollCall(cl); rc.WaitTimeout(connectWait) && rc.Error() != nil {
				log.Warn("fleet: roll call", "topic", s.rollCallTopic, "err", rc.Error())
			}
			select {
			case subscribed <- err:
			default:
			}
		}()
	})
	s.cli = paho.NewClient(opts)
	tok := s.cli.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(connectWait):
		return nil, fmt.Errorf("fleet: connect to %s: no answer within %s", s.where, connectWait)
	}
	if err := tok.Error(); err != nil {
		return nil, fmt.Errorf("fleet: connect to %s: %w", s.where, err)
	}
	select {
	case err := <-subscribed:
		if err != nil {
			s.cli.Disconnect(250)
			return nil, fmt.Errorf("fleet: subscribe on %s: %w", s.where, err)
		}
	case <-ctx.Done():
		s.cli.Disconnect(250)
		return nil, ctx.Err()
	case <-time.After(connectWait):
		s.cli.Disconnect(250)
		return nil, fmt.Errorf("fleet: subscribe on %s: no answer within %s", s.where, connectWait)
	}
	s.called = clock.Now()
	return s, nil
}

func (s *session) rollCall(cl paho.Client) paho.Token {
	payload, _ := json.Marshal(struct {
		Time time.Time `json:"time"`
	}{s.clock.Now().UTC()})
	return cl.Publish(s.rollCallTopic, 1, false, payload)
}

// close saves the roster and disconnects.
func (s *session) close() {
	s.saveRoster(s.view.Devices())
	s.cli.Disconnect(250)
}

// loadRoster reads the roster of this broker and prefix; without one (no
// cache directory, a damaged file) the fleet is shown without missing
// devices, and a warning says why.
func (s *session) loadRoster() {
	dir := s.c.CacheDir
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			s.c.Log.Warn("fleet: no roster of the devices seen before (missing ones cannot be shown)", "err", err)
			return
		}
		dir = d
	}
	s.rosterPath = RosterPath(dir, s.c.brokers, s.prefix)
	r, err := LoadRoster(s.rosterPath, s.c.brokers, s.prefix)
	if err != nil {
		s.c.Log.Warn("fleet: roster unreadable, starting a new one", "err", err)
	}
	s.roster = r
}

func (s *session) saveRoster(devs []Device) {
	if s.roster == nil {
		return
	}
	now := s.clock.Now()
	s.roster.Note(devs, now)
	if err := s.roster.Save(s.rosterPath, now); err != nil {
		s.c.Log.Warn("fleet: save the roster", "err", err)
	}
}

// devices is the view's devices and the roster's missing ones, in the
// order of Compare.
func (s *session) devices() []Device {
	devs := s.view.Devices()
	if s.roster != nil {
		s.roster.Fill(devs)
		devs = append(devs, s.roster.Missing(devs, s.clock.Now())...)
		slices.SortFunc(devs, Compare)
	}
	return devs
}

// nobody is the error for a fleet where no device came.
func (s *session) nobody() error {
	return fmt.Errorf("fleet: no device under %s/ on %s: neither retained messages nor the roll call on %s brought any within %s "+
		"(a device answers the roll call at most once per %s, at the end of that window; a vigil from before the window was coalesced "+
		"ignores a roll call inside it: try again in %s)",
		s.prefix, s.where, s.rollCallTopic, s.clock.Since(s.called).Round(100*time.Millisecond), mqtt.RollCallLimit, mqtt.RollCallLimit)
}

// gather waits for the fleet to come in (the retained messages and the
// answers to the roll call: quiet for quietFor, and every device on the
// roster in, at most Window) and returns it with the missing devices;
// no device at all is an error.
func (s *session) gather(ctx context.Context) ([]Device, error) {
	window := cmp.Or(s.c.Window, settleFor)
	settle := time.NewTimer(window - s.clock.Since(s.called))
	defer settle.Stop()
	quiet := time.NewTimer(quietFor)
	defer quiet.Stop()
	for in := false; !in; {
		select {
		case <-s.activity:
			quiet.Reset(quietFor)
			continue
		case <-quiet.C:
			in = s.in()
			if !in {
				quiet.Reset(quietFor)
			}
		case <-settle.C:
			in = true
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	devs := s.devices()
	if len(s.view.Devices()) == 0 {
		return nil, s.nobody()
	}
	s.saveRoster(s.view.Devices())
	return devs, nil
}

// in reports whether the fleet is in: some device came, and every device
// on the roster has said online or offline (its sensors alone, published
// live every few seconds, do not count: the answer to the roll call may
// still be on its way).
func (s *session) in() bool {
	devs := s.view.Devices()
	if len(devs) == 0 {
		return false
	}
	if s.roster == nil {
		return true
	}
	state := make(map[string]string, len(devs))
	for _, d := range devs {
		state[d.ID] = d.State
	}
	for id := range s.roster.Devices {
		if st, ok := state[id]; !ok || st == Unknown {
			return false
		}
	}
	return true
}

// live redraws until ctx ends, calling the roll every c.rollCall.
func (c *Command) live(ctx context.Context, s *session) error {
	tty := c.Terminal && !c.asJSON
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	var again <-chan time.Time
	if c.rollCall > 0 {
		t := time.NewTicker(c.rollCall)
		defer t.Stop()
		again = t.C
	}
	// Missing devices are shown once the roll call had its window.
	settled := false
	empty := time.After(cmp.Or(c.Window, settleFor))
	save := time.NewTicker(time.Minute)
	defer save.Stop()
	dirty := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.view.Changed():
			dirty = true
			continue
		case <-again:
			tok := s.rollCall(s.cli)
			go func() {
				if tok.WaitTimeout(connectWait) && tok.Error() != nil {
					c.Log.Warn("fleet: roll call", "topic", s.rollCallTopic, "err", tok.Error())
				}
			}()
			continue
		case <-empty:
			settled, dirty = true, true
			if len(s.view.Devices()) == 0 {
				fmt.Fprintf(c.Stderr, "vigil: %v; still listening\n", s.nobody())
			}
			continue
		case <-save.C:
			s.saveRoster(s.view.Devices())
			continue
		case <-tick.C:
		}
		if !dirty && !tty {
			continue
		}
		dirty = false
		devs := s.view.Devices()
		if settled {
			devs = s.devices()
		}
		if err := c.write(tty, NewSnapshot(s.clock.Now(), devs, c.filter)); err != nil {
			c.Log.Warn("fleet: write", "err", err)
			return err
		}
	}
}

func (c *Command) write(redraw bool, snap Snapshot) error {
	if c.versions {
		if c.asJSON {
			// The devices of each version shown, with the snapshot.
			return termtext.WriteJSON(c.Stdout, struct {
				Snapshot
				ByVersion []Version `json:"by_version"`
			}{snap, Versions(snap.Devices)})
		}
		return snap.WriteVersions(c.Stdout)
	}
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
	tc, err := mqtt.ReadTLS([3]mqtt.TLSFile{{Name: "--ca-file", Path: c.caFile}, {Name: "--cert-file", Path: c.certFile}, {Name: "--key-file", Path: c.keyFile}},
		os.ReadFile, func(flag string, err error) error { return fmt.Errorf("fleet: %s: %w", flag, err) })
	if err != nil {
		return mc, err
	}
	mc.TLS = tc
	return mc, nil
}
