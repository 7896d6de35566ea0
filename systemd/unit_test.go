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

// defaultSampleInterval is heartbeat.sample_interval's default (SPEC §3).
const defaultSampleInterval = 30 * time.Second

func TestUnitContract(t *testing.T) {
	u := parseUnit(t, "vigil.service")
	const svc = "Service"

	equal := []struct{ section, key, want, why string }{
		{svc, "Type", "notify", "vigil sends READY=1 once sensors and transports are up"},
		{svc, "ExecStart", "/usr/bin/vigil run", "the .deb installs the binary there; the config defaults to /etc/vigil/config.toml"},
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
	allow := u[svc]["SystemCallFilter"]
	if len(allow) == 0 || !slices.Contains(strings.Fields(allow[0]), "@system-service") || !slices.Contains(strings.Fields(allow[0]), "adjtimex") {
		t.Errorf("SystemCallFilter allow list %q: want @system-service and adjtimex", allow)
	}
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
// "OK" spans 1.0-4.9; vigil.service scores 1.6 (what it cannot have:
// PrivateDevices, PrivateNetwork, PrivateUsers with device groups, an IP
// allow list for a configurable LLM endpoint). Fail well before "MEDIUM".
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
