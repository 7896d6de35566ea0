package rabbitmqtest_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/internal/rabbitmqtest"
)

// TestCluster checks the harness itself: three nodes form one cluster, a
// QoS 1 message published on one node reaches a subscriber on another,
// and with one node stopped the other two still carry messages; the
// stopped node starts again and rejoins. When it ends, no process it
// started is left.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three RabbitMQ nodes")
	}
	var c *rabbitmqtest.Cluster
	t.Run("cluster", func(t *testing.T) {
		c = rabbitmqtest.Start(t, 3)
		a, b, cc := c.Nodes[0], c.Nodes[1], c.Nodes[2]

		sub := mosquittotest.Subscribe(t, b.URL(), "t/#")
		pub := mosquittotest.Subscribe(t, a.URL())
		pub.Publish("t/one", false, "1")
		if m := sub.Next("t/one", 10*time.Second); m.Payload != "1" {
			t.Fatalf("message across nodes = %q, want 1", m.Payload)
		}

		a.Stop()
		pub2 := mosquittotest.Subscribe(t, cc.URL())
		pub2.Publish("t/two", false, "2")
		if m := sub.Next("t/two", 10*time.Second); m.Payload != "2" {
			t.Fatalf("message with node a stopped = %q, want 2", m.Payload)
		}

		a.Start()
		if out, err := c.Ctl(b, "cluster_status"); err != nil || !strings.Contains(out, a.Name) {
			t.Fatalf("cluster_status after a restarted: %v\n%s", err, out)
		}
		pub3 := mosquittotest.Subscribe(t, a.URL())
		pub3.Publish("t/three", false, "3")
		if m := sub.Next("t/three", 10*time.Second); m.Payload != "3" {
			t.Fatalf("message from the restarted node = %q, want 3", m.Payload)
		}
	})
	// The subtest's cleanup has run: nothing the cluster started may be
	// left (RabbitMQ's command line does not carry the node name: look by
	// process id).
	if c == nil {
		return
	}
	for _, pid := range c.PIDs() {
		if syscall.Kill(pid, 0) == nil {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("left running after the test: pid %d %.80s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
}
