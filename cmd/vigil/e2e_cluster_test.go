package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/fleet"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/internal/rabbitmqtest"
)

// The broker facts behind docs/fleet.md's table "What each broker does
// with vigil's topics", measured with real `vigil run` daemons: does a
// fresh subscription get the retained messages through a wildcard and
// through the exact topic, on the node the device is on and on another;
// does a node that stops publish its clients' Last Wills; and how long
// after a device freezes (SIGSTOP: its TCP connection open, nothing sent,
// as in a power cut the network did not see) the broker publishes its
// Will, as a multiple of the keepalive. Each test logs one "BROKER FACTS"
// line with the numbers; the doc's table quotes them.

// clusterKeepalive is the daemons' keepalive here: the minimum vigil
// takes, so the Will waits stay short.
const clusterKeepalive = 5 * time.Second

// clusterDevice writes the config of a fleet member (sensors sampled and
// published every second: a frozen one falls silent at once) with mqtt,
// the [mqtt] table's broker line(s), the cluster tests' keepalive and
// extra (rules) at the end. It returns the config's path.
func clusterDevice(t *testing.T, id, mqtt, extra string) string {
	t.Helper()
	return fleetDeviceWith(t, id, mqtt, clusterKeepalive, extra)
}

// brokerFacts is what one broker did.
type brokerFacts struct {
	wildcardRetained bool // a fresh vigil/+/+ subscription got the retained status
	exactRetained    bool // a fresh vigil/<id>/status subscription got it
	otherNode        bool // ... on another node of the cluster
	willDelays       []time.Duration
}

func (f brokerFacts) String() string {
	s := slices.Clone(f.willDelays)
	slices.Sort(s)
	k := clusterKeepalive.Seconds()
	return fmt.Sprintf("retained_via_wildcard=%t retained_exact_topic=%t retained_exact_other_node=%t keepalive=%s will_after_sigstop=%v factor_min=%.2f factor_max=%.2f",
		f.wildcardRetained, f.exactRetained, f.otherNode, clusterKeepalive,
		f.willDelays, s[0].Seconds()/k, s[len(s)-1].Seconds()/k)
}

// retainedOn subscribes afresh to filter on url and reports whether the
// retained status of id came within wait.
func retainedOn(t *testing.T, url, filter, id string, wait time.Duration) bool {
	t.Helper()
	sub := mosquittotest.Subscribe(t, url, filter)
	m, ok := sub.Maybe("vigil/"+id+"/status", wait)
	return ok && m.Retained
}

