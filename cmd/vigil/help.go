package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/internal/termtext"
)

// cmdDoc is one command's help: the source of `vigil help`, `vigil help
// CMD`, `vigil CMD --help` and the vigil(1) man page, so the three never
// disagree.
type cmdDoc struct {
	name    string // "check", "config check"
	args    string // the synopsis after the name
	summary string // one line, for the command table
	detail  string // a paragraph, for the command's own help
	example string // one or more command lines
}

// commandDocs lists the commands in the order the usage shows them.
var commandDocs = []cmdDoc{
	{"init", "[--yes] [--force] [flags]", "set up this board: sensors, rules, alerts, then a test alert",
		"Asks a few questions on a terminal (or, with --yes, takes every answer from its flags and VIGIL_INIT_<FLAG> variables): names the board and what its buses have (each sensor read once, the chip told by its ID register), offers starter rules, checks Telegram (getMe, then the chat of a /start), MQTT and the LLM once each, writes the secrets to the credential store (mode 0600) and -c's config.toml (mode 0640, atomically, an existing one kept as a backup) after validating it as 'config check' does, restarts vigil.service when systemd runs and sends a test alert to every channel. Run again, it shows what is there and changes only what you choose; with --yes it replaces an existing config only with --force. Exits 1 when a check fails (the old config untouched), 78 when the config would not validate (nothing written).",
		"vigil -c /etc/vigil/config.toml init --yes --telegram-token-file token.txt --mqtt mqtt://192.168.1.2:1883"},
	{"run", "", "the daemon: sensors, rules, heartbeats, delivery",
		"Runs the sample loop (sensors and local rules, no network), the heartbeat loop (the checklist through the LLM, when there is something to think about), the transports and the control socket. SIGHUP reloads config.toml and the checklist; SIGINT and SIGTERM stop cleanly, publishing 'offline' first.",
		"vigil -c /etc/vigil/config.toml run"},
	{"check", "[--dry-run] [--json]", "one heartbeat now, in the foreground",
		"Samples every sensor and runs one heartbeat now, ignoring the gate, active hours and pause; it counts against the daily LLM budget, and an empty checklist skips it (empty_checklist) as it skips every heartbeat. With a daemon running, the daemon runs it. Exits 1 when the outcome is 'failed'. --dry-run delivers nothing and writes nothing.",
		"vigil check --dry-run"},
	{"sensors", "[--json] [--drivers]", "read every sensor once",
		"Reads every configured sensor and the board's health once and prints a table. A calibrated reading (a [[sensor]]'s calibrate) shows its driver's value too: a RAW column, \"raw\" in --json. A reading with a baseline shows what is usual for it now (from the running daemon, or the state file read-only): a BASELINE column, \"baselines\" in --json. --drivers lists the sensor drivers, their config keys and quantities, and needs no config file.",
		"vigil sensors --json -c ./config.toml"},
	{"scan", "[--bus NAME]", "probe an I²C bus and name what answers",
		"Probes addresses 0x08-0x77 of an I²C bus, like i2cdetect, and names the chips that may sit at each answering address. Without --bus it uses the board's default bus (without a config file, the detected board's), or, on a board with none (generic), the machine's only bus.",
		"vigil scan --bus 1"},
	{"status", "[--json]", "runs, pause, queues, rules, readings, settings, notes",
		"Shows the next heartbeat, the last runs, the pause, each transport's queue, what Telegram holds for its digest (quiet_hours, max_per_hour) and when that goes out, the budget, the problems firing (rules, the LLM's alert, system faults) and who acknowledged each (vigil ack), the checklist in force (the file's, or one set from afar), the model's notes (how many, and the newest one's age), the settings whose value does not come from the config file (the environment or 'vigil set': key, value, who set it and when), each rule's state (ok, pending, firing, unknown or disabled) with the values it last saw, and each reading's last value with what is usual for it now (the band of its hour's baseline, or when that is ready), a sparkline of the last hour, its min and max and the rules that watch it. Colour only on a terminal, never with NO_COLOR set. --json carries the same series, the settings, the checklist and the notes' text. Asks the running daemon, or reads the state file when none runs; it never creates one.",
		"vigil status --json"},
	{"history", "[SENSOR[.QUANTITY]] [--since 24h] [--csv|--json]", "export the sensor history",
		"Prints the sensor history ring (one sample a minute, 48 hours) of every reading, one sensor, or one reading, since --since ago (default 24h, at most 48h: what is kept), as a table, CSV (time,reading,value,unit, times in the device's time zone) or JSON (with each reading's usual band, one entry an hour). Asks the running daemon, or reads the state file read-only when none runs.",
		"vigil history air.temperature --since 6h --csv > temp.csv"},
	{"pause", "MINUTES", "pause heartbeats (rules keep running)",
		"Pauses the LLM heartbeats for MINUTES, 1 to 1440 (24 h, the same limit on every channel), persisted across restarts. Local rules keep running and alerting.",
		"vigil pause 30"},
	{"resume", "", "resume heartbeats",
		"Ends a pause at once.",
		"vigil resume"},
	{"test-alert", "[--severity S] [--transport NAME]", "queue a test alert, to see delivery work",
		"Queues a clearly marked test alert (source system, rule test: 'Test alert from vigil on DEVICE — if you can read this, delivery works') through the real outbox, so every configured transport delivers it like any other alert. It needs no LLM and no rule. With a daemon running, the daemon delivers it at once; with none, it waits in the state file and is delivered when 'vigil run' starts. --severity is info (the default), warning or critical; a transport whose min_severity is higher does not send it. --transport log, mqtt or telegram delivers it through that transport only: the others acknowledge it without sending.",
		"vigil test-alert --transport mqtt"},
	{"ack", "[ID|RULE]", "acknowledge a firing problem: no reminders until it resolves",
		"Acknowledges a problem that fires now: a rule by its name, the LLM's alert as llm, a system fault by its kind (llm_unreachable), or any of them by the id of an alert sent for it (vigil status lists the problems; --json and the Home Assistant problem attributes have their ids). Without an argument it acknowledges the one problem firing unacknowledged, and refuses to guess among several; a notice has nothing to acknowledge. An acknowledged problem is not re-notified (a rule's renotify, the LLM's alert sent again after alert_cooldown) until it resolves, which still sends one resolved message, carrying who acknowledged it and when (acked_by, acked_at). The ack is kept in the state file and shown in vigil status, on the status page, in the Home Assistant problem attributes, in vigil fleet, and in the problem's Telegram messages, which are edited to say who acknowledged it. A problem that resolves and fires again is a new alert, unacknowledged. Telegram's /ack and Acknowledge button, MQTT cmd/ack and the status page's button do the same, as [manage] remote allows (ack is in its default). With a daemon running, the daemon does it; with none, it is kept in the state file for the next 'vigil run'.",
		"vigil ack too_hot"},
	{"get", "[KEY] [--json]", "the settings you can change at run time, with their origin",
		"Prints each setting 'vigil set' may change (or only KEY) with its effective value and where it comes from: config.toml:LINE, env (VIGIL_<SECTION>_<KEY>), 'set TIME by SOURCE' (the run-time overlay in the state file) or default. Asks the running daemon, or reads the state file read-only when none runs; it never creates one.",
		"vigil get heartbeat.interval"},
	{"set", "KEY VALUE...", "change a setting at run time (kept across restarts)",
		"Sets KEY to VALUE (the remaining arguments joined by spaces) in the run-time overlay kept in the state file; config.toml is never written. Settable: heartbeat.enabled, heartbeat.interval, heartbeat.active_hours, heartbeat.max_quiet, heartbeat.alert_cooldown, heartbeat.max_llm_calls_per_day, llm.model, llm.scout_model and rule.<name>.enabled. The value goes through the config validator with its messages; a refused value exits 78 and nothing is stored. A running daemon applies it at once, logs it and sends it as an info notice (never a problem); with none running, the next 'vigil run' applies it.",
		"vigil set heartbeat.interval 10m"},
	{"unset", "KEY", "drop a run-time setting: back to config.toml's value",
		"Removes KEY from the run-time overlay, so its value comes from the environment, config.toml or the default again; a running daemon applies that at once.",
		"vigil unset heartbeat.interval"},
	{"checklist", "show|set FILE|-|reset", "show or replace the heartbeat checklist from afar",
		"show prints which checklist is in force (its path) and its text. set reads FILE, or stdin for -, checks it as heartbeat.checklist is checked (16 KiB at most; headings and comments only count as empty, and an empty checklist never calls the LLM) and writes it as HEARTBEAT.md in the state directory, where it overrides the config's checklist from the next heartbeat. reset removes it.",
		"vigil checklist set - < HEARTBEAT.md"},
	{"notes", "[clear]", "the model's notes to itself, or clear them",
		"Prints the notes the model kept across heartbeats (heartbeat.model_may with \"notes\"), oldest first, with their age; 'clear' deletes them. Reads the state file read-only when no daemon runs.",
		"vigil notes clear"},
	{"baseline reset", "[SENSOR]", "forget what is usual for a sensor's readings (after it was moved)",
		"Forgets the baselines of SENSOR's readings, or of every reading without SENSOR: what is usual for each at each hour of the day, which usual(), unusual(), heartbeat.gate = \"unusual\", the prompt and the bands of vigil status learn over the days. Use it after a sensor was moved or replaced; a reload that changes a sensor's driver, bus, address, path or serial does it for that sensor by itself. Learning starts again: the last 24 h's median for a day, each hour's own band from the second day it was seen. Sends a notice. With a daemon running, the daemon does it; with none, it is done in the state file.",
		"vigil baseline reset air"},
	{"rules", "[--json]", "the rules in force with their origin, and the rules the model proposed",
		"Lists the rules in force, each with its origin: config.toml:LINE, or for a rule the model proposed 'proposed by the model at TIME, approved by WHO at TIME' (a run-time rule, kept in the state file like a 'vigil set'); then the proposals waiting for a person (at most 16), each with its ID, the model's why and its backtest on the device's own history: how often it would have fired and for how long, its first and last firing, whether it fires on the readings that prompted it, and the word noisy when it would have fired more than [manage] proposal_max_per_day times a day; then the ones decided in the last 30 days. Asks the running daemon, or reads the state file read-only when none runs.",
		"vigil rules --json"},
	{"rule", "approve|reject ID|NAME | drop NAME | show NAME [--toml]", "approve or reject a rule the model proposed, drop one, or show it",
		"approve makes a proposal (by its ID, as in p7, or its name) a run-time rule: evaluated from the next sample with no network, kept across restarts, an alerting rule and never an action; a [[rule]] of the same name in config.toml wins over it later. reject refuses it, and the model may not propose the same rule for 30 days. drop removes a run-time rule. show prints a rule or proposal as vigil rules does, or with --toml as a [[rule]] table to paste into config.toml. Telegram's Approve and Reject buttons, MQTT cmd/rule and the status page's buttons do the same, as [manage] remote allows (rule is in its default). An unknown ID changes nothing. With a daemon running, the daemon does it; with none, it is done in the state file.",
		"vigil rule show door_warm --toml >> /etc/vigil/config.toml"},
	{"config check", "", "validate config and checklist, print the resolved config",
		"Validates config.toml, the environment's VIGIL_<SECTION>_<KEY> and the run-time overlay (vigil set) and the checklist in force exactly as 'vigil run' does, lists each value that does not come from the file with its origin, warns about setups that run but are unsafe (a secret in clear text to another machine, MQTT commands without TLS or a username, a Telegram group that may command without allowed_users), prints the resolved config with secrets redacted, and exits 78 with file:line on the first problem.",
		"vigil config check -c ./config.toml"},
	{"version", "[--boards]", "version, commit, Go version, GOARCH/GOARM",
		"Prints the version, commit, build date, Go version and architecture. --boards lists the board profiles. Needs no config file.",
		"vigil version --boards"},
	{"fleet", "--broker URL [--once] [--json] [--versions] [--tag NAME]", "every device on a broker: state, heartbeat, tags, version, problems",
		"Subscribes to the topics the daemons publish on a broker and calls the roll (P/fleet/rollcall: every device answers with its status, info, last heartbeat and problems, once per 10 s, at the end of that window, so brokers that keep no retained messages for wildcards work too, and a second viewer gets its answers too), then shows every device: online, offline, stale (silent for 3x its heartbeat interval while the broker still says online) or missing (seen here before, on this broker and prefix, but neither answering nor with a status now: a roster in the user's cache directory remembers the devices seen for 30 days), since when, the last heartbeat and its age, its tags ([device] tags), the problems firing; --json adds the last alert, board, version, interval and config digest. A summary line counts the devices online, offline, stale, firing and missing, and a second names the versions when there are several (3 versions: 41 on v1.4.2, 2 on v1.4.1, 1 on v1.3.0); --versions groups the devices by version. The table lists firing devices first, then offline, stale and online ones, and fits 80 columns; --firing, --offline and --stale show only those (any of them), --tag only the devices carrying a tag. Live on a terminal, with a roll call every --rollcall (5m); --once prints one snapshot once the retained messages, the answers and every device on the roster are in (at most 11 s), and exits 1 with a message when no device came. Connects as the daemon does (TLS, ws://, wss://, the nodes of a cluster as a list); needs no config file.",
		"vigil fleet --broker tcp://broker.lan:1883 --once --firing"},
	{"fleet do", "VERB [ARGS] --select SELECTOR --broker URL [--yes] [--json]", "one command to many devices, device by device",
		"Sends one command to every device the selector picks and reports, device by device, what became of it. VERB is check, pause MINUTES, resume, set KEY VALUE, unset KEY, checklist set FILE, ack [TARGET] (without one: every problem firing unacknowledged, each by its id) or rule approve|reject|drop NAME. --select takes id=GLOB, tag=NAME, firing, offline or all, repeated or separated by commas: all must hold. The roll call finds the devices (on RabbitMQ too); an offline or missing device is listed and never sent to. Without --yes it is a dry run: it lists the devices and what each would get, and sends nothing. With --yes each command carries a fresh correlation id, at most --rate (50) a second, and each device gets one line: ok, refused: REASON (its [manage] remote lacks the verb, its rate limit), error: ..., or no answer (within --timeout, 15s; an offline device is never sent to); then the counts. A device obeys only what its commands = true and [manage] remote allow. A checklist larger than a device takes (16 KiB) is refused before anything is sent. Exits 0 only when every selected device said ok; 1 otherwise and when the selector matches no device; 2 for a bad verb or selector.",
		"vigil fleet do set heartbeat.interval 10m --select tag=north --broker tcp://broker.lan:1883 --yes"},
	{"help", "[COMMAND]", "this text, or one command's help",
		"Prints the usage, or with COMMAND that command's usage, flags and an example.",
		"vigil help check"},
}

