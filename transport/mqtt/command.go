package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// Limits on inbound commands.
const (
	maxPayload  = 256
	cmdCheck    = "check"
	cmdPause    = "pause"
	cmdResume   = "resume"
	cmdGet      = "get"
	cmdSet      = "set"
	cmdUnset    = "unset"
	cmdList     = "checklist"
	cmdAck      = "ack"
	cmdRule     = "rule"
	resultLeaf  = "result"
	cmdRunLimit = 5 * time.Minute // a check runs the LLM; bounded anyway
	// maxChecklist is the checklist's own limit (config.MaxChecklistSize,
	// which a test keeps equal): the commands check the text again with
	// config.ParseChecklist. maxChecklistPayload leaves room for the JSON
	// around it and its escapes.
	maxChecklist        = 16 << 10
	maxChecklistPayload = 2*maxChecklist + 256
	replyTimeout        = opTimeout
	// maxCommand bounds every command payload the handler passes on; each
	// command's own limit (commandLimit) is lower still.
	maxCommand = 64 << 10
)

// commandLimit is the largest payload the command name takes, and whether
// name is a command at all.
func commandLimit(name string) (int, bool) {
	switch name {
	case cmdList:
		return min(maxChecklistPayload, maxCommand), true
	case cmdCheck, cmdPause, cmdResume, cmdGet, cmdSet, cmdUnset, cmdAck, cmdRule:
		return min(maxPayload, maxCommand), true
	}
	return 0, false
}

// checkSize refuses a payload of n bytes over the limit of command name.
// An unknown name is parseCommand's to refuse.
func checkSize(name string, n int) error {
	limit, known := commandLimit(name)
	if !known || n <= limit {
		return nil
	}
	if name == cmdList {
		return fmt.Errorf("cmd/checklist: payload is %d bytes, more than %d (the checklist itself may be at most %d KiB)", n, limit, maxChecklist>>10)
	}
	return fmt.Errorf("payload is %d bytes, longer than %d bytes", n, limit)
}

// command is a validated inbound command.
type command struct {
	Name    string // check | pause | resume | get | set | unset | checklist | ack | rule
	Minutes int    // pause only; its range is the commands' to check
	Key     string // get ("" for every key), set, unset
	Value   string // set
	Op      string // checklist: transport.ChecklistShow, ChecklistSet or ChecklistReset; rule: transport.RuleApprove, RuleReject or RuleDrop
	Text    string // checklist set
	Target  string // ack: a rule, llm, an alert id, or "" (the only problem firing); rule: a proposal's ID or a rule's name
}

// parseCommand validates the payload of <p>/<id>/cmd/<name>. check and
// resume take an empty payload or {}; pause takes whole minutes as a plain
// number or as {"minutes": N}. The range (transport.MinPause..MaxPause) is
// enforced once for every channel, by the CmdHandler behind us, as
// are the keys and values of get, set and unset and the checklist's content.
func parseCommand(name string, payload []byte) (command, error) {
	if err := checkSize(name, len(payload)); err != nil {
		return command{}, err
	}
	p := bytes.TrimSpace(payload)
	switch name {
	case cmdCheck, cmdResume:
		if len(p) == 0 {
			return command{Name: name}, nil
		}
		var m map[string]json.RawMessage
		err := decodeStrict(p, &m)
		delete(m, "cid") // parseCID's
		if err != nil || m == nil || len(m) != 0 {
			return command{}, fmt.Errorf(`%s takes no arguments (empty payload, {} or {"cid": "..."})`, name)
		}
		return command{Name: name}, nil
	case cmdPause:
		var n int
		if len(p) > 0 && p[0] == '{' {
			var v struct {
				Minutes *int   `json:"minutes"`
				CID     string `json:"cid"` // parseCID's
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
	case cmdGet, cmdUnset:
		return parseKey(name, p)
	case cmdSet:
		return parseSet(p)
	case cmdList:
		return parseChecklist(p)
	case cmdAck:
		return parseAck(p)
	case cmdRule:
		return parseRule(p)
	}
	return command{}, fmt.Errorf("unknown command %q (want check, pause, resume, get, set, unset, checklist, ack or rule)", truncate(name, 32))
}

// parseKey reads the payload of cmd/get (empty: every key) and cmd/unset:
// the key as text or as {"key": "..."}.
func parseKey(name string, p []byte) (command, error) {
	want := `the key as text or {"key": "..."}`
	if name == cmdGet {
		want = `nothing (every key), the key as text, or {"key": "..."}`
	}
	key := string(p)
	if len(p) > 0 && p[0] == '{' {
		var v struct {
			Key *string `json:"key"`
			CID string  `json:"cid"` // parseCID's
		}
		if err := decodeStrict(p, &v); err != nil {
			return command{}, fmt.Errorf("cmd/%s: want %s: %w", name, want, err)
		}
		if v.Key == nil {
			return command{}, fmt.Errorf(`cmd/%s: missing "key" (want %s)`, name, want)
		}
		key = strings.TrimSpace(*v.Key)
	}
	if err := checkKey(key); err != nil {
		return command{}, fmt.Errorf("cmd/%s: %w (want %s)", name, err, want)
	}
	if key == "" && name != cmdGet {
		return command{}, fmt.Errorf("cmd/%s: no key (want %s)", name, want)
	}
	return command{Name: name, Key: key}, nil
}

// checkKey refuses what cannot be a key (heartbeat.interval,
// rule.<name>.enabled): a key is one word. Whether it is a settable key is
// the commands' to say.
func checkKey(key string) error {
	if i := strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }); i >= 0 {
		return fmt.Errorf("key %q is not one word", truncate(key, 32))
	}
	return nil
}