// offlineTimes polls rec until each of ids has an "offline" status, and
// returns for each the time from since until it was seen (to within 20
// ms); it fails the test after limit.
func offlineTimes(t *testing.T, rec *mosquittotest.Subscriber, ids []string, since time.Time, limit time.Duration) []time.Duration {
	t.Helper()
	seen := map[string]time.Duration{}
	for len(seen) < len(ids) {
		for _, id := range ids {
			if _, ok := seen[id]; ok {
				continue
			}
			if slices.ContainsFunc(rec.On("vigil/"+id+"/status"), payloadIs("offline")) {
				seen[id] = time.Since(since)
			}
		}
		if time.Since(since) > limit {
			t.Fatalf("no Will (offline) within %s for %d of %v", limit, len(ids)-len(seen), ids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out []time.Duration
	for _, id := range ids {
		out = append(out, seen[id])
	}
	return out
}

// measureFacts starts three devices on dev (one broker URL), checks how
// their retained status reaches fresh subscribers on dev and on other
// (another node's URL, or "" for none), then freezes all three and times
// their Wills, as seen by a subscriber on dev.
func measureFacts(t *testing.T, name, dev, other string) brokerFacts {
	t.Helper()
	ids := []string{name + "-0", name + "-1", name + "-2"}
	rec := mosquittotest.Subscribe(t, dev, "vigil/+/status")
	var daemons []*child
	for _, id := range ids {
		daemons = append(daemons, startDaemon(t, clusterDevice(t, id, fmt.Sprintf("broker = %q", dev), "")))
	}
	// One more device that stays up, publishing every second, as on a
	// fleet's broker, which is never idle.
	startDaemon(t, clusterDevice(t, name+"-busy", fmt.Sprintf("broker = %q", dev), ""))
	for _, id := range ids {
		rec.Wait("vigil/"+id+"/status", 30*time.Second, payloadIs("online"))
	}

	var f brokerFacts
	f.wildcardRetained = retainedOn(t, dev, "vigil/+/+", ids[0], 2*time.Second)
	f.exactRetained = retainedOn(t, dev, "vigil/"+ids[0]+"/status", ids[0], 2*time.Second)
	if other != "" {
		f.otherNode = retainedOn(t, other, "vigil/"+ids[0]+"/status", ids[0], 2*time.Second)
	}

	// Freeze them a third of a keepalive apart, so that a broker that
	// checks its clients on a coarse timer shows its spread.
	var frozen []time.Time
	for i, d := range daemons {
		if i > 0 {
			time.Sleep(clusterKeepalive / 3)
		}
		frozen = append(frozen, time.Now())
		if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.cmd.Process.Signal(syscall.SIGCONT) })
	}
	at := offlineTimes(t, rec, ids, frozen[0], 6*clusterKeepalive)
	for i := range ids {
		f.willDelays = append(f.willDelays, (at[i] - frozen[i].Sub(frozen[0])).Round(10*time.Millisecond))
	}
	return f
}

// TestBrokerFactsMosquitto measures mosquitto (one node): retained
// messages reach every subscription. The Will comes 1.5 × keepalive after
// the last packet, as MQTT 3.1.1 says, plus up to 5 s: mosquitto 2.0
// checks its clients' keepalives once every 5 s (src/keepalive.c), so
// with keepalive 5s the factor is up to 2.5.
func TestBrokerFactsMosquitto(t *testing.T) {
	t.Parallel()
	b := startMosquitto(t)
	f := measureFacts(t, "mosq", b.URL(), "")
	t.Logf("BROKER FACTS mosquitto: %s", f)
	if !f.wildcardRetained || !f.exactRetained {
		t.Errorf("mosquitto: retained status through a wildcard %t, exact %t; want both (docs/fleet.md says so)", f.wildcardRetained, f.exactRetained)
	}
	checkWillDelay(t, "mosquitto", f, clusterKeepalive*3/2-time.Second, clusterKeepalive*3/2+6*time.Second)
}

// checkWillDelay checks the measured Will delays after SIGSTOP against the
// range docs/fleet.md gives for the broker. (lo allows for the second a
// device may have been silent before it froze.)
func checkWillDelay(t *testing.T, broker string, f brokerFacts, lo, hi time.Duration) {
	t.Helper()
	for _, d := range f.willDelays {
		if d < lo || d > hi {
			t.Errorf("%s: Will %s after SIGSTOP with keepalive %s (%.2f ×), want between %s and %s (docs/fleet.md)",
				broker, d, clusterKeepalive, d.Seconds()/clusterKeepalive.Seconds(), lo, hi)
		}
	}
}

// TestRabbitMQCluster runs vigil on Debian's RabbitMQ 3.10 with its MQTT
// plugin, three nodes clustered on loopback (internal/rabbitmqtest; the
// test skips with one line when rabbitmq-server is not installed). It
// measures the broker facts docs/fleet.md gives for RabbitMQ, and runs
// its rabbitmqctl permission lines (acl).
func TestRabbitMQCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three RabbitMQ nodes")
	}
	t.Parallel()
	c := rabbitmqtest.Start(t, 3)
	a, b := c.Nodes[0], c.Nodes[1]

	t.Run("facts", func(t *testing.T) {
		f := measureFacts(t, "rmq", a.URL(), b.URL())
		t.Logf("BROKER FACTS rabbitmq: %s", f)
		if f.wildcardRetained || !f.exactRetained || f.otherNode {
			t.Errorf("rabbitmq: retained status through a wildcard %t, exact topic %t, exact on another node %t; docs/fleet.md says false, true, false",
				f.wildcardRetained, f.exactRetained, f.otherNode)
		}
		// Measured here: 1.9 to 2.9 × keepalive.
		checkWillDelay(t, "rabbitmq", f, clusterKeepalive*3/2-time.Second, clusterKeepalive*7/2)
	})

	// A node that stops cleanly closes its clients' connections: does the
	// rest of the cluster hear their Wills?
	t.Run("node-stop-will", func(t *testing.T) {
		const id = "rmq-stop"
		rec := mosquittotest.Subscribe(t, b.URL(), "vigil/"+id+"/status")
		d := startDaemon(t, clusterDevice(t, id, fmt.Sprintf("broker = %q", a.URL()), ""))
		rec.Wait("vigil/"+id+"/status", 30*time.Second, payloadIs("online"))
		a.Stop()
		will := false
		for end := time.Now().Add(3 * clusterKeepalive); time.Now().Before(end) && !will; time.Sleep(50 * time.Millisecond) {
			will = slices.ContainsFunc(rec.On("vigil/"+id+"/status"), payloadIs("offline"))
		}
		d.kill()
		a.Start()
		t.Logf("BROKER FACTS rabbitmq: will_on_node_stop=%t (watched %s on another node)", will, 3*clusterKeepalive)
		if will {
			t.Errorf("rabbitmq published the Will of a client of a node that stopped; docs/fleet.md says it does not")
		}
	})

	t.Run("fleet", func(t *testing.T) { clusterFleet(t, c) })
	t.Run("acl", func(t *testing.T) { clusterACL(t, c) })
	t.Run("failover", func(t *testing.T) { clusterFailover(t, c) })
}