// lookupDoc finds a command's doc by name.
func lookupDoc(name string) (cmdDoc, bool) {
	for _, d := range commandDocs {
		if d.name == name {
			return d, true
		}
	}
	return cmdDoc{}, false
}

const globalFlagsHelp = `global flags (anywhere on the line):
  -c, --config PATH  config file (default $VIGIL_CONFIG or
                     /etc/vigil/config.toml)
  -v, --verbose      debug logging: each sample's readings and rule evaluations,
                     each delivery attempt, each LLM request's size and latency
  -h, --help         help
`

// writeUsage prints the global usage with the command table aligned.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "vigil — an on-device watch agent for single-board computers\n\nusage: vigil [-c CONFIG] COMMAND [flags]\n\ncommands:\n")
	rows := make([][2]string, len(commandDocs))
	for i, d := range commandDocs {
		rows[i] = [2]string{strings.TrimSpace(d.name + " " + d.args), d.summary}
	}
	writeTable(w, rows, 30)
	fmt.Fprint(w, "\n"+globalFlagsHelp+"\nexit codes: 0 ok, 1 runtime failure, 2 usage, 78 config error\nrun 'vigil help COMMAND' for a command's flags and an example\n"+
		"docs: 'man vigil', /usr/share/doc/vigil/ (installed with the .deb),\n      or docs/ at https://github.com/vigil-iot/vigil\n")
}

