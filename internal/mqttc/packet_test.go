package mqttc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRemainingLength(t *testing.T) {
	for _, tc := range []struct {
		n    int
		wire []byte
	}{ // MQTT 3.1.1 §2.2.3, table 2.4 boundaries
		{0, []byte{0x00}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{16383, []byte{0xff, 0x7f}},
		{16384, []byte{0x80, 0x80, 0x01}},
		{2097151, []byte{0xff, 0xff, 0x7f}},
		{2097152, []byte{0x80, 0x80, 0x80, 0x01}},
		{268435455, []byte{0xff, 0xff, 0xff, 0x7f}},
	} {
		if got := appendLength(nil, tc.n); !bytes.Equal(got, tc.wire) {
			t.Errorf("appendLength(%d) = % x, want % x", tc.n, got, tc.wire)
		}
		n, err := readLength(bytes.NewReader(tc.wire))
		if err != nil || n != tc.n {
			t.Errorf("readLength(% x) = %d, %v; want %d", tc.wire, n, err, tc.n)
		}
	}
	if _, err := readLength(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0x01})); !errors.Is(err, errMalformed) {
		t.Errorf("5-byte length: err = %v, want malformed", err)
	}
	if _, err := readLength(bytes.NewReader([]byte{0x80})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut length: err = %v, want unexpected EOF", err)
	}
}

func TestConnectPacket(t *testing.T) {
	got, err := connectPacket(&Options{ClientID: "c1", Username: "u", Password: "p",
		Will: &Will{Topic: "v/d/status", Payload: []byte("offline"), QoS: 1, Retain: true}}, 30)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x10, 41,
		0, 4, 'M', 'Q', 'T', 'T', 4,
		0xee,  // user, password, will retain, will QoS 1, will flag, clean session
		0, 30, // keepalive
		0, 2, 'c', '1',
		0, 10, 'v', '/', 'd', '/', 's', 't', 'a', 't', 'u', 's',
		0, 7, 'o', 'f', 'f', 'l', 'i', 'n', 'e',
		0, 1, 'u', 0, 1, 'p'}
	if !bytes.Equal(got, want) {
		t.Errorf("CONNECT =\n% x\nwant\n% x", got, want)
	}
	got, _ = connectPacket(&Options{ClientID: "c"}, 0)
	if want := []byte{0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 0, 0, 1, 'c'}; !bytes.Equal(got, want) {
		t.Errorf("minimal CONNECT = % x, want % x", got, want)
	}
	if _, err := connectPacket(&Options{ClientID: "c", Will: &Will{Topic: "a/+"}}, 0); err == nil {
		t.Error("a will topic with a wildcard was accepted")
	}
}

func TestPublishSubscribePackets(t *testing.T) {
	got, _ := publishPacket("a/b", []byte("hi"), 1, true, 0x0102)
	if want := []byte{0x33, 9, 0, 3, 'a', '/', 'b', 1, 2, 'h', 'i'}; !bytes.Equal(got, want) {
		t.Errorf("PUBLISH = % x, want % x", got, want)
	}
	got, _ = publishPacket("a", nil, 0, false, 0)
	if want := []byte{0x30, 3, 0, 1, 'a'}; !bytes.Equal(got, want) {
		t.Errorf("QoS 0 PUBLISH = % x, want % x", got, want)
	}
	got, _ = subscribePacket("x/+", 1, 7)
	if want := []byte{0x82, 8, 0, 7, 0, 3, 'x', '/', '+', 1}; !bytes.Equal(got, want) {
		t.Errorf("SUBSCRIBE = % x, want % x", got, want)
	}
	for _, topic := range []string{"", "a/#", "a/+/b", "bad\x00", "bad\xff", strings.Repeat("a", 65536)} {
		if _, err := publishPacket(topic, nil, 1, false, 1); err == nil {
			t.Errorf("publishPacket(%.20q) accepted", topic)
		}
	}
	if _, err := subscribePacket("", 1, 1); err == nil {
		t.Error("empty filter accepted")
	}
}

