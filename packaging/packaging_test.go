// Package packaging holds what the .deb ships besides the binary and the
// systemd files: the production config.toml and HEARTBEAT.md (conffiles in
// /etc/vigil), the maintainer scripts, the copyright file and the nfpm
// recipe, plus the release smoke tests (test-dist.sh, test-deb.sh) that
// mk/dist.mk runs. There is no Go code here, only tests of the files.
package packaging

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/config"
)

func parse(t *testing.T, name string, src []byte) *config.Config {
	t.Helper()
	c, err := config.Parse(bytes.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s does not parse:\n%v", name, err)
	}
	return c
}

// unitValue returns the last value of key in ../systemd/vigil.service.
func unitValue(t *testing.T, key string) []string {
	t.Helper()
	b, err := os.ReadFile("../systemd/vigil.service")
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

// TestConfig checks the shipped /etc/vigil/config.toml: it validates, uses
// the default paths the unit provides, detects the board and configures no
// simulated sensor, and runs rules-only until a key is given.
func TestConfig(t *testing.T) {
	src, err := os.ReadFile("config.toml")
	if err != nil {
		t.Fatal(err)
	}
	c := parse(t, "config.toml", src)
	if c.Device.Board != "auto" {
		t.Errorf("device.board = %q, want auto", c.Device.Board)
	}
	if c.Device.StateDir != "/var/lib/vigil" {
		t.Errorf("device.state_dir = %q, want /var/lib/vigil (the unit's StateDirectory)", c.Device.StateDir)
	}
	if c.Heartbeat.Checklist != "/etc/vigil/HEARTBEAT.md" {
		t.Errorf("heartbeat.checklist = %q, want /etc/vigil/HEARTBEAT.md (the packaged conffile)", c.Heartbeat.Checklist)
	}
	for _, s := range c.Sensors {
		if s.Driver == "sim" {
			t.Errorf("sensor %s uses the sim driver in the production config", s.Name)
		}
	}
	if len(c.Rules) != 0 {
		t.Errorf("%d active rules; the shipped rules are commented examples", len(c.Rules))
	}
	noFiles := func(p string) ([]byte, error) { return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist} }
	if err := c.ResolveSecrets(func(string) string { return "" }, noFiles); err != nil {
		t.Errorf("secrets do not resolve on a fresh install: %v", err)
	}
	if c.LLMEnabled() {
		t.Error("the LLM is enabled without a key")
	}

	// The watchdog must not bite a healthy daemon sampling at this rate.
	wd := unitValue(t, "WatchdogSec")
	if len(wd) != 1 {
		t.Fatalf("WatchdogSec in vigil.service: %q", wd)
	}
	w, err := time.ParseDuration(wd[0])
	if err != nil {
		t.Fatal(err)
	}
	if si := c.Heartbeat.SampleInterval.Duration; 2*si > w {
		t.Errorf("heartbeat.sample_interval %v is more than half of WatchdogSec %v", si, w)
	}
}

// exampleLine is a commented-out TOML line of an example block.
var exampleLine = regexp.MustCompile(`^# ?(\[\[?[a-z]+\]\]?\s*$|[a-z_]+ = )`)