// parseAck reads the payload of cmd/ack: what to acknowledge (a rule,
// llm, an alert id) as text or as {"target": "..."}; empty (or {}) for
// the only problem firing.
func parseAck(p []byte) (command, error) {
	const want = `nothing (the only problem firing), a rule, llm or an alert id as text, or {"target": "..."}`
	target := string(p)
	if len(p) > 0 && p[0] == '{' {
		var v struct {
			Target string `json:"target"`
			CID    string `json:"cid"` // parseCID's
		}
		if err := decodeStrict(p, &v); err != nil {
			return command{}, fmt.Errorf("cmd/ack: want %s: %w", want, err)
		}
		target = strings.TrimSpace(v.Target)
	}
	if err := checkKey(target); err != nil {
		return command{}, fmt.Errorf("cmd/ack: %w (want %s)", err, want)
	}
	return command{Name: cmdAck, Target: target}, nil
}

// parseRule reads the payload of cmd/rule: "approve ID", "reject ID" or
// "drop NAME" as text, or {"op": "approve", "target": "p7"}.
func parseRule(p []byte) (command, error) {
	const want = `"approve ID", "reject ID" or "drop NAME", or {"op": "approve", "target": "ID"}`
	var op, target string
	if len(p) > 0 && p[0] == '{' {
		var v struct {
			Op     string `json:"op"`
			Target string `json:"target"`
			CID    string `json:"cid"` // parseCID's
		}
		if err := decodeStrict(p, &v); err != nil {
			return command{}, fmt.Errorf("cmd/rule: want %s: %w", want, err)
		}
		op, target = v.Op, strings.TrimSpace(v.Target)
	} else {
		op, target, _ = strings.Cut(string(p), " ")
		target = strings.TrimSpace(target)
	}
	switch {
	case op != transport.RuleApprove && op != transport.RuleReject && op != transport.RuleDrop:
		return command{}, fmt.Errorf("cmd/rule: unknown op %q (want %s)", truncate(op, 32), want)
	case target == "":
		return command{}, fmt.Errorf("cmd/rule: want %s, got %q", want, truncate(string(p), 32))
	case strings.ContainsFunc(target, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }):
		return command{}, fmt.Errorf("cmd/rule: target %q is not one word (want %s)", truncate(target, 32), want)
	}
	return command{Name: cmdRule, Op: op, Target: target}, nil
}

// parseSet reads the payload of cmd/set: "KEY VALUE" as text (the value is
// the rest, spaces and all) or {"key": "...", "value": "..."}.
func parseSet(p []byte) (command, error) {
	const want = `"KEY VALUE" or {"key": "...", "value": "..."}`
	var key, value string
	if len(p) > 0 && p[0] == '{' {
		var v struct {
			Key   *string `json:"key"`
			Value *string `json:"value"`
			CID   string  `json:"cid"` // parseCID's
		}
		if err := decodeStrict(p, &v); err != nil {
			return command{}, fmt.Errorf("cmd/set: want %s: %w", want, err)
		}
		if v.Key == nil || v.Value == nil {
			return command{}, fmt.Errorf(`cmd/set: want both "key" and "value" in %s`, want)
		}
		key, value = strings.TrimSpace(*v.Key), strings.TrimSpace(*v.Value)
	} else {
		s := string(p)
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i < 0 {
			return command{}, fmt.Errorf("cmd/set: want %s, got %q", want, truncate(s, 32))
		}
		key, value = s[:i], strings.TrimSpace(s[i:])
	}
	if err := checkKey(key); err != nil {
		return command{}, fmt.Errorf("cmd/set: %w (want %s)", err, want)
	}
	if key == "" || value == "" {
		return command{}, fmt.Errorf("cmd/set: want %s, got %q", want, truncate(string(p), 32))
	}
	return command{Name: cmdSet, Key: key, Value: value}, nil
}