// writeTable prints rows of a name and its text, indented by two: the texts
// start in column col and are folded to fit 80 columns; a name too long for
// its column gets a line of its own.
func writeTable(w io.Writer, rows [][2]string, col int) {
	const width = 80
	pad := strings.Repeat(" ", col)
	for _, r := range rows {
		lines := strings.Split(termtext.Wrap(r[1], width-col, ""), "\n")
		if n := len([]rune(r[0])); n <= col-4 {
			fmt.Fprintf(w, "  %s%s%s\n", r[0], strings.Repeat(" ", col-2-n), lines[0])
			lines = lines[1:]
		} else {
			fmt.Fprintf(w, "  %s\n", r[0])
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%s%s\n", pad, l)
		}
	}
}

// writeCommandHelp prints one command's usage, description, flags (from
// fs, without the global ones) and example.
func writeCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	d, ok := lookupDoc(name)
	if !ok {
		d = cmdDoc{name: name}
	}
	fmt.Fprintf(w, "usage: vigil %s\n\n", strings.TrimSpace(d.name+" "+d.args))
	if d.detail != "" {
		fmt.Fprintf(w, "%s\n\n", termtext.Wrap(d.detail, 76, ""))
	}
	if fl := commandFlags(fs); len(fl) > 0 {
		fmt.Fprintln(w, "flags:")
		col := 0
		for _, f := range fl {
			col = max(col, len([]rune(f[0]))+4)
		}
		writeTable(w, fl, min(col, 30))
		fmt.Fprintln(w)
	}
	if d.example != "" {
		fmt.Fprintf(w, "example:\n  %s\n\n", d.example)
	}
	fmt.Fprint(w, globalFlagsHelp)
}