// TestConfigExamples uncomments the example sensors, rules and alert
// sections (everything commented after the Sensors banner) and checks that
// what users will copy is valid, and that the credential names it uses are
// ones vigil.service loads.
func TestConfigExamples(t *testing.T) {
	src, err := os.ReadFile("config.toml")
	if err != nil {
		t.Fatal(err)
	}
	banner := []byte("# ── Sensors")
	head, tail, ok := bytes.Cut(src, banner)
	if !ok {
		t.Fatal("no Sensors banner in config.toml")
	}
	var b bytes.Buffer
	b.Write(head)
	b.Write(banner)
	for _, l := range strings.SplitAfter(string(tail), "\n") {
		if exampleLine.MatchString(l) {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "#"), " ")
		}
		b.WriteString(l)
	}
	c := parse(t, "config.toml (examples uncommented)", b.Bytes())
	if len(c.Sensors) < 2 || len(c.Rules) < 4 || c.MQTT.Broker == "" || c.Telegram.ChatID == 0 {
		t.Errorf("uncommented %d sensors, %d rules, mqtt %q, telegram chat %d: the example blocks were not all found",
			len(c.Sensors), len(c.Rules), c.MQTT.Broker, c.Telegram.ChatID)
	}

	// Relative *_file names resolve against $CREDENTIALS_DIRECTORY; each
	// one the examples use must be loaded by the unit.
	loaded := map[string]bool{}
	for _, lc := range unitValue(t, "LoadCredential") {
		id, _, _ := strings.Cut(lc, ":")
		loaded[id] = true
	}
	names := regexp.MustCompile(`(?m)^#?\s*(?:api_key|password|token)_file = "([^"]+)"`).FindAllSubmatch(src, -1)
	if len(names) < 3 {
		t.Fatalf("found %d *_file examples, want the LLM key, MQTT password and Telegram token", len(names))
	}
	for _, m := range names {
		if !loaded[string(m[1])] {
			t.Errorf("config.toml names credential %q, which vigil.service does not load (LoadCredential ids: %v)", m[1], loaded)
		}
	}
	read := map[string]bool{}
	err = c.ResolveSecrets(
		func(k string) string {
			if k == "CREDENTIALS_DIRECTORY" {
				return "/run/credentials/vigil.service"
			}
			return ""
		},
		func(p string) ([]byte, error) {
			read[p] = true
			return []byte("s3cret\n"), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/run/credentials/vigil.service/mqtt_password", "/run/credentials/vigil.service/telegram_token"} {
		if !read[p] {
			t.Errorf("did not read %s (read %v)", p, read)
		}
	}
}

// TestChecklist: the shipped HEARTBEAT.md counts as empty, so a fresh
// install spends no LLM tokens until someone writes a check.
func TestChecklist(t *testing.T) {
	f, err := os.Open("HEARTBEAT.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, empty, err := config.ParseChecklist(f)
	if err != nil {
		t.Fatal(err)
	}
	if !empty {
		t.Error("HEARTBEAT.md has checks: a fresh install would call the LLM")
	}
}

// TestScripts: the maintainer scripts and smoke tests are POSIX sh, parse,
// and are executable in the checkout.
func TestScripts(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, name := range []string{"postinst", "prerm", "postrm", "test-dist.sh", "test-deb.sh", "test-board.sh", "../scripts/apt-install.sh"} {
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s missing", name)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("#!/bin/sh\n")) {
			t.Errorf("%s does not start with #!/bin/sh", name)
		}
		if out, err := exec.Command(sh, "-n", name).CombinedOutput(); err != nil {
			t.Errorf("sh -n %s: %v\n%s", name, err, out)
		}
		if fi, err := os.Stat(name); err == nil && fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", name)
		}
	}
}

// TestDocsSelfContained: what the repository and the .deb ship refers to
// nothing outside them (there once was a "SPEC" that neither contained),
// and every relative link in the Markdown docs leads to a file that exists.
func TestDocsSelfContained(t *testing.T) {
	files := []string{"../README.md", "../config.toml", "config.toml", "HEARTBEAT.md", "../docs/vigil.1"}
	md, err := filepath.Glob("../docs/*.md")
	if err != nil || len(md) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files = append(files, md...)
	spec := regexp.MustCompile(`\bSPEC\b`)
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if spec.MatchString(line) {
				t.Errorf("%s:%d refers to a SPEC the repository does not contain: %s", f, i+1, line)
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
					t.Errorf("%s:%d links to %s, which does not exist", f, i+1, target)
				}
			}
		}
	}
}