// clusterFleet is issue 33 on the cluster: four devices on node c, every
// vigil fleet on node b. Two --once runs 1 s apart both list every device
// (the second inside the devices' roll-call window: they answer at its
// end); fleet do set on tag=north changes the north device that allows it
// and reports the one whose [manage] remote lacks set as refused (exit
// 1); a SIGKILLed device, whose retained Will stays on node c out of a
// wildcard's reach, is missing or offline in the next --once.
func clusterFleet(t *testing.T, c *rabbitmqtest.Cluster) {
	b, cn := c.Nodes[1], c.Nodes[2]
	ids := []string{"rmq-n0", "rmq-n1", "rmq-s", "rmq-k"}
	rec := mosquittotest.Subscribe(t, cn.URL(), "vigil/+/status")
	daemons := map[string]*child{}
	for _, id := range ids {
		remote := `"status", "set"`
		if id == "rmq-n1" {
			remote = `"status"`
		}
		cfg := clusterDevice(t, id, fmt.Sprintf("broker = %q\ncommands = true", cn.URL()), "\n[manage]\nremote = ["+remote+"]\n")
		if strings.HasPrefix(id, "rmq-n") {
			tagDevice(t, cfg, "north")
		}
		daemons[id] = startDaemon(t, cfg)
	}
	for _, id := range ids {
		rec.Wait("vigil/"+id+"/status", 30*time.Second, payloadIs("online"))
	}
	all := func(run string, devs map[string]fleet.Device) {
		t.Helper()
		for _, id := range ids {
			if d, ok := devs[id]; !ok || d.State != fleet.Online {
				t.Errorf("%s: %s = %+v (listed %v), want online", run, id, d, ok)
			}
		}
	}
	all("first --once on node b", fleetOnce(t, b.URL()))
	time.Sleep(time.Second)
	started := time.Now()
	all("second --once, 1 s later", fleetOnce(t, b.URL()))
	t.Logf("CLUSTER FLEET: the second --once took %s", time.Since(started).Round(100*time.Millisecond))

	out, errOut, code := runVigil(t, "fleet", "do", "set", "heartbeat.interval", "10m", "--select", "tag=north", "--broker", b.URL(), "--yes")
	t.Logf("fleet do set on node b:\n%s", out)
	if code != 1 || !regexp.MustCompile(`(?m)^rmq-n0\s+online\s+ok$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^rmq-n1\s+online\s+refused: not allowed: add "set" to \[manage\] remote$`).MatchString(out) ||
		!strings.Contains(out, "\n2 devices: 1 ok, 1 refused\n") {
		t.Errorf("fleet do set --select tag=north on node b: exit %d, stderr %s; want 1, n0 ok and n1 refused", code, errOut)
	}

	daemons["rmq-k"].kill()
	devs := fleetOnce(t, b.URL())
	if d := devs["rmq-k"]; d.State != fleet.Missing && d.State != fleet.Offline {
		t.Errorf("--once on node b after rmq-k was SIGKILLed: %+v, want missing or offline", d)
	}
	if d := devs["rmq-n0"]; d.Interval != fleet.Duration(10*time.Minute) {
		t.Errorf("rmq-n0 after fleet do set: interval %v, want 10m", time.Duration(d.Interval))
	}
	if d := devs["rmq-n1"]; d.Interval != fleet.Duration(time.Minute) {
		t.Errorf("rmq-n1 (refused): interval %v, want 1m", time.Duration(d.Interval))
	}
}

