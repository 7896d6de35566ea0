package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-iot/vigil/agent"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/heartbeat"
	"github.com/vigil-iot/vigil/internal/configtest"
	"github.com/vigil-iot/vigil/manage"
	"github.com/vigil-iot/vigil/transport"
)

// newReloadable opens an App on the config at path, on a fresh state
// file, whose reload reads that file again; o gives the rest.
func newReloadable(t *testing.T, path string, o Options) *App {
	t.Helper()
	base := readBase(t, path)
	cfg, err := base.Configured()
	if err != nil {
		t.Fatal(err)
	}
	o.Store, o.Base, o.Redactor = StoreWrite, base, base.Red
	o.Wiring.Load = func() (*manage.Base, error) { return readBase(t, path), nil }
	a, err := New(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestReloadAppliesARuleChange: a reload reads the config again through
// Wiring.Load and puts a changed rule and a new one into the running
// engine, logging what changed; a config that does not validate changes
// nothing and says so.
func TestReloadAppliesARuleChange(t *testing.T) {
	dir := t.TempDir()
	path := configtest.Write(t, dir, configtest.OverlayRules)
	var logged strings.Builder
	ctx := context.Background()
	a := newReloadable(t, path, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	rules := func() []string {
		t.Helper()
		st, err := a.engine.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range st.Rules {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := rules(); !slices.Equal(got, []string{"too_hot"}) {
		t.Fatalf("rules before the reload = %v", got)
	}

	configtest.Write(t, dir, strings.Replace(configtest.OverlayRules, "> 100", "> 30", 1)+"\n[[rule]]\nname = \"too_cold\"\nwhen = \"air.temperature < 5\"\n")
	a.Reload(ctx)
	if got := rules(); !slices.Equal(got, []string{"too_cold", "too_hot"}) {
		t.Errorf("rules after the reload = %v, want too_cold and too_hot", got)
	}
	if when := a.current().Rules[0].When; when != "air.temperature > 30" {
		t.Errorf("too_hot in force after the reload: when = %q, want the new threshold", when)
	}
	if !strings.Contains(logged.String(), `msg="config reloaded" changed="rule.too_hot, rule.too_cold (added)"`) {
		t.Errorf("log lacks the reload and what changed:\n%s", logged.String())
	}

	configtest.Write(t, dir, configtest.OverlayRules+"bogus = 1\n")
	a.Reload(ctx)
	if got := rules(); !slices.Equal(got, []string{"too_cold", "too_hot"}) {
		t.Errorf("rules after a rejected reload = %v, want them unchanged", got)
	}
	if !strings.Contains(logged.String(), `msg="config reload rejected: still running on the previous config"`) || !strings.Contains(logged.String(), "bogus: unknown key") {
		t.Errorf("log lacks the rejected reload naming the bad key:\n%s", logged.String())
	}
}

// TestSetDuringReloadComesIntoForce: a set stored while a reload applies
// (validated against the base being replaced) is in force once both are
// done, beside what the reload changed: the reload does not put back the
// overlay it read before the set.
func TestSetDuringReloadComesIntoForce(t *testing.T) {
	dir := t.TempDir()
	path := configtest.Write(t, dir, configtest.OverlayRules)
	ctx := context.Background()
	sock := transport.WithSource(ctx, transport.Source{Channel: transport.ChannelSocket})
	var a *App
	var during string
	setDuring := false
	wiring := Wiring{
		// The reload rebuilds the thinker ([llm] changed): a set arrives
		// then, after the reload read the overlay, before it is done.
		Thinker: func(*config.Config, agent.Self, agent.ModelMemory, *slog.Logger) (heartbeat.Thinker, error) {
			if setDuring {
				setDuring = false
				out, err := a.cmds.Set(sock, "heartbeat.interval", "20m")
				if err != nil {
					t.Errorf("set during the reload: %v", err)
				}
				during = out
			}
			return nil, nil
		},
	}
	a = newReloadable(t, path, Options{Log: slog.New(slog.DiscardHandler), Wiring: wiring, ApplyWait: 50 * time.Millisecond})
	a.runCtx = ctx // as Run: a change applies to the running engine, in the background

	configtest.Write(t, dir, "max_quiet = \"3h\"\n"+configtest.OverlayRules+"\n[llm]\nmodel = \"another-model\"\n")
	setDuring = true
	a.Reload(ctx)
	a.bg.Wait() // the set's apply, which waited for the reload
	if !strings.Contains(during, "heartbeat.interval set to 20m") {
		t.Fatalf("the set during the reload answered %q", during)
	}
	for key, want := range map[string]string{"heartbeat.interval": "20m", "heartbeat.max_quiet": "3h", "llm.model": "another-model"} {
		if v, _ := a.current().Get(key); v != want {
			t.Errorf("%s in force = %s, want %s", key, v, want)
		}
	}
}

// TestReloadKeepsHTTPUntilRestart: the status page's listener and login
// are set up at start, so a reload that changes [http] listen, username,
// password or allowed_hosts keeps them, as it keeps device.id, and the
// WARN line names each one; the rest of the reload applies.
func TestReloadKeepsHTTPUntilRestart(t *testing.T) {
	dir := t.TempDir()
	path := configtest.Write(t, dir, configtest.OverlayRules+"\n[http]\nlisten = \"127.0.0.1:8080\"\n")
	var logged strings.Builder
	ctx := context.Background()
	a := newReloadable(t, path, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})

	pw := filepath.Join(dir, "page-password")
	writeFile(t, pw, "s3cret-page\n")
	configtest.Write(t, dir, "max_quiet = \"3h\"\n"+configtest.OverlayRules+`
[http]
listen = "0.0.0.0:8081"
username = "admin"
password_file = "`+pw+`"
allowed_hosts = ["vigil.lan"]
`)
	a.Reload(ctx)
	log := logged.String()
	if !strings.Contains(log, `msg="config reload: these changes take effect only at the next restart" keys="http.listen, http.username, http.password, http.allowed_hosts"`) {
		t.Errorf("log lacks the WARN naming the [http] keys a restart applies:\n%s", log)
	}
	_, applied, _ := strings.Cut(log, `msg="config reloaded" `)
	if applied = firstLine(applied); applied != `changed="heartbeat.max_quiet 6h0m0s→3h0m0s"` {
		t.Errorf("config reloaded %s, want only heartbeat.max_quiet changed ([http] kept):\n%s", applied, log)
	}
	if strings.Contains(log, "s3cret-page") {
		t.Errorf("log shows the page's password:\n%s", log)
	}
	h := a.current().HTTP
	if h.Listen != "127.0.0.1:8080" || h.Username != "vigil" || h.Password.Value() != "" || len(h.AllowedHosts) != 0 {
		t.Errorf("[http] in force after the reload = %q %q password set %t %q, want the start's", h.Listen, h.Username, h.Password.Value() != "", h.AllowedHosts)
	}
	if v, _ := a.current().Get("heartbeat.max_quiet"); v != "3h" {
		t.Errorf("heartbeat.max_quiet in force = %s, want 3h", v)
	}
}
