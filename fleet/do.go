package fleet

// `vigil fleet do VERB [ARGS] --select SELECTOR`: one command to many
// devices. The roll call finds them (so it works on a broker that keeps
// no retained messages for wildcards), the selector picks some, and
// without --yes nothing is sent: the dry run lists who would get what.
//
// Policy: every command carries a fresh correlation id ("cid"), which the
// device echoes in <p>/<id>/cmd/result; the CLI waits up to --timeout
// after its last publish and reports one line per device: ok, refused
// (the device's policy: [manage] remote lacks the verb, its rate limit),
// error, no answer; an offline or missing device is reported as no
// answer and never sent to. Publishes are spread (--rate, 50 a second) so a thousand
// devices do not answer at once. Exit: 0 only when every selected device
// said ok; 1 otherwise, and when the selector matches nobody; 2 for a
// bad verb, argument or selector (UsageError), naming it.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/termtext"
)

const (
	doTimeoutDef = 15 * time.Second
	doRateDef    = 50.0
	// maxCommandPayload is what a device takes on cmd/VERB (but
	// checklist): transport/mqtt's maxPayload.
	maxCommandPayload = 256
	// maxChecklistPayload is what it takes on cmd/checklist: room for
	// the text's JSON escapes (transport/mqtt's maxChecklistPayload).
	maxChecklistPayload = 2*config.MaxChecklistSize + 256
)

// doFlags are the flags of `vigil fleet do`.
type doFlags struct {
	selectors listFlag
	yes       bool
	timeout   time.Duration
	rate      float64
}

// DefineDo registers the flags of `vigil fleet do` on fs.
func (c *Command) DefineDo(fs *flag.FlagSet) {
	c.defineConn(fs)
	fs.Var(&c.do.selectors, "select", "which devices, a `SELECTOR`: id=GLOB, tag=NAME, firing, offline or all; repeat it or separate by commas: all must hold")
	fs.BoolVar(&c.do.yes, "yes", false, "send (without it, a dry run lists the devices and what they would get)")
	c.do.timeout, c.do.rate = doTimeoutDef, doRateDef
	fs.DurationVar(&c.do.timeout, "timeout", doTimeoutDef, "how long to wait for the devices' answers after the last command sent")
	fs.Float64Var(&c.do.rate, "rate", doRateDef, "commands sent per second at most")
}

// Results of one device.
const (
	ResultOK       = "ok"
	ResultRefused  = "refused"
	ResultError    = "error"
	ResultNoAnswer = "no answer" // also an offline or missing device, never sent to
	ResultDryRun   = "would send"
	ResultSkip     = "would not send" // dry run: offline or missing
)

// action is what `fleet do` sends: the verb (cmd/<Verb>) and its payload
// without the cid. ack without a target is one per problem firing
// unacknowledged on each device: Payloads gives them.
type action struct {
	Verb    string         `json:"verb"`
	Payload map[string]any `json:"payload,omitempty"`
	ackAll  bool
}

// payloads is what device d gets: one payload, or for ack without a
// target one per problem firing unacknowledged (none: nothing to do).
func (a action) payloads(d Device) []map[string]any {
	if !a.ackAll {
		return []map[string]any{a.Payload}
	}
	var out []map[string]any
	for _, f := range d.Firing {
		if f.AckedBy == "" {
			out = append(out, map[string]any{"target": cmp.Or(f.ID, f.Rule, f.Source)})
		}
	}
	return out
}

func (a action) String() string {
	if a.ackAll {
		return "cmd/ack for each problem firing unacknowledged"
	}
	b, _ := json.Marshal(a.Payload)
	return "cmd/" + a.Verb + " " + string(b)
}

// verbsWant is what the verbs look like, for a usage error.
const verbsWant = "check, pause MINUTES, resume, set KEY VALUE, unset KEY, checklist set FILE, ack [TARGET], rule approve|reject|drop NAME"