// TestManPage: docs/vigil.1 (installed as vigil(1), generated from the
// help text by `make man`) renders without a warning and has an entry for
// every command in the command tables of the README and docs/operations.md.
func TestManPage(t *testing.T) {
	src, err := os.ReadFile("../docs/vigil.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"../README.md", "../docs/operations.md"} {
		readme, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		cmds := regexp.MustCompile("(?m)^\\| `vigil ([a-z-]+)").FindAllSubmatch(readme, -1)
		if len(cmds) < 5 {
			t.Fatalf("found %d commands in %s's table", len(cmds), doc)
		}
		for _, c := range cmds {
			entry := regexp.MustCompile(`(?m)^\.B vigil ` + regexp.QuoteMeta(strings.ReplaceAll(string(c[1]), "-", `\-`)) + `\b`)
			if !entry.Match(src) {
				t.Errorf("vigil.1 has no entry for %q (in %s's command table)", c[1], doc)
			}
		}
	}
	checkManSections(t, string(src))
	man, err := exec.LookPath("man")
	if err != nil {
		t.Skip("no man here to render vigil.1")
	}
	cmd := exec.Command(man, "--warnings", "-l", "../docs/vigil.1")
	cmd.Env = append(os.Environ(), "MANPAGER=cat", "MANWIDTH=80")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("man -l docs/vigil.1: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("man --warnings -l docs/vigil.1 warns:\n%s", stderr.String())
	}
	if !strings.Contains(out.String(), "vigil - an on-device watch agent") {
		t.Errorf("rendered vigil.1 has no NAME line:\n%s", out.String())
	}
}

