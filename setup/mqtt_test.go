package setup

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/transport/mqtt"
)

// mosquittoWithPassword starts a mosquitto that takes only user with password.
func mosquittoWithPassword(t *testing.T, user_, password string) *mosquittotest.Broker {
	t.Helper()
	mosquittotest.Bin(t)
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		t.Skip("mosquitto_passwd not found (apt-get install mosquitto)")
	}
	pw := filepath.Join(t.TempDir(), "passwd")
	if out, err := exec.Command(passwd, "-c", "-b", pw, user_, password).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return mosquittotest.Start(t, mosquittotest.Options{Config: "user " + me.Username + "\nlistener %d 127.0.0.1\nallow_anonymous false\npassword_file " + pw + "\n"})
}

// The check connects with mqtt://, publishes the probe and has its PUBACK.
func TestCheckBroker(t *testing.T) {
	t.Parallel()
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/#")
	got, err := CheckBroker(context.Background(), Broker{URL: "mqtt://" + b.Addr(), DeviceID: "pi"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Topic != "vigil/pi/init" {
		t.Errorf("probe topic %q, want vigil/pi/init", got.Topic)
	}
	if m := sub.Next("vigil/pi/init", 5*time.Second); m.Retained {
		t.Errorf("the probe was retained: %+v", m)
	}
}

// A broker with a password file: the right password works; a wrong one,
// or none, is refused with CONNACK 5 and the fix, never the password.
func TestCheckBrokerPassword(t *testing.T) {
	t.Parallel()
	b := mosquittoWithPassword(t, "vigil", "s3cret-pass")
	url := "mqtt://" + b.Addr()
	if _, err := CheckBroker(context.Background(), Broker{URL: url, Username: "vigil", Password: "s3cret-pass"}); err != nil {
		t.Fatalf("the right password: %v", err)
	}
	for _, tc := range []struct {
		name, user, password, want string
	}{
		{"wrong password", "vigil", "wrong-pass-1234", `the broker refused the user name or password (CONNACK 5 not authorized): check user "vigil" and its password`},
		{"no user", "", "", "the broker refused the user name or password (CONNACK 5 not authorized): it wants a user name and password: give them with --mqtt-user and --mqtt-password-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckBroker(context.Background(), Broker{URL: url, Username: tc.user, Password: tc.password})
			if !errors.Is(err, ErrBrokerRefused) {
				t.Fatalf("CheckBroker = %v, want ErrBrokerRefused", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckBroker = %q, want it to say %q", err, tc.want)
			}
			if tc.password != "" && strings.Contains(err.Error(), tc.password) {
				t.Errorf("the password leaked: %q", err)
			}
		})
	}
}

// A broker that does not answer: nothing listens, or something listens
// and never sends a CONNACK. The error names the address.
func TestCheckBrokerNoAnswer(t *testing.T) {
	t.Parallel()
	closed := mosquittotest.FreePort(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // holds it open, says nothing
		}
	}()
	for _, tc := range []struct {
		name, addr, want string
	}{
		{"refused", net.JoinHostPort("127.0.0.1", portString(closed)), "nothing listens at 127.0.0.1:" + portString(closed) + " (connection refused): is the broker running"},
		{"silent", silent.Addr().String(), "the broker at " + silent.Addr().String() + " did not answer within 500ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckBroker(context.Background(), Broker{URL: "mqtt://" + tc.addr, Timeout: 500 * time.Millisecond})
			if !errors.Is(err, ErrBrokerUnreachable) {
				t.Fatalf("CheckBroker = %v, want ErrBrokerUnreachable", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckBroker = %q, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestCheckBrokerBadURL(t *testing.T) {
	for _, url := range []string{"http://127.0.0.1:1883", "mqtt://user:pw@127.0.0.1:1883", "127.0.0.1:1883"} {
		_, err := CheckBroker(context.Background(), Broker{URL: url})
		if err == nil || !strings.HasPrefix(err.Error(), "mqtt broker: must") {
			t.Errorf("CheckBroker(%q) = %v, want the URL refused", url, err)
		}
		if err != nil && strings.Contains(err.Error(), ":pw@") {
			t.Errorf("CheckBroker(%q) = %q: the password leaked", url, err)
		}
	}
}

func portString(n int) string { return strconv.Itoa(n) }

// mqtts://: with the broker's CA the check connects; without it (the
// system's CAs) it fails and names the fix.
func TestCheckBrokerTLS(t *testing.T) {
	t.Parallel()
	pki := mosquittotest.NewPKI(t)
	dir := t.TempDir()
	files := map[string][]byte{"ca.pem": pki.CA, "server.pem": pki.ServerCert, "server.key": pki.ServerKey}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	b := mosquittotest.Start(t, mosquittotest.Options{Config: "user " + me.Username + "\nlistener %d 127.0.0.1\nallow_anonymous true\n" +
		"cafile " + filepath.Join(dir, "ca.pem") + "\ncertfile " + filepath.Join(dir, "server.pem") + "\nkeyfile " + filepath.Join(dir, "server.key") + "\n"})
	tlsCfg, err := mqtt.TLSConfig(pki.CA, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckBroker(context.Background(), Broker{URL: "mqtts://" + b.Addr(), TLS: tlsCfg}); err != nil {
		t.Errorf("mqtts:// with the CA: %v", err)
	}
	_, err = CheckBroker(context.Background(), Broker{URL: "mqtts://" + b.Addr(), Timeout: 3 * time.Second})
	if !errors.Is(err, ErrBrokerUnreachable) || !strings.Contains(err.Error(), "for a private CA set ca_file") {
		t.Errorf("mqtts:// without the CA = %v, want ErrBrokerUnreachable naming ca_file", err)
	}
}

// ws://: MQTT over WebSockets, as the daemon speaks it.
func TestCheckBrokerWebSocket(t *testing.T) {
	t.Parallel()
	b := mosquittotest.Start(t, mosquittotest.Options{})
	ws := mosquittotest.StartWSBridge(t, b.Addr(), nil)
	if _, err := CheckBroker(context.Background(), Broker{URL: ws.URL()}); err != nil {
		t.Errorf("%s: %v", ws.URL(), err)
	}
}