// clusterACL runs the rabbitmqctl lines of docs/fleet.md's block
// "rabbitmq-acl", as written there, for the doc's three accounts (a
// device, the viewer, the operator), and checks them with real clients:
// a `vigil run` logged in as its device id (on node c) gets its status,
// info and alerts through to the viewer (on node b) and answers the
// viewer's roll call; with the device's credentials, publishing as
// another device or on its own cmd/… reaches no one; the viewer cannot
// command; the operator can (vigil fleet do check).
func clusterACL(t *testing.T, c *rabbitmqtest.Cluster) {
	b, cn := c.Nodes[1], c.Nodes[2]
	// The doc's names: its patterns hold {username}, not these.
	const dev, viewerUser, opUser = "greenhouse-pi", "fleet-viewer", "operator"
	for _, u := range []string{dev, viewerUser, opUser} {
		if out, err := c.Ctl(b, "add_user", u, "pw-"+u); err != nil {
			t.Fatalf("rabbitmqctl add_user %s: %v\n%s", u, err, out)
		}
	}
	for _, args := range shellCommands(t, docBlock(t, "rabbitmq-acl")) {
		if args[0] != "rabbitmqctl" {
			t.Fatalf("docs/fleet.md, block rabbitmq-acl: %q is not a rabbitmqctl line", strings.Join(args, " "))
		}
		if out, err := c.Ctl(b, args[1:]...); err != nil {
			t.Fatalf("docs/fleet.md, block rabbitmq-acl: %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	dir := t.TempDir()
	pwFile := func(u string) string {
		p := filepath.Join(dir, u+".pw")
		if err := os.WriteFile(p, []byte("pw-"+u+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	as := func(u string) mosquittotest.SubscriberOptions {
		return mosquittotest.SubscriberOptions{Configure: func(o *paho.ClientOptions) { o.SetUsername(u).SetPassword("pw-" + u) }}
	}
	viewer := mosquittotest.SubscribeWith(t, b.URL(), as(viewerUser), "vigil/#")

	started := time.Now()
	mqtt := fmt.Sprintf("broker = %q\nusername = %q\npassword_file = %q\ncommands = true", cn.URL(), dev, pwFile(dev))
	d := startDaemon(t, clusterDevice(t, dev, mqtt, alwaysRule))
	viewer.Wait("vigil/"+dev+"/status", 30*time.Second, payloadIs("online"))
	viewer.Wait("vigil/"+dev+"/info", 5*time.Second, nil)
	viewer.Wait("vigil/"+dev+"/alert", 15*time.Second, nil)
	// The viewer calls the roll; the device may read it and answers.
	infos := len(viewer.On("vigil/" + dev + "/info"))
	mosquittotest.SubscribeWith(t, b.URL(), as(viewerUser)).Publish("vigil/fleet/rollcall", false, "")
	viewer.Wait("vigil/"+dev+"/info", 5*time.Second, func(mosquittotest.Message) bool { return len(viewer.On("vigil/"+dev+"/info")) > infos })

	// Publishes the accounts must not make, each on a connection of its
	// own: RabbitMQ may close the connection of a client that publishes
	// where it may not.
	forbidden := []struct{ user, topic string }{
		{dev, "vigil/other-dev/alert"},
		{dev, "vigil/other-dev/cmd/pause"},
		{dev, "vigil/" + dev + "/cmd/pause"},
		{viewerUser, "vigil/" + dev + "/cmd/check"},
	}
	for _, f := range forbidden {
		got := publishOnce(t, b.URL(), f.user, "pw-"+f.user, f.topic, "from "+f.user)
		t.Logf("%s publishing on %s: %s", f.user, f.topic, got)
		if !strings.HasPrefix(got, "connection closed") {
			t.Errorf("%s publishing on %s: %s; docs/fleet.md says RabbitMQ closes the connection", f.user, f.topic, got)
		}
	}

	// The operator commands: vigil fleet do calls the roll and sends
	// cmd/check to the device it finds, which answers on cmd/result. (Its
	// state may be unknown: the device answered the viewer's roll call
	// just now, so it answers this one at the end of its window, and
	// RabbitMQ gives vigil/+/+ no retained status; its live sensors are
	// what fleet do sees first.)
	// By id: the roster (one per test process) remembers the devices of
	// the other subtests on this cluster, which are gone by now.
	out, errOut, code := runVigil(t, "fleet", "do", "check", "--select", "id="+dev, "--yes", "--broker", b.URL(), "--username", opUser, "--password-file", pwFile(opUser))
	t.Logf("vigil fleet do check as %s:\n%s", opUser, out)
	if code != 0 || !regexp.MustCompile(`(?m)^`+dev+`\s+\S+\s+ok$`).MatchString(out) {
		t.Errorf("vigil fleet do check --select id=%s as %s: exit %d, stderr %s; want 0 and %s ok", dev, opUser, code, errOut, dev)
	}
	viewer.Wait("vigil/"+dev+"/cmd/result", 5*time.Second, nil)

	// The operator's command and the device's answer came through after
	// the refused publishes were made: one that got through would be here
	// by now (and half a second more).
	time.Sleep(500 * time.Millisecond)
	for _, f := range forbidden {
		for _, m := range viewer.On(f.topic) {
			if m.Payload == "from "+f.user {
				t.Errorf("a publish on %s with %s's credentials went through (docs/fleet.md's lines forbid it)", f.topic, f.user)
			}
		}
	}
	if strings.Count(d.logText(), `msg="mqtt connected"`) > 1 {
		t.Errorf("the device reconnected (the broker closed its connection: a publish or subscription refused?):\n%s", d.logText())
	}
	t.Logf("RABBITMQ ACL: %s from the daemon's start to the last check", time.Since(started).Round(100*time.Millisecond))
}

// publishOnce connects to url as user, publishes payload on topic at QoS
// 1 and disconnects; it returns what the broker did: acknowledged it,
// closed the connection, or neither within 3 s.
func publishOnce(t *testing.T, url, user, password, topic, payload string) string {
	t.Helper()
	lost := make(chan error, 1)
	cli := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("acl-%s-%d", user, time.Now().UnixNano())).
		SetUsername(user).SetPassword(password).SetAutoReconnect(false).SetConnectTimeout(5 * time.Second).
		SetConnectionLostHandler(func(_ paho.Client, err error) { lost <- err }))
	if tok := cli.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect to %s as %s: %v", url, user, tok.Error())
	}
	defer cli.Disconnect(100)
	tok := cli.Publish(topic, 1, false, payload)
	acked := tok.WaitTimeout(3*time.Second) && tok.Error() == nil
	select {
	case err := <-lost:
		return fmt.Sprintf("connection closed by the broker (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if acked {
		return "acknowledged (PUBACK)"
	}
	return fmt.Sprintf("neither acknowledged nor closed within 3 s (%v)", tok.Error())
}

// shellCommands splits a doc's sh block into its commands, each a list of
// words as sh would pass them: comments and blank lines dropped, a line
// ending in \ joined with the next, words split at blanks, '…' taken
// literally. Anything else sh would interpret ($, ", \ within a line,
// ; | & and the like, globs) fails the test: the block must mean the same
// to sh as here.
func shellCommands(t *testing.T, block string) [][]string {
	t.Helper()
	var cmds [][]string
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		var words []string
		var word strings.Builder
		inWord, quoted := false, false
	chars:
		for _, r := range line {
			switch {
			case quoted:
				if r == '\'' {
					quoted = false
				} else {
					word.WriteRune(r)
				}
			case r == '\'':
				quoted, inWord = true, true
			case r == ' ' || r == '\t':
				if inWord {
					words, inWord = append(words, word.String()), false
					word.Reset()
				}
			case r == '#' && !inWord:
				break chars
			case strings.ContainsRune("$\"\\;|&<>()`*?[]{}~!", r):
				t.Fatalf("doc block: %q has %q outside single quotes, which this test does not interpret as sh would", line, r)
			default:
				word.WriteRune(r)
				inWord = true
			}
		}
		if quoted {
			t.Fatalf("doc block: %q has an unclosed quote", line)
		}
		if inWord {
			words = append(words, word.String())
		}
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
	}
	return cmds
}

// clusterFailover: three devices on brokers = [a, b, c], each with a rule
// firing for good, all connected to node a; `vigil fleet` watches node b.
// Node a stops cleanly. Each device is back, on another node, within 2 ×
// keepalive; the test alerts queued before, during and after the outage
// all arrive, none lost, in the order they were queued; and every view
// `vigil fleet` printed from the first full one on shows each device
// online with its rule firing (RabbitMQ gives it no retained message
// through its vigil/+/+ subscription: the roll call does).
func clusterFailover(t *testing.T, c *rabbitmqtest.Cluster) {
	a, b, cn := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	ids := []string{"rmq-fail-0", "rmq-fail-1", "rmq-fail-2"}
	brokers := fmt.Sprintf("brokers = [%q, %q, %q]", a.URL(), b.URL(), cn.URL())
	rec := mosquittotest.Subscribe(t, cn.URL(), "vigil/+/status", "vigil/+/alert")
	cfgs := map[string]string{}
	daemons := map[string]*child{}
	for _, id := range ids {
		cfgs[id] = clusterDevice(t, id, brokers, alwaysRule)
		// -v: each delivery is logged, for when the outbox resumed.
		daemons[id] = startChild(t, nil, "-v", "-c", cfgs[id], "run")
	}
	for _, id := range ids {
		rec.Wait("vigil/"+id+"/status", 30*time.Second, payloadIs("online"))
	}

	// The shortest roll-call period: a device answers at most every 10 s.
	view := watchFleet(t, b.URL(), "--rollcall", "10s")
	full := view.waitAll(t, ids, 20*time.Second)

	// Test alerts: two before the outage, as many as fit in it (each
	// device's back to back until every device is back), one after.
	var mu sync.Mutex
	queued := map[string][]string{}
	var failures []string
	testAlerts := func(until func() bool) {
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				for {
					out, err := exec.Command(vigilBin, "-c", cfgs[id], "test-alert", "--transport", "mqtt").CombinedOutput()
					m := testAlertID.FindSubmatch(out)
					mu.Lock()
					if err != nil || m == nil {
						failures = append(failures, fmt.Sprintf("vigil test-alert (%s): %v\n%s", id, err, out))
					} else {
						queued[id] = append(queued[id], string(m[1]))
					}
					mu.Unlock()
					if err != nil || until() {
						return
					}
				}
			})
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatal(strings.Join(failures, "\n"))
		}
	}
	once := func() bool { return true }
	testAlerts(once)
	testAlerts(once)
	before := map[string]int{}
	for _, id := range ids {
		before[id] = len(onlineCount(rec, id))
	}
	stopped := time.Now()
	stopDone := make(chan struct{})
	go func() { a.Stop(); close(stopDone) }()
	// Back online: one more "online" than before the stop, seen on node c.
	allBack := func() bool {
		for _, id := range ids {
			if len(onlineCount(rec, id)) <= before[id] {
				return false
			}
		}
		return true
	}
	var back time.Duration
	testAlerts(func() bool {
		if back == 0 && (allBack() || time.Since(stopped) > 2*clusterKeepalive+5*time.Second) {
			back = time.Since(stopped)
		}
		return back != 0
	})
	<-stopDone
	testAlerts(once)
	t.Logf("CLUSTER FAILOVER: node a stopped; %d devices back on another node within %s (keepalive %s)", len(ids), back.Round(10*time.Millisecond), clusterKeepalive)
	if back > 2*clusterKeepalive {
		t.Errorf("devices back online %s after node a stopped, want within 2 × keepalive = %s", back, 2*clusterKeepalive)
	}
	// What each daemon queued while it had no connection, and where it
	// went, by its log.
	offlineQueued := 0
	for _, id := range ids {
		log := daemons[id].logText()
		offlineQueued += queuedWhileDown(log)
		if m := lastConnected.FindAllStringSubmatch(log, -1); len(m) < 2 || m[len(m)-1][1] == a.URL() {
			t.Errorf("%s: its last connection is not to another node than %s: %v", id, a.URL(), m)
		}
	}
	if offlineQueued == 0 {
		t.Errorf("no test alert was queued while a device was disconnected: the test proved nothing about the outage")
	}
	// The outbox resumes when the connection is back, not when its backoff
	// (1 s at least, since the first failed attempt) runs out. The issue
	// asks for 200 ms; the bound here is 500 ms, so a loaded machine does
	// not fail it, while a backoff that started during a 0.1 s outage
	// still would. The figure is logged.
	var slowest time.Duration
	for _, id := range ids {
		d, ok := resumeAfterReconnect(daemons[id].logText())
		if !ok {
			continue
		}
		slowest = max(slowest, d)
		if d > 500*time.Millisecond {
			t.Errorf("%s: the outbox delivered %s after the reconnect, want within 500 ms (200 ms asked): it waited out its backoff", id, d)
		}
	}
	t.Logf("CLUSTER FAILOVER: the outbox resumed at most %s after the reconnect", slowest)

	// Every test alert arrives, in the order queued.
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		var got []string
		for {
			got = testAlertsFrom(t, rec, id)
			if len(got) >= len(queued[id]) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !slices.Equal(got, queued[id]) {
			t.Errorf("%s: test alerts received %v, want all %d queued, in order: %v", id, got, len(queued[id]), queued[id])
		}
	}
	lost := 0
	for _, id := range ids {
		lost += len(queued[id]) - len(testAlertsFrom(t, rec, id))
	}
	total := 0
	for _, id := range ids {
		total += len(queued[id])
	}
	t.Logf("CLUSTER FAILOVER: %d test alerts queued (%d while a device was disconnected, by the daemons' logs), %d lost, all in order", total, offlineQueued, lost)

	// Wait for a roll call after the failover, then check every view.
	time.Sleep(11 * time.Second)
	views := view.since(full)
	if len(views) < 2 {
		t.Fatalf("vigil fleet printed %d views after the first full one, want more (it redraws on every change)", len(views))
	}
	for _, v := range views {
		for _, id := range ids {
			d, ok := v.byID(id)
			// board comes from info: retained, or an answer to the roll
			// call, and RabbitMQ gives vigil/+/+ no retained message.
			if !ok || d.State != fleet.Online || d.Board != "sim" || len(d.Firing) != 1 || d.Firing[0].Rule != "always" {
				t.Fatalf("vigil fleet on node b at %s: %s = %+v (listed %t), want online, board sim, with the rule always firing, the whole time", v.Time.Format(time.TimeOnly), id, d, ok)
			}
		}
	}
	t.Logf("CLUSTER FAILOVER: vigil fleet on node b printed %d views after the first full one, each with all %d devices online and firing", len(views), len(ids))
}