// TestHomeAssistantVersion: docs/alerts.md states the Home Assistant
// version the discovery payload really needs. default_entity_id is
// accepted from 2025.10 on (older versions reject the key), the device
// message (cmps) from 2024.11.
func TestHomeAssistantVersion(t *testing.T) {
	src, err := os.ReadFile("../transport/mqtt/discovery.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	need := "2024.11"
	if bytes.Contains(src, []byte(`json:"default_entity_id`)) {
		need = "2025.10"
	}
	claims := regexp.MustCompile(`(\d{4}\.\d+)\*?\*? or later`).FindAllSubmatch(doc, -1)
	if len(claims) == 0 {
		t.Fatal("docs/alerts.md states no Home Assistant version (\"YYYY.M or later\")")
	}
	for _, c := range claims {
		if string(c[1]) != need {
			t.Errorf("docs/alerts.md says Home Assistant %s or later; the discovery payload needs %s", c[1], need)
		}
	}
}

// fakeApt makes a directory to be the whole of PATH: an apt-get that
// records each call (its arguments and DEBIAN_FRONTEND) in the returned
// file and exits with updateRC for update and installRC for install, a sudo
// that runs its arguments, and links to the few real tools the scripts use.
// Nothing else is on it, so every tool the scripts look for is missing.
func fakeApt(t *testing.T, updateRC, installRC int) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	for _, tool := range []string{"sh", "id", "env", "dirname", "date", "true"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("no %s here", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	aptGet := fmt.Sprintf(`#!/bin/sh
echo "$* (DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-})" >>%[1]q
case $1 in
update)
	echo "Get:1 http://deb.debian.org/debian bookworm InRelease"
	echo "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/main/binary-armhf/Packages.xz  File has unexpected size (8787744 != 8787700). Mirror sync in progress? [IP: 127.0.0.1 80]" >&2
	echo "E: Some index files failed to download. They have been ignored, or old ones used instead." >&2
	exit %[2]d ;;
install)
	echo "Reading package lists... Done"
	[ %[3]d = 0 ] || echo "E: Unable to locate package $(eval echo \${$#})" >&2
	exit %[3]d ;;
esac
exit 1
`, calls, updateRC, installRC)
	files := map[string]string{
		"apt-get": aptGet,
		"sudo":    "#!/bin/sh\nexec \"$@\"\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, calls
}

// aptCalls returns the fake apt-get's recorded calls, one a line.
func aptCalls(t *testing.T, calls string) []string {
	t.Helper()
	b, err := os.ReadFile(calls)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestInstallSurvivesFailedUpdate: on a fresh machine an `apt-get update`
// that fails for one index (exit 100, a foreign architecture's mirror mid
// sync) is a warning; the install runs and decides. Each place that
// installs with apt — make test-deps, proof-deps, test-systemd, and
// packaging/test-board.sh's tools — is run for real with a PATH where the
// tools it wants are missing and apt-get is a fake.
func TestInstallSurvivesFailedUpdate(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	// Fixed stamps, so the Makefile runs no git.
	stamps := []string{"VERSION=v0.0.0", "COMMIT=c", "BUILDDATE=d", "SOURCE_DATE_EPOCH=0", "DEB_VERSION=0.0.0", "GO=true"}
	for _, tc := range []struct {
		name string
		cmd  []string
		want []string // packages the install must name
	}{
		{"make test-deps", append([]string{mk, "test-deps"}, stamps...), []string{"qemu-user-static", "chromium", "prometheus"}},
		{"make proof-deps", append([]string{mk, "proof-deps"}, stamps...), []string{"mosquitto-clients", "strace", "qemu-user-static"}},
		{"make test-systemd", append([]string{mk, "test-systemd"}, stamps...), []string{"systemd"}},
		{"test-board.sh tools", []string{"sh", "packaging/test-board.sh", "tools"}, []string{"mmdebstrap", "arch-test", "qemu-system-arm", "qemu-utils"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, calls := fakeApt(t, 100, 0)
			cmd := exec.Command(tc.cmd[0], tc.cmd[1:]...)
			if tc.cmd[0] == "sh" {
				cmd.Path = filepath.Join(dir, "sh")
			}
			cmd.Dir = ".."
			cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir()}
			out, err := cmd.CombinedOutput()
			got := aptCalls(t, calls)
			if err != nil {
				t.Fatalf("%s with apt-get update failing (exit 100): %v\napt-get calls: %q\noutput:\n%s", tc.name, err, got, out)
			}
			if len(got) != 2 || !strings.HasPrefix(got[0], "update") || !strings.HasPrefix(got[1], "install -y") {
				t.Fatalf("%s: apt-get calls %q, want update then install -y\noutput:\n%s", tc.name, got, out)
			}
			for _, p := range tc.want {
				if !slices.Contains(strings.Fields(got[1]), p) {
					t.Errorf("%s: apt-get %s does not install %s", tc.name, got[1], p)
				}
			}
			if !strings.HasSuffix(got[1], "(DEBIAN_FRONTEND=noninteractive)") {
				t.Errorf("%s: apt-get install ran without DEBIAN_FRONTEND=noninteractive: %s", tc.name, got[1])
			}
			if !regexp.MustCompile(`(?m)^WARNING: apt-get update failed \(exit 100\)`).Match(out) {
				t.Errorf("%s: no WARNING line for the failed update in:\n%s", tc.name, out)
			}
		})
	}
}

// TestInstallFailureNamesPackages: when the install itself fails, the
// message names the packages that are missing and the command to run, and
// the exit status is not zero.
func TestInstallFailureNamesPackages(t *testing.T) {
	dir, calls := fakeApt(t, 0, 100)
	cmd := exec.Command(filepath.Join(dir, "sh"), "scripts/apt-install.sh", "--no-install-recommends", "mosquitto", "strace")
	cmd.Dir = ".."
	cmd.Env = []string{"PATH=" + dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("apt-install.sh with a failing install: %v, want a non-zero exit\nstderr:\n%s", err, stderr.String())
	}
	if got := aptCalls(t, calls); len(got) != 2 {
		t.Errorf("apt-get calls %q, want update and install", got)
	}
	msg := stderr.String()
	for _, want := range []string{
		"mosquitto strace",
		"apt-get install -y --no-install-recommends mosquitto strace",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure message does not contain %q:\n%s", want, msg)
		}
	}
}

// manSection returns the body of the man page's section NAME ("" if none).
func manSection(src, name string) string {
	_, body, ok := strings.Cut(src, "\n.SH "+name+"\n")
	if !ok {
		return ""
	}
	body, _, _ = strings.Cut(body, "\n.SH ")
	return body
}

// envRead matches a variable read by name in Go code.
var envRead = regexp.MustCompile(`(?:os\.Getenv|os\.LookupEnv|getenv)\("([A-Z_]+)"\)`)

// checkManSections: the man page has ENVIRONMENT, FILES and a section on
// [manage] remote. ENVIRONMENT names every variable the program reads by
// name (in cmd/, config/, daemon/ and manage/, tests aside), the overrides and the proxy
// variables net/http reads; FILES names the state, socket and checklist.
func checkManSections(t *testing.T, src string) {
	t.Helper()
	env := manSection(src, "ENVIRONMENT")
	if env == "" {
		t.Error("vigil.1 has no ENVIRONMENT section")
	}
	want := []string{`VIGIL_\fISECTION\fB_\fIKEY`, "VIGIL_CONFIG", "NO_COLOR", "CREDENTIALS_DIRECTORY", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "RUNTIME_DIRECTORY", "NOTIFY_SOCKET", "WATCHDOG_USEC"}
	var sources []string
	for _, dir := range []string{"../cmd/vigil", "../config", "../daemon", "../manage"} {
		m, err := filepath.Glob(dir + "/*.go")
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, m...)
	}
	// Read by name but not for users: a benchmark switch.
	notForUsers := map[string]bool{"VIGIL_NO_TRIM": true}
	for _, f := range sources {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range envRead.FindAllSubmatch(b, -1) {
			if !notForUsers[string(m[1])] {
				want = append(want, string(m[1]))
			}
		}
	}
	slices.Sort(want)
	for _, v := range slices.Compact(want) {
		if !strings.Contains(strings.ReplaceAll(env, `\-`, "-"), v) {
			t.Errorf("vigil.1's ENVIRONMENT does not name %s", v)
		}
	}
	files := manSection(src, "FILES")
	for _, f := range []string{"/etc/vigil/config.toml", "/var/lib/vigil/vigil.db", "/run/vigil/vigil.sock", "/var/lib/vigil/HEARTBEAT.md", "vigil.db.corrupt"} {
		if !strings.Contains(strings.ReplaceAll(files, `\-`, "-"), f) {
			t.Errorf("vigil.1's FILES does not name %s", f)
		}
	}
	remote := strings.ReplaceAll(manSection(src, "REMOTE COMMANDS"), `\-`, "-")
	for _, w := range append([]string{"[manage] remote", "not allowed", "The default is"}, config.RemoteVerbs...) {
		if !strings.Contains(remote, w) {
			t.Errorf("vigil.1's REMOTE COMMANDS section ([manage] remote) does not mention %s", w)
		}
	}
}

// TestModuleFloors: no module is built at a release known to carry
// published advisories. Each floor names why; raise it (never lower it) when
// a new advisory is published, and bring go.mod up to a release past it.
func TestModuleFloors(t *testing.T) {
	floors := []struct{ mod, min, why string }{
		{"golang.org/x/net", "v0.45.0", "v0.44.0 and earlier have published advisories"},
	}
	for _, file := range []string{"../go.mod", "../tools/go.mod"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range floors {
			m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(f.mod) + `\s+(v\d+\.\d+\.\d+)`).FindSubmatch(data)
			if m == nil {
				continue // not required by this module
			}
			if got := string(m[1]); semverLess(got, f.min) {
				t.Errorf("%s: %s %s, want at least %s: %s", file, f.mod, got, f.min, f.why)
			}
		}
	}
}

// semverLess compares two vMAJOR.MINOR.PATCH versions.
func semverLess(a, b string) bool {
	parse := func(v string) (n [3]int) {
		for i, p := range strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3) {
			n[i], _ = strconv.Atoi(p)
		}
		return n
	}
	x, y := parse(a), parse(b)
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}
