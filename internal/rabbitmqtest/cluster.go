// Package rabbitmqtest runs a real RabbitMQ cluster for tests: Debian's
// rabbitmq-server (3.10) with its MQTT plugin, three nodes clustered on
// loopback, each of which a test can stop, kill, freeze and start again.
//
// Three nodes, not two: the MQTT plugin tracks client ids in a Raft group,
// which needs a majority; with two nodes, stopping one stalls the other
// (a restart took 101 s). With three, one can stop and two remain.
//
// Everything runs from /usr/lib/rabbitmq/bin as the user running the test,
// with its own epmd on 127.0.0.1, its own Erlang cookie (in a temporary
// HOME), and every port below 32768 so that none collides with the
// kernel's ephemeral ports. The system's /etc/rabbitmq is not read. Every
// process it starts (epmd, each node's beam) is killed when the test ends,
// failed or not.
//
// It is test support only: nothing outside _test.go files imports it.
package rabbitmqtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Dir is where Debian's rabbitmq-server package puts the scripts that
// start a node and talk to it.
const Dir = "/usr/lib/rabbitmq/bin"

// StartTimeout bounds one node's start: it takes about 8 s here.
const StartTimeout = 90 * time.Second

// Available reports whether a RabbitMQ with the MQTT plugin and epmd is
// installed, and if not, what is missing.
func Available() (ok bool, missing string) {
	if _, err := os.Stat(filepath.Join(Dir, "rabbitmq-server")); err != nil {
		return false, Dir + "/rabbitmq-server"
	}
	if m, _ := filepath.Glob("/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins/rabbitmq_mqtt-*"); len(m) == 0 {
		return false, "the rabbitmq_mqtt plugin"
	}
	if _, err := exec.LookPath("epmd"); err != nil {
		return false, "epmd"
	}
	return true, ""
}

// Skip skips the test with one line when RabbitMQ is not installed: `make
// test-deps` installs it with apt, so this happens only where apt could
// not.
func Skip(t testing.TB) {
	t.Helper()
	if ok, missing := Available(); !ok {
		t.Skipf("RabbitMQ cluster test skipped: %s not found (make test-deps installs Debian's rabbitmq-server with apt; it could not here)", missing)
	}
}

// Cluster is a RabbitMQ cluster on loopback, owned by one test.
type Cluster struct {
	t      testing.TB
	dir    string // the cluster's HOME: the Erlang cookie lives here
	epmd   *exec.Cmd
	env    []string   // what every node and rabbitmqctl share
	ctlMu  sync.Mutex // rabbitmqctl has one distribution port: one at a time
	ctlMin int

	pidMu sync.Mutex
	pids  []int // every process started: epmd, each run of each node

	Nodes []*Node
}

// Node is one RabbitMQ node of a Cluster.
type Node struct {
	c        *Cluster
	Name     string // Erlang node name, as in "vigil-a-14369@localhost" (the cluster's epmd port: unique while it runs)
	dir      string
	mqttPort int
	distPort int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has ended
}

