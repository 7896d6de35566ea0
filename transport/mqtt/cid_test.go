package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/internal/transporttest"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// TestParseCID: every command's JSON form may carry a correlation id of
// 1-64 of A-Z a-z 0-9 . _ : -; anything else is refused, saying what a
// cid may be.
func TestParseCID(t *testing.T) {
	ok := []struct{ name, payload, cid string }{
		{"check", `{"cid":"f-1"}`, "f-1"},
		{"resume", `{"cid":"A.b_c:d-9"}`, "A.b_c:d-9"},
		{"pause", `{"minutes":5,"cid":"x"}`, "x"},
		{"set", `{"key":"heartbeat.interval","value":"10m","cid":"x"}`, "x"},
		{"unset", `{"key":"heartbeat.interval","cid":"x"}`, "x"},
		{"get", `{"key":"heartbeat.interval","cid":"x"}`, "x"},
		{"checklist", `{"op":"show","cid":"x"}`, "x"},
		{"ack", `{"target":"too_hot","cid":"x"}`, "x"},
		{"rule", `{"op":"approve","target":"p7","cid":"x"}`, "x"},
		{"check", `{"cid":"` + strings.Repeat("a", 64) + `"}`, strings.Repeat("a", 64)},
		{"check", ``, ""},
		{"pause", `30`, ""},
		{"set", `heartbeat.interval 10m`, ""},
	}
	for _, tt := range ok {
		cid, err := parseCID([]byte(tt.payload))
		if err != nil || cid != tt.cid {
			t.Errorf("parseCID(%s) = %q, %v, want %q", tt.payload, cid, err, tt.cid)
		}
		if _, err := parseCommand(tt.name, []byte(tt.payload)); err != nil {
			t.Errorf("parseCommand(%s, %s) = %v, want the cid accepted", tt.name, tt.payload, err)
		}
	}
	const want = `"cid" must be`
	for _, p := range []string{`{"cid":""}`, `{"cid":"` + strings.Repeat("a", 65) + `"}`, `{"cid":"a b"}`, `{"cid":"a/b"}`,
		`{"cid":"é"}`, `{"cid":5}`, `{"cid":null}`, `{"cid":["a"]}`} {
		if _, err := parseCID([]byte(p)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseCID(%s) = %v, want an error containing %q", p, err, want)
		}
	}
}

// TestCommandCorrelationID: cmd/result echoes each JSON command's cid,
// whether the command ran, failed or was refused; a refusal by the
// device's policy says "refused": true, an error does not; a bad cid is
// refused before anything runs, without echoing it.
func TestCommandCorrelationID(t *testing.T) {
	cmds := &transporttest.Recorder{Err: func(verb string) error {
		switch verb {
		case "unset":
			return fmt.Errorf("%w: more than 10 changes a minute from mqtt; try again in 42s", transport.ErrRateLimited)
		case "ack":
			return transport.ErrNotFiring
		case "rule":
			return fmt.Errorf("heartbeat.max_llm_calls_per_day: %w: at most 96", manage.ErrRemoteRaise)
		}
		return transporttest.NotAllowed("check", "pause", "resume", "get", "checklist", "ack", "rule", "unset")(verb)
	}}
	sub := startCommands(t, cmds)
	tests := []struct {
		leaf, payload string
		wantOK        bool
		wantRefused   bool
		wantErr       string
	}{
		{"check", `{"cid":"c1"}`, true, false, ""},
		{"pause", `{"minutes":30,"cid":"c2"}`, true, false, ""},
		{"resume", `{"cid":"c3"}`, true, false, ""},
		{"get", `{"key":"heartbeat.interval","cid":"c4"}`, true, false, ""},
		{"checklist", `{"op":"set","text":"- fan on?\n","cid":"c5"}`, true, false, ""},
		{"set", `{"key":"heartbeat.interval","value":"10m","cid":"c6"}`, false, true, `not allowed: add "set" to [manage] remote`},
		{"unset", `{"key":"heartbeat.interval","cid":"c7"}`, false, true, "refused: more than 10 changes a minute from mqtt; try again in 42s"},
		{"rule", `{"op":"approve","target":"p7","cid":"c8"}`, false, true, "a remote channel may lower the daily LLM budget, not raise it"},
		{"ack", `{"target":"too_hot","cid":"c9"}`, false, false, "not firing"},
		{"pause", `{"minutes":0,"cid":"c10"}`, false, false, "1..1440"},
		{"pause", `{"cid":"c11"}`, false, false, `missing "minutes"`},
	}
	for _, tt := range tests {
		t.Run(tt.leaf+"/"+tt.payload, func(t *testing.T) {
			res := roundTrip(t, sub, tt.leaf, tt.payload)
			var sent struct{ CID string }
			_ = json.Unmarshal([]byte(tt.payload), &sent)
			if res.CID != sent.CID || res.OK != tt.wantOK || res.Refused != tt.wantRefused || !strings.Contains(res.Error, tt.wantErr) {
				t.Errorf("result = %+v, want cid %q, ok=%v, refused=%v, error containing %q", res, sent.CID, tt.wantOK, tt.wantRefused, tt.wantErr)
			}
		})
	}
	before := len(cmds.Calls())
	res := roundTrip(t, sub, "check", `{"cid":"a b"}`)
	if res.OK || res.CID != "" || res.Refused || !strings.Contains(res.Error, `cmd/check: "cid" must be 1-64 of A-Z a-z 0-9 . _ : - (got "a b", 3 bytes)`) {
		t.Errorf("a bad cid: result = %+v, want an error saying what a cid may be", res)
	}
	if calls := cmds.Calls(); len(calls) != before {
		t.Errorf("a command with a bad cid ran: %v", calls[before:])
	}
}

