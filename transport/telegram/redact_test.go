package telegram

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDialErrorHasNoToken: net/http's *url.Error for a refused connection
// quotes the whole URL, /bot<TOKEN>/ included. call reduces it to the host
// and keeps the cause reachable.
func TestDialErrorHasNoToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a closed port: the dial is refused
	b := New(Config{APIURL: "http://" + addr, Token: testToken, ChatID: alertChat}, newFakeState(), nil, nil, nil, nil)
	err = b.call(context.Background(), "getMe", struct{}{}, nil, 5*time.Second)
	if err == nil {
		t.Fatal("call to a closed port = nil error")
	}
	if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "/bot") {
		t.Errorf("error = %q: it must not contain the token or the URL path", err)
	}
	if want := "getMe: post " + addr + ": dial tcp " + addr + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want it to start with %q", err, want)
	}
	var op *net.OpError
	var ue *url.Error
	if !errors.As(err, &op) || op.Op != "dial" || errors.As(err, &ue) {
		t.Errorf("error = %#v: want the *net.OpError of the dial reachable, the *url.Error gone", err)
	}
}