// Start starts n RabbitMQ nodes (3 is what a cluster that survives a
// stopped node needs), clusters them, and waits until each accepts MQTT
// connections. It skips the test when RabbitMQ is not installed. When the
// test ends, every process it started is killed.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	Skip(t)
	ports := freePorts(t, 2+2*n)
	c := &Cluster{t: t, dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(c.dir, ".erlang.cookie"), []byte("vigiltest"+strconv.Itoa(ports[0])), 0o400); err != nil {
		t.Fatal(err)
	}
	epmdPort := ports[0]
	c.ctlMin = ports[1]
	c.env = append(os.Environ(),
		"HOME="+c.dir,
		"ERL_EPMD_PORT="+strconv.Itoa(epmdPort),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_CONF_ENV_FILE=/dev/null", // not the system's /etc/rabbitmq/rabbitmq-env.conf
		"RABBITMQ_CTL_DIST_PORT_MIN="+strconv.Itoa(c.ctlMin),
		"RABBITMQ_CTL_DIST_PORT_MAX="+strconv.Itoa(c.ctlMin),
		"LANG=C.UTF-8",
	)
	t.Cleanup(c.cleanup)

	c.epmd = exec.Command("epmd", "-address", "127.0.0.1", "-port", strconv.Itoa(epmdPort))
	c.epmd.Env = c.env
	c.epmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.epmd.Start(); err != nil {
		t.Fatalf("start epmd: %v", err)
	}
	c.started(c.epmd.Process.Pid)
	waitListen(t, "epmd", "127.0.0.1:"+strconv.Itoa(epmdPort), 10*time.Second, nil)

	for i := range n {
		short := fmt.Sprintf("vigil-%c-%d", 'a'+i, epmdPort)
		nd := &Node{c: c, Name: short + "@localhost", dir: filepath.Join(c.dir, short), mqttPort: ports[2+2*i], distPort: ports[3+2*i]}
		if err := nd.writeConfig(); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, nd)
	}
	// Boot them all at once (most of a node's start is its own CPU), then
	// join the others to the first: join_cluster needs a running node.
	for _, nd := range c.Nodes {
		nd.launch()
	}
	for _, nd := range c.Nodes {
		nd.waitMQTT()
	}
	first := c.Nodes[0]
	for _, nd := range c.Nodes[1:] {
		for _, args := range [][]string{{"stop_app"}, {"join_cluster", first.Name}, {"start_app"}} {
			if out, err := c.Ctl(nd, args...); err != nil {
				t.Fatalf("rabbitmqctl -n %s %s: %v\n%s", nd.Name, strings.Join(args, " "), err, out)
			}
		}
		nd.waitMQTT()
	}
	if out, err := c.Ctl(first, "cluster_status"); err != nil || strings.Count(out, "@localhost") < 2*n {
		t.Fatalf("the %d nodes did not form one cluster: %v\n%s", n, err, out)
	}
	return c
}

func (c *Cluster) started(pid int) {
	c.pidMu.Lock()
	defer c.pidMu.Unlock()
	c.pids = append(c.pids, pid)
}

// PIDs lists every process the cluster started (epmd, and each node's VM
// on every start), so that a test can check none outlives it.
func (c *Cluster) PIDs() []int {
	c.pidMu.Lock()
	defer c.pidMu.Unlock()
	return append([]int(nil), c.pids...)
}