// parseAction reads VERB [ARGS]. A checklist is read from its file and
// refused here when a device would refuse it for its size.
func parseAction(args []string) (action, error) {
	if len(args) == 0 {
		return action{}, usageErr("fleet do: no verb (want one of: %s)", verbsWant)
	}
	verb, rest := args[0], args[1:]
	nargs := func(n int, want string) error {
		if len(rest) != n {
			return usageErr("fleet do %s: want %s, got %d argument(s)", verb, want, len(rest))
		}
		return nil
	}
	a := action{Verb: verb, Payload: map[string]any{}}
	switch verb {
	case "check", "resume":
		if err := nargs(0, "no argument"); err != nil {
			return a, err
		}
	case "pause":
		if err := nargs(1, "MINUTES"); err != nil {
			return a, err
		}
		n, err := strconv.Atoi(rest[0])
		if err != nil || n <= 0 {
			return a, usageErr("fleet do pause: %q is not a number of minutes (want a whole number above 0)", rest[0])
		}
		a.Payload["minutes"] = n
	case "set":
		if len(rest) < 2 {
			return a, usageErr("fleet do set: want KEY VALUE (e.g. set heartbeat.interval 10m)")
		}
		a.Payload["key"], a.Payload["value"] = rest[0], strings.Join(rest[1:], " ")
	case "unset":
		if err := nargs(1, "KEY"); err != nil {
			return a, err
		}
		a.Payload["key"] = rest[0]
	case "checklist":
		if len(rest) != 2 || rest[0] != "set" {
			return a, usageErr("fleet do checklist: want set FILE (the new HEARTBEAT.md)")
		}
		text, err := readChecklist(rest[1])
		if err != nil {
			return a, err
		}
		a.Payload["op"], a.Payload["text"] = "set", text
	case "ack":
		if len(rest) > 1 {
			return a, usageErr("fleet do ack: want [TARGET] (a rule, llm or an alert id; none: every problem firing unacknowledged), got %d arguments", len(rest))
		}
		if len(rest) == 0 {
			a.ackAll, a.Payload = true, nil
		} else {
			a.Payload["target"] = rest[0]
		}
	case "rule":
		if len(rest) != 2 || !slices.Contains([]string{"approve", "reject", "drop"}, rest[0]) {
			return a, usageErr("fleet do rule: want approve ID, reject ID or drop NAME")
		}
		a.Payload["op"], a.Payload["target"] = rest[0], rest[1]
	default:
		return a, usageErr("fleet do: unknown verb %q (want one of: %s)", verb, verbsWant)
	}
	if a.Payload != nil {
		limit := maxCommandPayload
		if verb == "checklist" {
			limit = maxChecklistPayload
		}
		b, _ := json.Marshal(withCID(a.Payload, strings.Repeat("x", cidLen)))
		if len(b) > limit {
			return a, usageErr("fleet do %s: the command is %d bytes, more than the %d a device takes on cmd/%s: nothing sent", verb, len(b), limit, verb)
		}
	}
	return a, nil
}

// readChecklist reads and checks a checklist as a device would: larger
// than config.MaxChecklistSize, it is refused before anything is sent.
func readChecklist(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", usageErr("fleet do checklist set: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > config.MaxChecklistSize {
		return "", usageErr("fleet do checklist set %s: %d bytes, more than a device takes (%d KiB, config.MaxChecklistSize): nothing sent; shorten it",
			file, st.Size(), config.MaxChecklistSize>>10)
	}
	text, empty, err := config.ParseChecklist(f)
	if err != nil {
		return "", usageErr("fleet do checklist set %s: %v: nothing sent", file, err)
	}
	if empty {
		return "", usageErr("fleet do checklist set %s: the checklist is empty (every heartbeat would be skipped): nothing sent", file)
	}
	return text, nil
}

// Selector picks devices: every term must hold.
type Selector struct {
	terms []term
	text  string
}

type term struct{ kind, arg string }

// String is the selector as given: "tag=north,firing".
func (s Selector) String() string { return s.text }

// selectorWant is what a selector term looks like, for a usage error.
const selectorWant = "id=GLOB, tag=NAME, firing, offline or all"

