package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// broker is a local mosquitto on 127.0.0.1 that can be stopped and started
// again on the same port. Its persistence keeps the subscriber's session and
// queued messages across a restart; no queue limit applies.
type broker struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

func mosquittoPath() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		return "/usr/sbin/mosquitto", nil
	}
	return "", fmt.Errorf("mosquitto not found (apt-get install mosquitto)")
}

func newBroker(dir string) (*broker, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &broker{dir: dir, port: port}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`listener %d 127.0.0.1
allow_anonymous true
persistence true
persistence_location %s/
autosave_interval 1
max_queued_messages 0
max_inflight_messages 0
log_dest file %s
`, port, dir, filepath.Join(dir, "mosquitto.log"))
	if err := os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return b, b.start()
}

func (b *broker) url() string { return "tcp://127.0.0.1:" + strconv.Itoa(b.port) }

func (b *broker) start() error {
	p, err := mosquittoPath()
	if err != nil {
		return err
	}
	b.cmd = exec.Command(p, "-c", filepath.Join(b.dir, "mosquitto.conf"))
	b.done = make(chan struct{})
	if err := b.cmd.Start(); err != nil {
		return err
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", b.port)); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-b.done:
			log, _ := os.ReadFile(filepath.Join(b.dir, "mosquitto.log"))
			return fmt.Errorf("mosquitto exited at start: %s", tail(string(log), 5))
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("mosquitto did not listen on %d", b.port)
}

// stop ends mosquitto with SIGTERM (it saves its persistence file).
func (b *broker) stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-b.done
	}
}

// received is one alert as the subscriber got it.
type received struct {
	ID    string `json:"id"`
	Rule  string `json:"rule"`
	State string `json:"state"`
	Time  string `json:"time"`
	at    time.Time
}

// subscriber records every alert published on vigil/+/alert, in arrival
// order, duplicates included. Its session is persistent (clean session off)
// so the broker queues alerts for it while it is disconnected.
type subscriber struct {
	cli  paho.Client
	mu   sync.Mutex
	got  []received
	seen map[string]int
}

func newSubscriber(ctx context.Context, url, clientID string) (*subscriber, error) {
	s := &subscriber{seen: map[string]int{}}
	opts := paho.NewClientOptions().AddBroker(url).SetClientID(clientID).
		SetCleanSession(false).SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(200 * time.Millisecond).SetMaxReconnectInterval(time.Second).
		SetOrderMatters(true).SetKeepAlive(10 * time.Second)
	opts.SetOnConnectHandler(func(c paho.Client) {
		c.Subscribe("vigil/+/alert", 1, s.onMessage)
	})
	opts.SetDefaultPublishHandler(s.onMessage) // queued messages delivered before the resubscribe
	s.cli = paho.NewClient(opts)
	tok := s.cli.Connect()
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		return nil, fmt.Errorf("subscriber connect: %v", tok.Error())
	}
	// Wait for the subscription to be in place.
	sub := s.cli.Subscribe("vigil/+/alert", 1, s.onMessage)
	if !sub.WaitTimeout(10*time.Second) || sub.Error() != nil {
		return nil, fmt.Errorf("subscribe: %v", sub.Error())
	}
	return s, nil
}

func (s *subscriber) onMessage(_ paho.Client, m paho.Message) {
	var r received
	if err := json.Unmarshal(m.Payload(), &r); err != nil || r.ID == "" {
		return
	}
	r.at = time.Now()
	s.mu.Lock()
	s.got = append(s.got, r)
	s.seen[r.ID]++
	s.mu.Unlock()
}

func (s *subscriber) snapshot() ([]received, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]int, len(s.seen))
	for k, v := range s.seen {
		seen[k] = v
	}
	return append([]received(nil), s.got...), seen
}

func (s *subscriber) close() { s.cli.Disconnect(250) }
