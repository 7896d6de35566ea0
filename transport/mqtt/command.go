package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/vigil-iot/vigil/transport"
)

// Limits on inbound commands.
const (
	maxPayload   = 256
	cmdCheck     = "check"
	cmdPause     = "pause"
	cmdResume    = "resume"
	resultLeaf   = "result"
	cmdRunLimit  = 5 * time.Minute // a check runs the LLM; bounded anyway
	replyTimeout = opTimeout
)

// command is a validated inbound command.
type command struct {
	Name    string // check | pause | resume
	Minutes int    // pause only; its range is the commands' to check
}

// parseCommand validates the payload of <p>/<id>/cmd/<name>. check and
// resume take an empty payload or {}; pause takes whole minutes as a plain
// number or as {"minutes": N}. The range (transport.MinPause..MaxPause) is
// enforced once for every channel, by the transport.Commands behind us.
func parseCommand(name string, payload []byte) (command, error) {
	if len(payload) > maxPayload {
		return command{}, fmt.Errorf("payload longer than %d bytes", maxPayload)
	}
	p := bytes.TrimSpace(payload)
	switch name {
	case cmdCheck, cmdResume:
		if len(p) == 0 {
			return command{Name: name}, nil
		}
		var m map[string]json.RawMessage
		if err := decodeStrict(p, &m); err != nil || m == nil || len(m) != 0 {
			return command{}, fmt.Errorf("%s takes no arguments (empty payload or {})", name)
		}
		return command{Name: name}, nil
	case cmdPause:
		var n int
		if len(p) > 0 && p[0] == '{' {
			var v struct {
				Minutes *int `json:"minutes"`
			}
			if err := decodeStrict(p, &v); err != nil {
				return command{}, fmt.Errorf(`pause: want minutes as a number or {"minutes": N}: %w`, err)
			}
			if v.Minutes == nil {
				return command{}, errors.New(`pause: missing "minutes"`)
			}
			n = *v.Minutes
		} else {
			var err error
			n, err = strconv.Atoi(string(p))
			if err != nil {
				return command{}, fmt.Errorf(`pause: want minutes as a number or {"minutes": N}, got %q`, truncate(string(p), 32))
			}
		}
		return command{Name: name, Minutes: n}, nil
	}
	return command{}, fmt.Errorf("unknown command %q (want check, pause or resume)", truncate(name, 32))
}

// decodeStrict decodes exactly one JSON value with no unknown fields.
func decodeStrict(p []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// inbound is one command message, copied out of paho's message.
type inbound struct {
	Topic   string
	Payload []byte
}

// onCommand runs in paho's router: it must not block, so it only queues.
func (c *Client) onCommand(_ paho.Client, m paho.Message) {
	topic := m.Topic()
	name := topic[strings.LastIndexByte(topic, '/')+1:]
	if name == resultLeaf {
		return // our own replies
	}
	if m.Retained() {
		c.log.Warn("mqtt command ignored: retained commands are not executed", keyTopic, topic)
		return
	}
	select {
	case c.cmdq <- inbound{Topic: topic, Payload: m.Payload()}:
	default:
		c.log.Warn("mqtt command dropped: too many pending", keyTopic, topic)
	}
}

// commandResult is the payload of <p>/<id>/cmd/result.
type commandResult struct {
	Command string `json:"command"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

// commandLoop executes queued commands one at a time and publishes each
// result.
func (c *Client) commandLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-c.cmdq:
			name := m.Topic[strings.LastIndexByte(m.Topic, '/')+1:]
			sctx := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelMQTT, Topic: m.Topic})
			res := c.execute(sctx, name, m.Payload)
			if !res.OK {
				c.log.Warn("mqtt command rejected", keyCommand, truncate(name, 32), keyErr, res.Error)
			}
			payload, err := json.Marshal(res)
			if err != nil {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, replyTimeout)
			if err := c.publish(rctx, c.topic("cmd/"+resultLeaf), false, payload); err != nil {
				c.log.Warn("mqtt publish command result", keyErr, err)
			}
			cancel()
		}
	}
}

func (c *Client) execute(ctx context.Context, name string, payload []byte) commandResult {
	cmd, err := parseCommand(name, payload)
	if err != nil {
		return commandResult{Command: truncate(name, 32), Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, cmdRunLimit)
	defer cancel()
	var msg string
	switch cmd.Name {
	case cmdCheck:
		msg, err = c.cmds.Check(ctx)
	case cmdPause:
		msg, err = c.cmds.Pause(ctx, time.Duration(cmd.Minutes)*time.Minute)
	case cmdResume:
		msg, err = c.cmds.Resume(ctx)
	}
	if err != nil {
		return commandResult{Command: cmd.Name, Error: err.Error()}
	}
	return commandResult{Command: cmd.Name, OK: true, Message: msg}
}