var (
	testAlertID   = regexp.MustCompile(`test alert (\S+) queued`)
	lastConnected = regexp.MustCompile(`msg="mqtt connected".* broker=(\S+)`)
)

// queuedWhileDown counts the test alerts a daemon's log says it queued
// between "mqtt connection lost" and the next "mqtt connected".
func queuedWhileDown(log string) int {
	n, down := 0, false
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, `msg="mqtt connection lost"`):
			down = true
		case strings.Contains(line, `msg="mqtt connected"`):
			down = false
		case down && strings.Contains(line, `msg="test alert queued"`):
			n++
		}
	}
	return n
}

// logLineTime is a log line's time= field.
var logLineTime = regexp.MustCompile(`^time=(\S+) `)

// resumeAfterReconnect is the time from the last reconnect in a -v log
// (an "mqtt connected" after an "mqtt connection lost") to the first MQTT
// delivery after it; false when the log has no such pair.
func resumeAfterReconnect(log string) (time.Duration, bool) {
	var down bool
	var conn, first time.Time
	for _, line := range strings.Split(log, "\n") {
		m := logLineTime.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		switch {
		case strings.Contains(line, `msg="mqtt connection lost"`):
			down = true
		case down && strings.Contains(line, `msg="mqtt connected"`):
			down, conn, first = false, at, time.Time{}
		case !conn.IsZero() && first.IsZero() && strings.Contains(line, "msg=deliver ") &&
			strings.Contains(line, "transport=mqtt") && strings.Contains(line, "result=delivered"):
			first = at
		}
	}
	if conn.IsZero() || first.IsZero() {
		return 0, false
	}
	return first.Sub(conn), true
}