// ParseSelector reads the --select terms.
func ParseSelector(terms []string) (Selector, error) {
	if len(terms) == 0 {
		return Selector{}, usageErr("fleet do: --select is required (%s; --select all for every device)", selectorWant)
	}
	s := Selector{text: strings.Join(terms, ",")}
	for _, t := range terms {
		kind, arg, hasArg := strings.Cut(t, "=")
		switch {
		case (kind == "all" || kind == "firing" || kind == Offline) && !hasArg:
		case kind == "tag" && arg != "":
		case kind == "id" && arg != "":
			if _, err := path.Match(arg, ""); err != nil {
				return s, usageErr("fleet do: --select %q: bad pattern: %v (* any text, ? one character, [a-z] a range)", t, err)
			}
		case (kind == "tag" || kind == "id") && arg == "":
			return s, usageErr("fleet do: --select %q: %s= needs a value (want %s)", t, kind, selectorWant)
		default:
			return s, usageErr("fleet do: --select %q: unknown selector (want %s)", t, selectorWant)
		}
		s.terms = append(s.terms, term{kind, arg})
	}
	return s, nil
}

// Match reports whether every term holds for d.
func (s Selector) Match(d Device) bool {
	for _, t := range s.terms {
		var ok bool
		switch t.kind {
		case "all":
			ok = true
		case "firing":
			ok = len(d.Firing) > 0
		case Offline:
			ok = d.State == Offline || d.State == Missing
		case "tag":
			ok = d.HasTag(t.arg)
		case "id":
			ok, _ = path.Match(t.arg, d.ID)
		}
		if !ok {
			return false
		}
	}
	return true
}

// Outcome is what became of the command on one device.
type Outcome struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Result  string `json:"result"`            // ok | refused | error | no answer | would send | would not send
	Message string `json:"message,omitempty"` // the device's error or answer, or why nothing was sent
	Sent    int    `json:"sent"`              // commands sent (ack without a target: one per problem)
}

// Report is the whole of one `fleet do`, as --json prints it.
type Report struct {
	Time     time.Time      `json:"time"`
	Verb     string         `json:"verb"`
	Command  string         `json:"command"` // what each device gets
	Selector string         `json:"selector"`
	DryRun   bool           `json:"dry_run"`
	Devices  []Outcome      `json:"devices"`
	Counts   map[string]int `json:"counts"`
}

// cidLen is the length of a correlation id: a run's random prefix and a
// sequence number.
const cidLen = 20

// RunDo runs `vigil fleet do` with the flags DefineDo's flag set parsed
// and the arguments left (VERB [ARGS]).
func (c *Command) RunDo(ctx context.Context, args []string) error {
	a, err := parseAction(args)
	if err != nil {
		return err
	}
	sel, err := ParseSelector(c.do.selectors)
	if err != nil {
		return err
	}
	if c.do.rate <= 0 {
		return usageErr("fleet do: --rate %v: want commands per second above 0", c.do.rate)
	}
	if c.do.timeout <= 0 {
		return usageErr("fleet do: --timeout %v: want a duration above 0", c.do.timeout)
	}
	w := newWaiter()
	s, err := c.open(ctx, w.result)
	if err != nil {
		return err
	}
	defer s.close()
	all, err := s.gather(ctx)
	if err != nil {
		return err
	}
	var picked []Device
	for _, d := range all {
		if sel.Match(d) {
			picked = append(picked, d)
		}
	}
	if len(picked) == 0 {
		return fmt.Errorf("fleet do: no device matches --select %s (of %d devices seen%s): nothing sent", sel, len(all), tagsSeen(all))
	}
	rep := Report{Time: s.clock.Now().UTC(), Verb: a.Verb, Command: a.String(), Selector: sel.String(), DryRun: !c.do.yes, Counts: map[string]int{}}
	if !c.do.yes {
		for _, d := range picked {
			o := Outcome{ID: d.ID, State: d.State, Result: ResultDryRun, Sent: len(a.payloads(d))}
			if reason := notSent(d); reason != "" {
				o.Result, o.Message, o.Sent = ResultSkip, reason, 0
			}
			rep.Devices = append(rep.Devices, o)
			rep.Counts[o.Result]++
		}
		if err := c.writeReport(rep); err != nil {
			return err
		}
		if rep.Counts[ResultDryRun] == 0 {
			return errors.New("fleet do: every device selected is offline or missing: nothing would be sent")
		}
		return nil
	}
	c.send(ctx, s, w, a, picked, &rep)
	if err := c.writeReport(rep); err != nil {
		return err
	}
	if bad := len(rep.Devices) - rep.Counts[ResultOK]; bad > 0 {
		return fmt.Errorf("fleet do %s: %d of %d devices did not say ok", a.Verb, bad, len(rep.Devices))
	}
	return nil
}