// commandFlags lists fs's own flags as {"--name VALUE", "usage"}, the
// global ones left out.
func commandFlags(fs *flag.FlagSet) [][2]string {
	if fs == nil {
		return nil
	}
	var out [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "c", "config", "v", "verbose":
			return
		}
		name, usage := flag.UnquoteUsage(f)
		flagText := "--" + f.Name
		if len(f.Name) == 1 {
			flagText = "-" + f.Name
		}
		if name != "" {
			flagText += " " + strings.ToUpper(name)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += " (default " + f.DefValue + ")"
		}
		out = append(out, [2]string{flagText, usage})
	})
	return out
}

// writeMan writes the vigil(1) man page (roff) from the same docs and
// flag sets as the help: commandHelp gives each command's flags.
func writeMan(w io.Writer, commandFlagSet func(name string) *flag.FlagSet) {
	esc := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\e`)
		s = strings.ReplaceAll(s, "-", `\-`)
		if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
			s = `\&` + s
		}
		return s
	}
	fmt.Fprint(w, ".TH VIGIL 1 \"\" \"vigil\" \"User Commands\"\n")
	fmt.Fprint(w, ".SH NAME\nvigil \\- an on\\-device watch agent for single\\-board computers\n")
	fmt.Fprint(w, ".SH SYNOPSIS\n.B vigil\n[\\fB\\-c\\fR \\fICONFIG\\fR] \\fICOMMAND\\fR [\\fIflags\\fR]\n")
	fmt.Fprint(w, ".SH DESCRIPTION\nvigil reads I\\(S2C/SPI sensors, evaluates local rules every few seconds without any network, "+
		"asks an LLM a heartbeat checklist (HEARTBEAT.md) when there is something to think about, keeps its state in a bbolt file "+
		"that survives power loss, and sends alerts over MQTT and Telegram.\n")
	fmt.Fprint(w, ".SH COMMANDS\n")
	for _, d := range commandDocs {
		fmt.Fprintf(w, ".TP\n.B vigil %s\n", esc(strings.TrimSpace(d.name+" "+d.args)))
		fmt.Fprintf(w, "%s\n", esc(d.detail))
		for _, f := range commandFlags(commandFlagSet(d.name)) {
			fmt.Fprintf(w, ".RS\n.TP\n.B %s\n%s\n.RE\n", esc(f[0]), esc(f[1]))
		}
		if d.example != "" {
			fmt.Fprintf(w, ".RS\nExample:\n.B %s\n.RE\n", esc(d.example))
		}
	}
	fmt.Fprint(w, ".SH OPTIONS\n.TP\n.B \\-c, \\-\\-config \\fIPATH\\fR\nconfig file (default \\fB$VIGIL_CONFIG\\fR or \\fI/etc/vigil/config.toml\\fR)\n"+
		".TP\n.B \\-v, \\-\\-verbose\ndebug logging\n.TP\n.B \\-h, \\-\\-help\nhelp; with a command, that command's help\n")
	fmt.Fprint(w, ".SH REMOTE COMMANDS\n"+
		"MQTT (\\fIPREFIX\\fR/\\fIID\\fR/cmd/\\fIVERB\\fR, answered on cmd/result), Telegram (/status, /set ...) and the status page "+
		"may run only the verbs \\fB[manage] remote\\fR lists in config.toml: "+esc(strings.Join(config.RemoteVerbs, ", "))+". "+
		"The default is [\\(dqstatus\\(dq, \\(dqpause\\(dq, \\(dqresume\\(dq, \\(dqcheck\\(dq, \\(dqack\\(dq, \\(dqrule\\(dq]: a person woken at night acknowledges, or approves a rule the model proposed, from Telegram. "+
		"Any other is answered \\(lqnot allowed: add \\(dqVERB\\(dq to [manage] remote\\(rq and logged at WARN with its source. "+
		"On a remote channel, status shows the run\\-time settings and the model's notes only when get and notes are listed; Telegram's /toggle needs set. "+
		"The command line and the control socket (root or the daemon's user on the board) may use every verb.\n")
	fmt.Fprint(w, ".SH EXIT STATUS\n0 ok, 1 runtime failure, 2 usage, 78 config error (EX_CONFIG).\n")
	fmt.Fprint(w, ".SH ENVIRONMENT\n"+
		".TP\n.B VIGIL_\\fISECTION\\fB_\\fIKEY\\fR\nsets one single\\-value key of [device], [heartbeat], [llm], [mqtt], [telegram] or [http], "+
		"as in VIGIL_HEARTBEAT_INTERVAL=10m, validated like the file's (an error names the variable; exit 78): it wins over config.toml, and a value from \\fBvigil set\\fR wins over it. "+
		"Lists and [[sensor]]/[[rule]] tables are file\\-only. "+
		"\\fBvigil config check\\fR and \\fBvigil get\\fR show where each value comes from. An unknown or misspelt variable of that shape (or a VIGIL_SENSOR_* or VIGIL_RULE_* one) is a config error that names the nearest valid variable. VIGIL_CONFIG and the variables the *_env keys name are not keys.\n"+
		".TP\n.B VIGIL_CONFIG\nthe config file when \\-c is not given (default /etc/vigil/config.toml)\n"+
		".TP\n.B OPENAI_API_KEY, ANTHROPIC_API_KEY\nthe LLM's key (the second for provider anthropic), unless llm.api_key_env names another variable; "+
		"mqtt.password_env and telegram.token_env name the variables holding the MQTT password and the bot token\n"+
		".TP\n.B CREDENTIALS_DIRECTORY\nset by systemd (LoadCredential=): relative *_file paths (api_key_file, password_file, token_file) are read from it\n"+
		".TP\n.B HTTPS_PROXY, HTTP_PROXY, NO_PROXY\n(either case) the proxy for the LLM's and Telegram's requests and for ws:// and wss:// brokers: http://, https:// or socks5:// (socks5h:// resolves names at the proxy); "+
		"loopback never goes through a proxy; plain and TLS MQTT use only a socks5:// ALL_PROXY\n"+
		".TP\n.B NO_COLOR\nwhen set, \\fBvigil status\\fR prints no colour, even on a terminal\n"+
		".TP\n.B RUNTIME_DIRECTORY\nset by systemd (RuntimeDirectory=): the control socket vigil.sock goes there (/run/vigil) instead of the state directory\n"+
		".TP\n.B NOTIFY_SOCKET, WATCHDOG_USEC\nset by systemd (Type=notify, WatchdogSec=): vigil reports READY, STOPPING and its status, and pings the watchdog from the sample loop; without them it sends nothing\n"+
		".TP\n.B JOURNAL_STREAM\nset by systemd when stderr goes to the journal: each log line then carries its priority, so journalctl \\-p warning shows vigil's warnings\n"+
		".TP\n.B GOMAXPROCS, GOGC, GOMEMLIMIT\nthe Go runtime's; vigil runs its Go code on one processor unless GOMAXPROCS is set\n")
	fmt.Fprint(w, ".SH FILES\n.TP\n.I /etc/vigil/config.toml\nthe configuration\n.TP\n.I /etc/vigil/HEARTBEAT.md\nthe heartbeat checklist\n"+
		".TP\n.I /var/lib/vigil/vigil.db\nthe state file (bbolt; under the unit's DynamicUser= it lives in /var/lib/private/vigil). "+
		"A damaged one is moved aside as vigil.db.corrupt\\-\\fITIME\\fR (the newest three are kept)\n"+
		".TP\n.I /var/lib/vigil/HEARTBEAT.md\nthe checklist set from afar (\\fBvigil checklist set\\fR, MQTT cmd/checklist, Telegram /checklist set), in the state directory: "+
		"it overrides heartbeat.checklist until \\fBvigil checklist reset\\fR\n"+
		".TP\n.I /run/vigil/vigil.sock\nthe control socket the commands reach the running daemon through: in $RUNTIME_DIRECTORY under systemd, else vigil.sock in the state directory\n")
	fmt.Fprint(w, ".SH SEE ALSO\n/usr/share/doc/vigil/ (README.md, install.md, configuration.md, operations.md, llm.md, alerts.md, hardware.md, fleet.md)\n")
}