// TestInfoTagsAndDigest: info carries the tags and the config's digest,
// and SetInfo republishes it at once with what changed (a set of the
// interval, a checklist set), and not when nothing did.
func TestInfoTagsAndDigest(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/info")
	c := newTestClient(t, b.URL(), Config{Version: "v1.2.3", Interval: 30 * time.Minute, SampleInterval: 30 * time.Second,
		Tags: []string{"north", "tomatoes"}, ConfigDigest: "0123456789ab"}, nil)
	runClient(t, c)
	waitConnected(t, c)
	next := func() (Info, string) {
		t.Helper()
		m := sub.Next("vigil/dev1/info", wait5)
		var info Info
		if err := json.Unmarshal([]byte(m.Payload), &info); err != nil {
			t.Fatalf("info %q: %v", m.Payload, err)
		}
		return info, m.Payload
	}
	info, raw := next()
	if !strings.Contains(raw, `"tags":["north","tomatoes"]`) || !strings.Contains(raw, `"config":"0123456789ab"`) {
		t.Errorf("info = %s, want tags [north tomatoes] and config 0123456789ab", raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait5)
	defer cancel()
	in := transport.DeviceInfo{Interval: 10 * time.Minute, SampleInterval: 30 * time.Second, Tags: []string{"north", "tomatoes"}, Config: "ba9876543210"}
	if err := c.SetInfo(ctx, in); err != nil {
		t.Fatalf("SetInfo() = %v", err)
	}
	if info, raw = next(); info.Interval != "10m0s" || info.Config != "ba9876543210" {
		t.Errorf("info after SetInfo = %s, want interval 10m0s and config ba9876543210", raw)
	}
	if err := c.SetInfo(ctx, in); err != nil {
		t.Fatalf("SetInfo() again = %v", err)
	}
	if m, ok := sub.Maybe("vigil/dev1/info", 300*time.Millisecond); ok {
		t.Errorf("SetInfo with nothing changed republished info: %s", m.Payload)
	}
	in.Tags = nil
	if err := c.SetInfo(ctx, in); err != nil {
		t.Fatalf("SetInfo() without tags = %v", err)
	}
	if _, raw = next(); strings.Contains(raw, "tags") {
		t.Errorf("info without tags = %s, want no tags key", raw)
	}
	late := mosquittotest.Subscribe(t, b.URL(), "vigil/dev1/info")
	if m := late.Next("vigil/dev1/info", wait5); !m.Retained || m.Payload != raw {
		t.Errorf("retained info = %+v, want the last published, %s", m, raw)
	}
}