// notSent is why d is never sent to ("" when it is).
func notSent(d Device) string {
	switch d.State {
	case Offline:
		return "offline"
	case Missing:
		if d.LastSeen.IsZero() {
			return "missing"
		}
		return "missing, last seen " + d.LastSeen.UTC().Format(time.RFC3339)
	}
	return ""
}

// tagsSeen is ", tags seen: a, b" for a message when nobody matched.
func tagsSeen(devs []Device) string {
	var tags []string
	for _, d := range devs {
		for _, t := range d.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	if len(tags) == 0 {
		return "; none has a tag"
	}
	slices.Sort(tags)
	return "; tags seen: " + termtext.Line(strings.Join(tags, ", "))
}

// send publishes a to every device picked that is not offline or missing,
// at most c.do.rate a second, waits for the answers, and fills rep.
func (c *Command) send(ctx context.Context, s *session, w *waiter, a action, picked []Device, rep *Report) {
	prefix := newCIDPrefix()
	interval := time.Duration(float64(time.Second) / c.do.rate)
	var next time.Time
	seq := 0
	outcomes := make([]Outcome, len(picked))
	var tokens []struct {
		i   int
		cid string
		tok paho.Token
	}
	for i, d := range picked {
		outcomes[i] = Outcome{ID: d.ID, State: d.State}
		if reason := notSent(d); reason != "" {
			outcomes[i].Result, outcomes[i].Message = ResultNoAnswer, reason+", not sent"
			continue
		}
		for _, p := range a.payloads(d) {
			if wait := next.Sub(s.clock.Now()); wait > 0 {
				select {
				case <-s.clock.After(wait):
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				break
			}
			next = s.clock.Now().Add(interval)
			seq++
			cid := fmt.Sprintf("%s-%d", prefix, seq)
			body, _ := json.Marshal(withCID(p, cid))
			w.expect(cid, d.ID, a.Verb)
			tok := s.cli.Publish(s.prefix+"/"+d.ID+"/cmd/"+a.Verb, 1, false, body)
			tokens = append(tokens, struct {
				i   int
				cid string
				tok paho.Token
			}{i, cid, tok})
			outcomes[i].Sent++
		}
		if outcomes[i].Sent == 0 && ctx.Err() == nil {
			outcomes[i].Result, outcomes[i].Message = ResultOK, "nothing to acknowledge"
		}
	}
	for _, t := range tokens {
		if t.tok.WaitTimeout(connectWait) && t.tok.Error() != nil {
			w.fail(t.cid, "publish: "+t.tok.Error().Error())
		}
	}
	w.wait(ctx, c.do.timeout)
	for _, t := range tokens {
		o := &outcomes[t.i]
		r, ok := w.answer(t.cid)
		switch {
		case !ok:
			worse(o, ResultNoAnswer, "")
		case r.Refused:
			worse(o, ResultRefused, r.Error)
		case !r.OK:
			worse(o, ResultError, r.Error)
		default:
			worse(o, ResultOK, r.Message)
		}
	}
	for _, o := range outcomes {
		rep.Devices = append(rep.Devices, o)
		rep.Counts[o.Result]++
	}
}

// worse records result on o unless o already has a worse one: refused,
// error, no answer, then ok.
func worse(o *Outcome, result, msg string) {
	rank := func(r string) int {
		return slices.Index([]string{"", ResultOK, ResultNoAnswer, ResultError, ResultRefused}, r)
	}
	if rank(result) > rank(o.Result) {
		o.Result, o.Message = result, msg
	}
}

func withCID(p map[string]any, cid string) map[string]any {
	out := make(map[string]any, len(p)+1)
	for k, v := range p {
		out[k] = v
	}
	out["cid"] = cid
	return out
}

// newCIDPrefix is a random prefix, so two operators' ids never collide.
func newCIDPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "vf" + hex.EncodeToString(b)
}

// answer is a device's cmd/result.
type answer struct {
	CID     string `json:"cid"`
	Command string `json:"command"`
	OK      bool   `json:"ok"`
	Refused bool   `json:"refused"`
	Message string `json:"message"`
	Error   string `json:"error"`
}

// waiter matches cmd/result answers to the commands sent, by cid; an
// answer without one (a vigil from before correlation ids) is taken for
// the one command of its name still waiting on that device, if there is
// exactly one.
type waiter struct {
	mu      sync.Mutex
	pending map[string]pending // by cid
	answers map[string]answer
	done    chan struct{} // a value each time an answer came
}

type pending struct{ device, verb string }

func newWaiter() *waiter {
	return &waiter{pending: map[string]pending{}, answers: map[string]answer{}, done: make(chan struct{}, 1)}
}

func (w *waiter) expect(cid, device, verb string) {
	w.mu.Lock()
	w.pending[cid] = pending{device, verb}
	w.mu.Unlock()
}

// result takes one cmd/result payload from device id.
func (w *waiter) result(id string, payload []byte) {
	var r answer
	if json.Unmarshal(payload, &r) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cid := r.CID
	if cid == "" {
		var only []string
		for k, p := range w.pending {
			if p.device == id && p.verb == r.Command {
				only = append(only, k)
			}
		}
		if len(only) != 1 {
			return
		}
		cid = only[0]
	}
	if p, ok := w.pending[cid]; !ok || p.device != id {
		return
	}
	delete(w.pending, cid)
	w.answers[cid] = r
	select {
	case w.done <- struct{}{}:
	default:
	}
}

// fail answers cid with an error of this side (the publish failed).
func (w *waiter) fail(cid, msg string) {
	w.mu.Lock()
	if _, ok := w.pending[cid]; ok {
		delete(w.pending, cid)
		w.answers[cid] = answer{CID: cid, Error: msg}
	}
	w.mu.Unlock()
}

func (w *waiter) answer(cid string) (answer, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.answers[cid]
	return r, ok
}

// wait returns when nothing is pending, or timeout after it was called.
func (w *waiter) wait(ctx context.Context, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		w.mu.Lock()
		n := len(w.pending)
		w.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-w.done:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// writeReport prints rep: as JSON, or one line per device and the counts.
func (c *Command) writeReport(rep Report) error {
	if c.asJSON {
		if err := termtext.WriteJSON(c.Stdout, rep); err != nil {
			return fmt.Errorf("write fleet do json: %w", err)
		}
		return nil
	}
	var b strings.Builder
	n := len(rep.Devices)
	if rep.DryRun {
		fmt.Fprintf(&b, "dry run: %s to %d device%s matching --select %s:\n",
			clip(termtext.Line(rep.Command), 60), rep.Counts[ResultDryRun], plural(rep.Counts[ResultDryRun]), termtext.Line(rep.Selector))
	} else {
		fmt.Fprintf(&b, "%s to the devices matching --select %s:\n", clip(termtext.Line(rep.Command), 60), termtext.Line(rep.Selector))
	}
	rows := [][]string{{"DEVICE", "STATE", "RESULT"}}
	for _, o := range rep.Devices {
		res := o.Result
		switch {
		case o.Result == ResultRefused || o.Result == ResultError:
			res += ": " + cmp.Or(o.Message, "no reason given")
		case (o.Result == ResultNoAnswer || o.Result == ResultSkip) && o.Message != "":
			res += " (" + o.Message + ")"
		case o.Result == ResultDryRun && o.Sent != 1:
			res += fmt.Sprintf(" %d", o.Sent)
		}
		rows = append(rows, []string{clip(termtext.Line(o.ID), idWidth), o.State, termtext.Line(res)})
	}
	writeColumns(&b, rows)
	var counts []string
	for _, r := range []string{ResultOK, ResultRefused, ResultError, ResultNoAnswer, ResultDryRun, ResultSkip} {
		if k := rep.Counts[r]; k > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", k, r))
		}
	}
	fmt.Fprintf(&b, "%d device%s: %s\n", n, plural(n), strings.Join(counts, ", "))
	if rep.DryRun {
		b.WriteString("nothing sent: add --yes to send\n")
	}
	if _, err := c.Stdout.Write([]byte(b.String())); err != nil {
		return fmt.Errorf("write fleet do: %w", err)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
