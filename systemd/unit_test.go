// Package systemd holds vigil's systemd unit (vigil.service), its
// sysusers.d and udev snippets (vigil.sysusers, 60-vigil.rules) and its
// modules-load.d file (vigil.modules). The .deb installs them (see
// packaging/nfpm.yaml); there is no Go code here, only tests of the files:
// the unit's contract with the daemon, and systemd-analyze verify and
// security where systemd-analyze is installed (make test-systemd installs it).
package systemd

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unit is a parsed unit file: section -> key -> values in order.
type unit map[string]map[string][]string

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasSuffix(line, `\`):
			t.Fatalf("%s:%d: line continuations are not supported by this test", path, n)
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a key=value line in a section: %q", path, n, line)
			}
			k = strings.TrimSpace(k)
			u[section][k] = append(u[section][k], strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// last returns the effective value of a single-valued key ("" if unset).
func (u unit) last(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// words returns every space-separated word of every value of key.
func (u unit) words(section, key string) []string {
	var w []string
	for _, v := range u[section][key] {
		w = append(w, strings.Fields(v)...)
	}
	return w
}

func duration(t *testing.T, key, v string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%s: want a Go-style duration such as 120s: %v", key, v, err)
	}
	return d
}

// defaultSampleInterval is heartbeat.sample_interval's default (README,
// Configuration).
const defaultSampleInterval = 30 * time.Second

func TestUnitContract(t *testing.T) {
	u := parseUnit(t, "vigil.service")
	const svc = "Service"

	equal := []struct{ section, key, want, why string }{
		{svc, "Type", "notify", "vigil sends READY=1 once sensors and transports are up"},
		{svc, "ExecStart", "/usr/bin/vigil run", "the .deb installs the binary there; the config defaults to /etc/vigil/config.toml"},
		{svc, "ExecReload", "/bin/kill -HUP $MAINPID", "SIGHUP re-reads the config: systemctl reload vigil"},
		{svc, "RuntimeDirectory", "vigil", "the control socket goes to $RUNTIME_DIRECTORY (/run/vigil)"},
		{svc, "Restart", "on-failure", ""},
		{svc, "RestartPreventExitStatus", "78", "EX_CONFIG: a broken config does not heal by restarting"},
		{svc, "StateDirectory", "vigil", "state_dir defaults to /var/lib/vigil"},
		{svc, "ConfigurationDirectory", "vigil", ""},
		{svc, "DynamicUser", "yes", ""},
		{svc, "DevicePolicy", "closed", ""},
		{svc, "ProtectSystem", "strict", ""},
		{svc, "NoNewPrivileges", "yes", ""},
		{svc, "CapabilityBoundingSet", "", "no capabilities at all"},
		{"Install", "WantedBy", "multi-user.target", ""},
	}
	for _, c := range equal {
		if _, ok := u[c.section][c.key]; !ok {
			t.Errorf("[%s] %s is not set (want %q) %s", c.section, c.key, c.want, c.why)
			continue
		}
		if got := u.last(c.section, c.key); got != c.want {
			t.Errorf("[%s] %s=%s, want %q %s", c.section, c.key, got, c.want, c.why)
		}
	}

	// The sample loop pings the watchdog; WatchdogSec must leave room for
	// at least two sample intervals at the default.
	if wd := duration(t, "WatchdogSec", u.last(svc, "WatchdogSec")); wd < 2*defaultSampleInterval {
		t.Errorf("WatchdogSec=%v, want at least twice the default sample_interval (%v)", wd, defaultSampleInterval)
	}
	// The daemon's shutdown work is bounded to 5s.
	if ts := duration(t, "TimeoutStopSec", u.last(svc, "TimeoutStopSec")); ts < 10*time.Second {
		t.Errorf("TimeoutStopSec=%v, want at least 10s", ts)
	}

	// A broker on the same board starts before vigil and stops after it,
	// so the retained `offline` reaches it; but vigil never pulls it in.
	if !slices.Contains(u.words("Unit", "After"), "mosquitto.service") {
		t.Errorf("After=%q lacks mosquitto.service: at shutdown a local broker stops first and `offline` is never published", u["Unit"]["After"])
	}
	for _, dep := range []string{"Wants", "Requires", "BindsTo", "Requisite"} {
		if w := u.words("Unit", dep); slices.Contains(w, "mosquitto.service") || slices.Contains(w, "network-online.target") {
			t.Errorf("%s=%q: local rules must run without a broker or a network", dep, w)
		}
	}

	// Hardware access: I²C, SPI and GPIO character devices stay reachable.
	if v := u.last(svc, "PrivateDevices"); v != "" && v != "no" {
		t.Errorf("PrivateDevices=%s hides /dev/i2c-* and /dev/spidev*", v)
	}
	for _, want := range []string{"char-i2c rw", "char-spi rw", "char-gpiochip rw"} {
		if !slices.Contains(u[svc]["DeviceAllow"], want) {
			t.Errorf("DeviceAllow=%s missing (have %q)", want, u[svc]["DeviceAllow"])
		}
	}

	// Board health reads /proc/meminfo, /proc/loadavg and /proc/device-tree,
	// and asks adjtimex(2) whether the clock is synchronized.
	if v := u.last(svc, "ProcSubset"); v != "" && v != "all" {
		t.Errorf("ProcSubset=%s hides /proc/meminfo and /proc/loadavg from board health", v)
	}
	if v := u.last(svc, "ProtectClock"); v == "yes" || v == "true" {
		t.Errorf("ProtectClock=yes forbids adjtimex(2), which board health uses to see whether the clock is synced")
	}
	// Whether the system call filter admits adjtimex(2) is TestSyscallFilter's.
	for _, af := range []string{"AF_UNIX", "AF_INET", "AF_INET6"} {
		if !slices.Contains(u.words(svc, "RestrictAddressFamilies"), af) {
			t.Errorf("RestrictAddressFamilies lacks %s (control socket and sd_notify are AF_UNIX; MQTT, Telegram, LLM are IP)", af)
		}
	}

	// Secrets: credentials come from the credential store by name, so a
	// missing one is skipped instead of failing the unit (an absolute path
	// that does not exist fails it with 243/CREDENTIALS).
	ids := map[string]bool{}
	for _, lc := range u[svc]["LoadCredential"] {
		id, src, _ := strings.Cut(lc, ":")
		ids[id] = true
		if filepath.IsAbs(src) {
			t.Errorf("LoadCredential=%s: an absolute source fails the unit when the file is missing; name a credential-store entry", lc)
		}
	}
	for _, id := range []string{"llm_api_key", "mqtt_password", "telegram_token"} {
		if !ids[id] {
			t.Errorf("no LoadCredential for %s", id)
		}
	}

	// Every supplementary group exists on every board: sysusers creates it
	// and the udev rule hands the device nodes to it.
	groups := u.words(svc, "SupplementaryGroups")
	if len(groups) == 0 {
		t.Fatal("SupplementaryGroups is empty: the dynamic user cannot open /dev/i2c-*")
	}
	sysusers, err := os.ReadFile("vigil.sysusers")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile("60-vigil.rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if !regexp.MustCompile(`(?m)^g\s+` + regexp.QuoteMeta(g) + `\s`).Match(sysusers) {
			t.Errorf("group %s is not created by vigil.sysusers: a board without it fails the unit with 216/GROUP", g)
		}
		if !bytes.Contains(rules, []byte(`GROUP="`+g+`"`)) {
			t.Errorf("group %s owns no device in 60-vigil.rules", g)
		}
	}
}

// The memory measured on the sim board (bin/vigil run, rules-only, a local
// mosquitto, homeassistant = true; /proc/PID/status), which the unit's
// memory bounds are sized from (see the comment at MemoryHigh= in
// vigil.service and docs/install.md).
const (
	// Normal load: VmHWM after 2 minutes (rule firing and resolving,
	// sensors published). BENCHMARKS.md has 12.4 MiB after a long run
	// with heartbeats.
	measuredNormal = 12 << 20
	// Three 10 MB publishes to homeassistant/status: VmHWM 50.9 MiB.
	measured10MB = 51 << 20
	// Three 100 MB publishes: VmHWM 412 MiB (the issue saw 405 MB).
	measured100MB = 412 << 20
)

// bytesValue parses a systemd size: a number with an optional K, M or G
// suffix (base 1024), as MemoryMax= takes it.
func bytesValue(t *testing.T, key, v string) int64 {
	t.Helper()
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "K"):
		mult = 1 << 10
	case strings.HasSuffix(v, "M"):
		mult = 1 << 20
	case strings.HasSuffix(v, "G"):
		mult = 1 << 30
	}
	n, err := strconv.ParseInt(strings.TrimRight(v, "KMG"), 10, 64)
	if err != nil {
		t.Fatalf("%s=%s: want a size such as 64M: %v", key, v, err)
	}
	return n * mult
}

// TestMemoryBound: the unit bounds vigil's memory, so a huge MQTT message
// (paho reads every incoming packet whole, whatever its size) cannot take a
// Pi's memory. The bounds leave room for what was measured under normal
// load and a few 10 MB messages, and stop what 100 MB messages take.
func TestMemoryBound(t *testing.T) {
	u := parseUnit(t, "vigil.service")
	hv, mv := u.last("Service", "MemoryHigh"), u.last("Service", "MemoryMax")
	if hv == "" || mv == "" {
		t.Fatalf("MemoryHigh=%q MemoryMax=%q: the unit does not bound vigil's memory (three 100 MB MQTT messages took it to %d MiB)", hv, mv, measured100MB>>20)
	}
	high, max := bytesValue(t, "MemoryHigh", hv), bytesValue(t, "MemoryMax", mv)
	if high >= max {
		t.Errorf("MemoryHigh=%s is not below MemoryMax=%s: the kernel never reclaims before it kills", hv, mv)
	}
	if high < 4*measuredNormal || high < measured10MB {
		t.Errorf("MemoryHigh=%s throttles a healthy daemon: want at least 4 × the %d MiB measured under normal load and the %d MiB of three 10 MB messages", hv, measuredNormal>>20, measured10MB>>20)
	}
	// A Pi Zero has 512 MB: vigil may take at most a quarter of it, and
	// far less than what 100 MB messages took.
	if max > 128<<20 || max >= measured100MB/2 {
		t.Errorf("MemoryMax=%s: want at most 128M (a quarter of a Pi Zero) and well under the %d MiB three 100 MB messages took", mv, measured100MB>>20)
	}
	// The kill is a failure, and a failure restarts vigil.
	if r := u.last("Service", "Restart"); r != "on-failure" && r != "always" {
		t.Errorf("Restart=%s: a daemon killed at MemoryMax would stay down", r)
	}
	if v := u.last("Service", "OOMPolicy"); v != "" && v != "stop" {
		t.Errorf("OOMPolicy=%s: the service must stop (and restart) when the kernel kills it at MemoryMax", v)
	}
}

// verifiable writes the unit to a temporary directory with ExecStart
// pointing at a binary that exists here (verify checks that it does).
func verifiable(t *testing.T, src []byte) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Replace(src, []byte("ExecStart=/usr/bin/vigil "), []byte("ExecStart="+exe+" "), 1)
	if bytes.Equal(out, src) {
		t.Fatal("no ExecStart=/usr/bin/vigil line to substitute")
	}
	path := filepath.Join(t.TempDir(), "vigil.service")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func analyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (make test-systemd installs it)")
	}
	return p
}

// verify runs systemd-analyze verify and returns what it said about the
// unit file (it exits 0 on unknown keys and bad values, so the output is
// what counts).
func verify(t *testing.T, sa, path string) []string {
	t.Helper()
	out, err := exec.Command(sa, "verify", "--man=no", path).CombinedOutput()
	var complaints []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, filepath.Base(path)) {
			complaints = append(complaints, l)
		}
	}
	if err != nil && len(complaints) == 0 {
		complaints = append(complaints, "systemd-analyze verify: "+err.Error()+": "+string(out))
	}
	return complaints
}

func TestVerify(t *testing.T) {
	sa := analyze(t)
	src, err := os.ReadFile("vigil.service")
	if err != nil {
		t.Fatal(err)
	}
	if c := verify(t, sa, verifiable(t, src)); len(c) > 0 {
		t.Errorf("systemd-analyze verify:\n%s", strings.Join(c, "\n"))
	}

	// Control: verify does notice a broken unit.
	bad := append(bytes.Clone(src), "\n[Service]\nPrivateTmpp=yes\nWatchdogSec=soon\n"...)
	if c := verify(t, sa, verifiable(t, bad)); len(c) < 2 {
		t.Errorf("verify missed a misspelt key and a bad value: %q", c)
	}
}

// maxExposure is the highest systemd-analyze security exposure accepted.
// "OK" spans 1.0-4.9; vigil.service scores 1.9 (what it cannot have:
// PrivateDevices, PrivateNetwork, PrivateUsers with device groups, an IP
// allow list for a configurable LLM endpoint, a filter without adjtimex).
// Fail well before "MEDIUM".
const maxExposure = 2.0

var exposureRE = regexp.MustCompile(`Overall exposure level for \S+: (\d+\.\d+) (\S+)`)

func security(t *testing.T, sa, path string) (float64, string) {
	t.Helper()
	out, err := exec.Command(sa, "security", "--offline=true", "--no-pager", path).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("unrecognized option")) {
			t.Skipf("systemd-analyze security --offline needs systemd 250 or later: %s", out)
		}
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := exposureRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in:\n%s", out)
	}
	x, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return x, string(m[2])
}

func TestSecurity(t *testing.T) {
	sa := analyze(t)
	src, err := os.ReadFile("vigil.service")
	if err != nil {
		t.Fatal(err)
	}
	x, level := security(t, sa, verifiable(t, src))
	t.Logf("systemd-analyze security: exposure %.1f %s", x, level)
	if x > maxExposure {
		t.Errorf("exposure %.1f %s, want at most %.1f", x, level, maxExposure)
	}

	// Control: the same unit without its hardening scores far worse.
	bare := []byte("[Service]\nType=notify\nExecStart=/usr/bin/vigil run\n")
	if bx, blevel := security(t, sa, verifiable(t, bare)); bx <= maxExposure {
		t.Errorf("an unhardened unit scores %.1f %s: the check cannot fail", bx, blevel)
	}
}

// TestSysusers creates the groups in a scratch root with the real
// systemd-sysusers and checks that the unit's SupplementaryGroups all exist
// afterwards, also where some of them existed before (Raspberry Pi OS).
func TestSysusers(t *testing.T) {
	su, err := exec.LookPath("systemd-sysusers")
	if err != nil {
		t.Skip("systemd-sysusers not installed")
	}
	conf, err := os.ReadFile("vigil.sysusers")
	if err != nil {
		t.Fatal(err)
	}
	groups := parseUnit(t, "vigil.service").words("Service", "SupplementaryGroups")
	for _, existing := range []string{"", "i2c:x:998:pi\n"} {
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if existing != "" {
			if err := os.WriteFile(filepath.Join(root, "etc/group"), []byte(existing), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(su, "--root="+root, "-")
		cmd.Stdin = bytes.NewReader(conf)
		if out, err := cmd.CombinedOutput(); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("systemd-sysusers --root as non-root: %v: %s", err, out)
			}
			t.Fatalf("systemd-sysusers: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(root, "etc/group"))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(g) + `:`).Match(b) {
				t.Errorf("with /etc/group %q: no group %s after systemd-sysusers:\n%s", existing, g, b)
			}
		}
		if existing != "" && !bytes.Contains(b, []byte(existing)) {
			t.Errorf("systemd-sysusers changed the existing group %q:\n%s", existing, b)
		}
	}
}

// syscallGroups reads every @group systemd knows, as systemd-analyze
// syscall-filter lists them (members may name other groups).
func syscallGroups(t *testing.T, sa string) map[string][]string {
	t.Helper()
	out, err := exec.Command(sa, "syscall-filter", "--no-pager").Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter: %v", err)
	}
	groups := map[string][]string{}
	cur := ""
	for _, l := range strings.Split(string(out), "\n") {
		switch f := strings.TrimSpace(l); {
		case f == "":
			cur = ""
		case strings.HasPrefix(l, "@"):
			cur = f
			groups[cur] = nil
		case cur != "" && !strings.HasPrefix(f, "#"):
			groups[cur] = append(groups[cur], f)
		}
	}
	if len(groups["@clock"]) == 0 || len(groups["@system-service"]) == 0 {
		t.Fatalf("systemd-analyze syscall-filter listed no @clock or @system-service:\n%s", out)
	}
	return groups
}

// effectiveFilter applies SystemCallFilter= values in order, as systemd
// does: the first one decides between an allow list and a deny list (~),
// later ones of the same kind add to it and of the other kind take away, an
// empty one resets. It returns whether the list allows (true) and its calls.
func effectiveFilter(groups map[string][]string, values []string) (allowList bool, calls map[string]bool) {
	var expand func(name string, f func(string))
	expand = func(name string, f func(string)) {
		if m, ok := groups[name]; ok {
			for _, c := range m {
				expand(c, f)
			}
			return
		}
		f(name)
	}
	calls = map[string]bool{}
	started := false
	for _, v := range values {
		if v == "" {
			calls, started = map[string]bool{}, false
			continue
		}
		deny := strings.HasPrefix(v, "~")
		if !started {
			allowList, started = !deny, true
		}
		add := deny != allowList
		for _, name := range strings.Fields(strings.TrimPrefix(v, "~")) {
			name, _, _ = strings.Cut(name, ":") // an errno suffix
			expand(name, func(c string) {
				if add {
					calls[c] = true
				} else {
					delete(calls, c)
				}
			})
		}
	}
	return allowList, calls
}

func allows(allowList bool, calls map[string]bool, call string) bool {
	return calls[call] == allowList
}

// TestSyscallFilter checks the system call filter systemd computes from the
// unit, not the text of its lines: twice, once by expanding systemd's own
// groups in the order systemd applies the lines, once by asking
// systemd-analyze security, which parses the unit as PID 1 would.
func TestSyscallFilter(t *testing.T) {
	sa := analyze(t)
	groups := syscallGroups(t, sa)
	values := parseUnit(t, "vigil.service")["Service"]["SystemCallFilter"]
	allowList, calls := effectiveFilter(groups, values)
	if !allowList {
		t.Fatalf("SystemCallFilter=%q is a deny list; want an allow list", values)
	}
	for _, c := range []string{
		"adjtimex",                                  // board.clock_synced (read-only: no CAP_SYS_TIME)
		"read", "write", "openat", "ioctl", "futex", // I²C through /dev/i2c-*, Go's runtime
		"clone", "epoll_pwait", "socket", "connect", "bind", "fdatasync", "flock",
	} {
		if !allows(allowList, calls, c) {
			t.Errorf("the filter systemd computes from SystemCallFilter=%q denies %s", values, c)
		}
	}
	for _, c := range []string{"clock_settime", "settimeofday", "clock_adjtime", "reboot", "init_module", "setuid", "mount", "setrlimit", "kexec_load"} {
		if allows(allowList, calls, c) {
			t.Errorf("the filter systemd computes from SystemCallFilter=%q allows %s", values, c)
		}
	}

	// Control: the filter as it was before the fix loses adjtimex to
	// ~@privileged (which holds @clock), though its first line names it.
	if al, c := effectiveFilter(groups, []string{"@system-service adjtimex", "~@privileged @resources"}); allows(al, c, "adjtimex") {
		t.Error("control: the old filter admits adjtimex here, so this check cannot fail")
	}

	// systemd's own reading of the unit: its @clock line says which call
	// of the group the filter lets through.
	src, err := os.ReadFile("vigil.service")
	if err != nil {
		t.Fatal(err)
	}
	clockLine := func(unit []byte) string {
		out, err := exec.Command(sa, "security", "--offline=true", "--no-pager", verifiable(t, unit)).CombinedOutput()
		if err != nil {
			t.Skipf("systemd-analyze security --offline: %v: %s", err, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "SystemCallFilter=~@clock") {
				return l
			}
		}
		t.Fatalf("no SystemCallFilter=~@clock line in:\n%s", out)
		return ""
	}
	if l := clockLine(src); !strings.Contains(l, "adjtimex is allowed") {
		t.Errorf("systemd-analyze security: the unit's filter does not admit adjtimex:\n%s", l)
	}
	old := regexp.MustCompile(`(?m)^SystemCallFilter=.*\n`).ReplaceAll(src, nil)
	old = append(old, "\n[Service]\nSystemCallFilter=@system-service adjtimex\nSystemCallFilter=~@privileged @resources\n"...)
	if l := clockLine(old); strings.Contains(l, "adjtimex is allowed") {
		t.Errorf("control: systemd-analyze security says the old filter admits adjtimex:\n%s", l)
	}
}