// parseChecklist reads the payload of cmd/checklist: {"op": "show"},
// {"op": "set", "text": "..."}, {"op": "reset"}, or the plain words show
// and reset.
func parseChecklist(p []byte) (command, error) {
	const want = `{"op": "show"}, {"op": "set", "text": "..."}, {"op": "reset"}, or the word show or reset`
	if len(p) == 0 || p[0] != '{' {
		switch op := string(p); op {
		case transport.ChecklistShow, transport.ChecklistReset:
			return command{Name: cmdList, Op: op}, nil
		}
		return command{}, fmt.Errorf("cmd/checklist: want %s, got %q", want, truncate(string(p), 32))
	}
	var v struct {
		Op   string  `json:"op"`
		Text *string `json:"text"`
		CID  string  `json:"cid"` // parseCID's
	}
	if err := decodeStrict(p, &v); err != nil {
		return command{}, fmt.Errorf("cmd/checklist: want %s: %w", want, err)
	}
	switch v.Op {
	case transport.ChecklistShow, transport.ChecklistReset:
		if v.Text != nil {
			return command{}, fmt.Errorf(`cmd/checklist: "text" goes only with "op": "set"`)
		}
		return command{Name: cmdList, Op: v.Op}, nil
	case transport.ChecklistSet:
		if v.Text == nil {
			return command{}, errors.New(`cmd/checklist: "op": "set" needs "text" (the whole checklist)`)
		}
		if len(*v.Text) > maxChecklist {
			return command{}, fmt.Errorf("cmd/checklist: text is %d bytes, more than the checklist's %d KiB", len(*v.Text), maxChecklist>>10)
		}
		return command{Name: cmdList, Op: v.Op, Text: *v.Text}, nil
	}
	return command{}, fmt.Errorf("cmd/checklist: unknown op %q (want %s)", truncate(v.Op, 32), want)
}

// maxCID is the longest correlation id.
const maxCID = 64

// parseCID reads the correlation id a JSON payload may carry ("cid": a
// string of 1-64 of A-Z a-z 0-9 . _ : -), which the result echoes. A
// payload that is no JSON object, or one without "cid", has none; one that
// is no valid JSON is the command's parser's to refuse.
func parseCID(p []byte) (string, error) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || p[0] != '{' {
		return "", nil
	}
	var v struct {
		CID json.RawMessage `json:"cid"`
	}
	if json.Unmarshal(p, &v) != nil || v.CID == nil {
		return "", nil
	}
	var cid string
	if err := json.Unmarshal(v.CID, &cid); err != nil {
		return "", fmt.Errorf(`"cid" must be a string of 1-%d of A-Z a-z 0-9 . _ : - (got %s)`, maxCID, truncate(string(v.CID), 32))
	}
	if !validCID(cid) {
		return "", fmt.Errorf(`"cid" must be 1-%d of A-Z a-z 0-9 . _ : - (got %q, %d bytes)`, maxCID, truncate(cid, 32), len(cid))
	}
	return cid, nil
}

func validCID(s string) bool {
	if len(s) == 0 || len(s) > maxCID {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
		default:
			return false
		}
	}
	return true
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

// inbound is one command message, as the handler passed it on: the
// payload only when it is within the command's limit.
type inbound struct {
	Topic   string
	Payload []byte
	Size    int // the payload's size as it came
}