// Ctl runs rabbitmqctl against node nd and returns what it printed.
func (c *Cluster) Ctl(nd *Node, args ...string) (string, error) {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(Dir, "rabbitmqctl"), append([]string{"-q", "-n", nd.Name}, args...)...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// URLs are the nodes' MQTT listeners as paho broker URLs, in node order.
func (c *Cluster) URLs() []string {
	var u []string
	for _, nd := range c.Nodes {
		u = append(u, nd.URL())
	}
	return u
}

func (c *Cluster) cleanup() {
	for _, nd := range c.Nodes {
		nd.Kill()
		if c.t.Failed() {
			c.t.Logf("%s log (tail):\n%s", nd.Name, nd.LogTail(40))
		}
	}
	if c.epmd != nil && c.epmd.Process != nil {
		_ = syscall.Kill(-c.epmd.Process.Pid, syscall.SIGKILL)
		_ = c.epmd.Wait()
	}
}

// Addr is the node's MQTT listener, host:port.
func (nd *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(nd.mqttPort) }

// URL is the node's MQTT listener as a paho broker URL.
func (nd *Node) URL() string { return "tcp://" + nd.Addr() }

// LogTail returns the last n lines of the node's log file.
func (nd *Node) LogTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(nd.dir, "log", nd.Name+".log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (nd *Node) writeConfig() error {
	if err := os.MkdirAll(nd.dir, 0o700); err != nil {
		return err
	}
	conf := "listeners.tcp = none\n" + // no AMQP: MQTT only
		"mqtt.listeners.tcp.default = " + nd.Addr() + "\n" +
		"loopback_users = none\n" +
		"log.console = false\n" +
		"log.file.level = info\n"
	if err := os.WriteFile(filepath.Join(nd.dir, "rabbitmq.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(nd.dir, "enabled_plugins"), []byte("[rabbitmq_mqtt].\n"), 0o600)
}

// launch starts the node's beam process without waiting for it.
func (nd *Node) launch() {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	out, err := os.OpenFile(filepath.Join(nd.dir, "stdout.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		nd.c.t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(filepath.Join(Dir, "rabbitmq-server"))
	cmd.Env = append(append([]string(nil), nd.c.env...),
		"RABBITMQ_NODENAME="+nd.Name,
		"RABBITMQ_DIST_PORT="+strconv.Itoa(nd.distPort),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(nd.dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(nd.dir, "log"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(nd.dir, "rabbitmq.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(nd.dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(nd.dir, "enabled_plugins"),
		"RABBITMQ_PLUGINS_EXPAND_DIR="+filepath.Join(nd.dir, "plugins"),
		"RABBITMQ_PID_FILE="+filepath.Join(nd.dir, "pid"),
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		// The script then execs the Erlang VM itself instead of keeping
		// a shell in front of it: the process started here is the node,
		// and a signal reaches it directly (SIGTERM is a clean stop).
		"RUNNING_UNDER_SYSTEMD=true",
	)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		nd.c.t.Fatalf("start %s: %v", nd.Name, err)
	}
	nd.c.started(cmd.Process.Pid)
	nd.cmd, nd.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(nd.done)
}

func (nd *Node) waitMQTT() {
	nd.c.t.Helper()
	waitListen(nd.c.t, nd.Name, nd.Addr(), StartTimeout, nd)
}

// Start starts a stopped node again and waits until it accepts MQTT
// connections; it rejoins the cluster from its own database.
func (nd *Node) Start() {
	nd.c.t.Helper()
	nd.launch()
	nd.waitMQTT()
}

// Stop stops the node cleanly, as `systemctl stop rabbitmq-server` would
// (SIGTERM: it closes its clients' connections and leaves the cluster
// running), and waits until it is gone; after 60 s it kills it.
func (nd *Node) Stop() { nd.end(syscall.SIGTERM, 60*time.Second) }

// Kill kills the node (SIGKILL) and waits until it is gone.
func (nd *Node) Kill() { nd.end(syscall.SIGKILL, 0) }

// Freeze stops the node (SIGSTOP) with its connections open.
func (nd *Node) Freeze() { nd.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen node (SIGCONT).
func (nd *Node) Thaw() { nd.signal(syscall.SIGCONT) }

func (nd *Node) signal(sig syscall.Signal) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd != nil {
		_ = nd.cmd.Process.Signal(sig)
	}
}

func (nd *Node) end(sig syscall.Signal, grace time.Duration) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return
	}
	pid, done := nd.cmd.Process.Pid, nd.done
	_ = syscall.Kill(pid, syscall.SIGCONT) // a frozen node cannot stop
	_ = syscall.Kill(pid, sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-done
	}
	// The VM's helpers (erl_child_setup, inet_gethost) end with it; its
	// process group goes too, in case one did not.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	nd.cmd = nil
}

// exited reports whether the node's process has ended (it failed to
// start); the caller holds no lock.
func (nd *Node) exited() bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return true
	}
	select {
	case <-nd.done:
		return true
	default:
		return false
	}
}

// waitListen waits until addr accepts TCP connections. A node whose
// process died meanwhile fails the test at once, with its log.
func waitListen(t testing.TB, what, addr string, limit time.Duration, nd *Node) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if nd != nil && nd.exited() {
			t.Fatalf("%s exited before it listened on %s:\n%s", what, addr, nd.LogTail(40))
		}
		if time.Now().After(deadline) {
			msg := ""
			if nd != nil {
				msg = nd.LogTail(40)
			}
			t.Fatalf("%s did not listen on %s within %s: %v\n%s", what, addr, limit, err, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePorts returns n distinct TCP ports on 127.0.0.1 below 32768 (the
// kernel hands out ephemeral ports above), each free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	seen := map[int]bool{}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 10000 {
			t.Fatal("no free loopback ports below 32768")
		}
		p := 10000 + rand.IntN(22000)
		if seen[p] {
			continue
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		ports = append(ports, p)
	}
	return ports
}