// onlineCount lists the "online" statuses rec received from id.
func onlineCount(rec *mosquittotest.Subscriber, id string) []mosquittotest.Message {
	var out []mosquittotest.Message
	for _, m := range rec.On("vigil/" + id + "/status") {
		if m.Payload == "online" {
			out = append(out, m)
		}
	}
	return out
}

// testAlertsFrom lists the ids of the test alerts (rule "test") rec
// received from id, each once, in the order they first arrived.
func testAlertsFrom(t *testing.T, rec *mosquittotest.Subscriber, id string) []string {
	t.Helper()
	var out []string
	for _, m := range rec.On("vigil/" + id + "/alert") {
		var a struct{ ID, Rule string }
		if err := json.Unmarshal([]byte(m.Payload), &a); err != nil {
			t.Fatalf("alert payload %q: %v", m.Payload, err)
		}
		if a.Rule == "test" && !slices.Contains(out, a.ID) {
			out = append(out, a.ID)
		}
	}
	return out
}

// fleetWatch is a live `vigil fleet --json` child and the views it printed.
type fleetWatch struct {
	mu    sync.Mutex
	views []fleetView
	err   error
}

type fleetView struct {
	fleet.Snapshot
	at time.Time
}

func (v fleetView) byID(id string) (fleet.Device, bool) {
	for _, d := range v.Devices {
		if d.ID == id {
			return d, true
		}
	}
	return fleet.Device{}, false
}