// onCommand runs in paho's router: it must not block, so it only queues.
// Paho has read the whole message already (it has no cap on an incoming
// packet: the broker's max_packet_size is the first defence); what the
// handler keeps is bounded. A payload over its command's limit, or on a
// topic that is no command, is dropped here: only its size or the name
// is queued, for the result that says why.
func (c *Client) onCommand(_ paho.Client, m paho.Message) {
	topic := m.Topic()
	name := topic[strings.LastIndexByte(topic, '/')+1:]
	if name == resultLeaf {
		return // our own replies
	}
	if m.Retained() {
		c.log.Warn("mqtt command ignored: retained commands are not executed", keyTopic, truncate(topic, 128))
		return
	}
	in := inbound{Topic: topic, Size: len(m.Payload())}
	limit, known := commandLimit(name)
	switch {
	case !known:
		in.Topic = c.topic("cmd/" + strings.Clone(truncate(name, 32)))
	case in.Size <= limit:
		in.Payload = m.Payload()
	}
	select {
	case c.cmdq <- in:
	default:
		// One warning per burst; the cmd/result after the next command
		// says how many were dropped.
		level := slog.LevelDebug
		if c.cmdDropped.Add(1) == 1 {
			level = slog.LevelWarn
		}
		c.log.Log(context.Background(), level, "mqtt command dropped: too many pending", keyTopic, in.Topic)
	}
}

// commandResult is the payload of <p>/<id>/cmd/result.
type commandResult struct {
	Command string `json:"command"`
	CID     string `json:"cid,omitempty"`    // the command's correlation id, if it had a valid one
	Key     string `json:"key,omitempty"`    // get, set, unset: the key asked about
	Op      string `json:"op,omitempty"`     // checklist: show, set or reset; rule: approve, reject or drop
	Target  string `json:"target,omitempty"` // ack, rule: what was named
	OK      bool   `json:"ok"`
	// Refused: the device's policy turned the command down ([manage]
	// remote lacks the verb, too many changes a minute, a remote raise of
	// the LLM budget, a model [manage] models lacks); Error says why.
	// Without it, a result that is not OK failed (a bad payload, an
	// unknown key, a value out of range, an error of the device).
	Refused bool   `json:"refused,omitempty"`
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
			var res commandResult
			if err := checkSize(name, m.Size); err != nil {
				res = commandResult{Command: name, Error: err.Error()}
			} else {
				res = c.execute(sctx, name, m.Payload)
			}
			if !res.OK {
				c.log.Warn("mqtt command rejected", keyCommand, truncate(name, 32), keyErr, res.Error)
			}
			c.reply(ctx, res)
			// Commands that found the queue full are not silent: one
			// result says how many were dropped.
			if n := c.cmdDropped.Swap(0); n > 0 {
				c.reply(ctx, commandResult{Error: fmt.Sprintf("%d commands dropped: more than %d were waiting (send fewer, or wait for each result)", n, cmdQueue)})
			}
		}
	}
}

// reply publishes res on <p>/<id>/cmd/result.
func (c *Client) reply(ctx context.Context, res commandResult) {
	payload, err := json.Marshal(res)
	if err != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, replyTimeout)
	defer cancel()
	if err := c.publish(rctx, c.topic("cmd/"+resultLeaf), false, payload); err != nil {
		c.log.Warn("mqtt publish command result", keyErr, err)
	}
}

func (c *Client) execute(ctx context.Context, name string, payload []byte) commandResult {
	cid, err := parseCID(payload)
	if err != nil {
		return commandResult{Command: truncate(name, 32), Error: "cmd/" + truncate(name, 32) + ": " + err.Error()}
	}
	cmd, err := parseCommand(name, payload)
	if err != nil {
		return commandResult{Command: truncate(name, 32), CID: cid, Error: err.Error()}
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
	case cmdGet:
		msg, err = c.cmds.Get(ctx, cmd.Key)
	case cmdSet:
		msg, err = c.cmds.Set(ctx, cmd.Key, cmd.Value)
	case cmdUnset:
		msg, err = c.cmds.Unset(ctx, cmd.Key)
	case cmdList:
		msg, err = c.cmds.Checklist(ctx, cmd.Op, cmd.Text)
	case cmdAck:
		msg, err = c.cmds.Ack(ctx, cmd.Target)
	case cmdRule:
		msg, err = c.cmds.RuleDecide(ctx, cmd.Op, cmd.Target)
	}
	res := commandResult{Command: cmd.Name, CID: cid, Key: cmd.Key, Op: cmd.Op, Target: cmd.Target}
	switch {
	case errors.Is(err, alert.ErrNotAllowed):
		// The verb names are [manage] remote's: cmd/<name> is <name> there.
		res.Refused, res.Error = true, fmt.Sprintf("not allowed: add %q to [manage] remote", cmd.Name)
	case errors.Is(err, alert.ErrRefused):
		res.Refused, res.Error = true, err.Error()
	case err != nil:
		res.Error = err.Error()
	default:
		res.OK, res.Message = true, msg
	}
	return res
}