func TestReadPacket(t *testing.T) {
	pub := func(flags byte, topic string, id []byte, payload string) []byte {
		body := appendString(nil, topic)
		body = append(body, id...)
		body = append(body, payload...)
		b, _ := frame(typePublish, flags, body)
		return b
	}
	for _, tc := range []struct {
		name      string
		wire      []byte
		limit     int
		wantErr   string
		topic     string
		id        uint16
		payload   string
		truncated bool
	}{
		{name: "qos0", wire: pub(0, "a/b", nil, "on"), limit: 64, topic: "a/b", payload: "on"},
		{name: "qos1 retained", wire: pub(0x03, "t", []byte{0, 9}, "x"), limit: 64, topic: "t", id: 9, payload: "x"},
		{name: "empty payload", wire: pub(0x02, "t", []byte{1, 0}, ""), limit: 64, topic: "t", id: 256},
		{name: "payload truncated", wire: pub(0x02, "t", []byte{0, 1}, strings.Repeat("z", 100)), limit: 10, topic: "t", id: 1, payload: "zzzzzzzzzz", truncated: true},
		{name: "qos2 refused", wire: pub(0x04, "t", []byte{0, 1}, "x"), limit: 64, wantErr: "QoS 2"},
		{name: "qos3 refused", wire: pub(0x06, "t", []byte{0, 1}, "x"), limit: 64, wantErr: "QoS 3"},
		{name: "id zero", wire: pub(0x02, "t", []byte{0, 0}, "x"), limit: 64, wantErr: "identifier 0"},
		{name: "topic beyond packet", wire: []byte{0x30, 3, 0, 9, 'a'}, limit: 64, wantErr: "topic of 9 bytes"},
		{name: "publish too short", wire: []byte{0x30, 1, 0}, limit: 64, wantErr: "PUBLISH of 1 bytes"},
		{name: "cut mid payload", wire: pub(0, "t", nil, "hello")[:7], limit: 64, wantErr: "unexpected EOF"},
		{name: "ack too large", wire: append([]byte{0x40, 0x80, 0x01}, make([]byte, 128)...), limit: 64, wantErr: "PUBACK of 128 bytes exceeds 64"},
		{name: "cut header", wire: []byte{0x40}, limit: 64, wantErr: "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := readPacket(bufio.NewReader(bytes.NewReader(tc.wire)), tc.limit)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.topic != tc.topic || p.id != tc.id || string(p.payload) != tc.payload || p.truncated != tc.truncated {
				t.Errorf("got topic %q id %d payload %q truncated %v", p.topic, p.id, p.payload, p.truncated)
			}
		})
	}
	// Two packets back to back: the reader stays aligned after a truncated payload.
	wire := append(pub(0x02, "t", []byte{0, 1}, strings.Repeat("z", 50)), ackPacket(typePuback, 7)...)
	r := bufio.NewReader(bytes.NewReader(wire))
	if _, err := readPacket(r, 8); err != nil {
		t.Fatal(err)
	}
	p, err := readPacket(r, 8)
	if err != nil || p.typ != typePuback || !bytes.Equal(p.body, []byte{0, 7}) {
		t.Errorf("packet after a truncated one = %+v, %v; want PUBACK 7", p, err)
	}
}

func TestBrokerAddr(t *testing.T) {
	for _, tc := range []struct {
		in      string
		addr    string
		tls     bool
		wantErr string
	}{
		{in: "tcp://127.0.0.1:1883", addr: "127.0.0.1:1883"},
		{in: "mqtt://h:1", addr: "h:1"},
		{in: "ssl://h:8883", addr: "h:8883", tls: true},
		{in: "mqtts://[::1]:8883", addr: "[::1]:8883", tls: true},
		{in: "ws://h:80", wantErr: "unsupported scheme"},
		{in: "tcp://h", wantErr: "no port"},
		{in: "tcp://u:secret@h", wantErr: "no port"},
	} {
		addr, useTLS, err := brokerAddr(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
				t.Errorf("brokerAddr(%q) err = %v, want %q without the password", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || addr != tc.addr || useTLS != tc.tls {
			t.Errorf("brokerAddr(%q) = %q, %v, %v", tc.in, addr, useTLS, err)
		}
	}
}

// FuzzReadPacket feeds arbitrary bytes from a broker to the packet reader:
// no panic, no allocation beyond the limit, and a packet it accepts
// re-encodes to the bytes it read.
func FuzzReadPacket(f *testing.F) {
	for _, s := range [][]byte{
		{0x20, 2, 0, 0}, {0x40, 2, 0, 1}, {0x90, 3, 0, 1, 0x80}, {0xd0, 0},
		{0x33, 9, 0, 3, 'a', '/', 'b', 1, 2, 'h', 'i'}, {0x30, 0xff, 0xff, 0xff, 0x7f},
		{0x30, 3, 0, 9, 'a'}, {0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 256
		r := bufio.NewReader(bytes.NewReader(b))
		for range 8 {
			p, err := readPacket(r, limit)
			if err != nil {
				return
			}
			if len(p.body) > limit || len(p.payload) > limit {
				t.Fatalf("kept %d/%d bytes over the limit %d", len(p.body), len(p.payload), limit)
			}
			if p.typ == typePublish && !p.truncated {
				re, err := publishPacket(p.topic, p.payload, (p.flags>>1)&3, p.flags&1 != 0, p.id)
				if err != nil {
					continue // a topic the broker may send but we would not publish (wildcards, bad UTF-8)
				}
				got, err2 := readPacket(bufio.NewReader(bytes.NewReader(re)), limit)
				if err2 != nil || got.topic != p.topic || got.id != p.id || !bytes.Equal(got.payload, p.payload) {
					t.Fatalf("re-encoded PUBLISH reads back as %+v, %v; want %+v", got, err2, p)
				}
			}
		}
	})
}
