package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestFleetRefusesMixedTLS: `vigil fleet` with a TLS node and a plain one
// would fail over to the plain node and send the password in the clear.
// It refuses the list, as the daemon's config check does, before it
// connects anywhere.
func TestFleetRefusesMixedTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 256)
		n, _ := c.Read(b)
		got <- b[:n]
	}()
	plain := "tcp://" + ln.Addr().String()
	env := []string{"X_PASS=s3cret-fleet-pw"}
	_, errOut, code := runWithin(t, t.TempDir(), 30*time.Second, env, "fleet", "--once",
		"--broker", "ssl://127.0.0.1:1,"+plain, "--username", "viewer", "--password-env", "X_PASS")
	select {
	case b := <-got:
		t.Errorf("vigil fleet connected to the plain node %s and sent %d bytes (password in the clear: %v)", plain, len(b), strings.Contains(string(b), "s3cret-fleet-pw"))
	default:
	}
	if code != exitUsage || !strings.Contains(errOut, plain) || !strings.Contains(errOut, "not TLS") {
		t.Errorf("vigil fleet --broker ssl://…,%s: exit %d, stderr %q; want %d and a message naming the plain node", plain, code, errOut, exitUsage)
	}
}