// watchFleet starts `vigil fleet --broker url --json` (live) with extra
// flags and collects every view it prints, until the test ends.
func watchFleet(t *testing.T, url string, extra ...string) *fleetWatch {
	t.Helper()
	w := &fleetWatch{}
	cmd := exec.Command(vigilBin, append([]string{"fleet", "--broker", url, "--json"}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		dec := json.NewDecoder(out)
		for {
			var s fleet.Snapshot
			if err := dec.Decode(&s); err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			w.mu.Lock()
			w.views = append(w.views, fleetView{s, time.Now()})
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		cmd.Wait()
		if t.Failed() {
			t.Logf("vigil fleet stderr:\n%s", stderr.String())
		}
	})
	return w
}

// waitAll waits for a view that lists every one of ids online with a
// rule firing, and returns its index.
func (w *fleetWatch) waitAll(t *testing.T, ids []string, limit time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		w.mu.Lock()
		for i, v := range w.views {
			all := true
			for _, id := range ids {
				d, ok := v.byID(id)
				all = all && ok && d.State == fleet.Online && len(d.Firing) == 1
			}
			if all {
				w.mu.Unlock()
				return i
			}
		}
		n, err := len(w.views), w.err
		w.mu.Unlock()
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("vigil fleet showed no view with all of %v online and firing within %s (%d views; %v)", ids, limit, n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// since returns the views from index i on.
func (w *fleetWatch) since(i int) []fleetView {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.views[i:])
}
