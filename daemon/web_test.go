package daemon

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/configtest"
)

func TestPageHosts(t *testing.T) {
	tests := []struct {
		host    string
		allowed []string
		want    []string
	}{
		{"greenhouse", nil, []string{"greenhouse", "greenhouse.local"}},
		{"Greenhouse.lan.", []string{"vigil.example"}, []string{"greenhouse", "greenhouse.lan", "greenhouse.local", "vigil.example"}},
		{"", []string{"vigil.example"}, []string{"vigil.example"}},
	}
	for _, tt := range tests {
		if got := pageHosts(tt.host, tt.allowed); !slices.Equal(got, tt.want) {
			t.Errorf("pageHosts(%q, %q) = %q, want %q", tt.host, tt.allowed, got, tt.want)
		}
	}
}

// pageConfig is the sim config with the air sensor's rule, the status
// page on a free loopback port and [manage] remote allowing pause.
const pageConfig = configtest.OverlayRules + `
[http]
listen = "127.0.0.1:0"

[manage]
remote = ["status", "pause", "resume", "check"]
`

// servePage serves the App's status page as Run does, on cfg's [http]
// listen, until the test ends, and returns its address.
func servePage(t *testing.T, a *App) string {
	t.Helper()
	ws, err := listenWeb(a.current(), a, slog.New(slog.DiscardHandler))
	if err != nil || ws == nil {
		t.Fatalf("listenWeb = %v, %v", ws, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ws.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ws.ln.Addr().String()
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %s: %s", resp.Status, body)
	}
	return string(body)
}

// TestPageFollowsReload: the status page shows and runs what the config
// in force says, not what it said at start. A reload that takes pause out
// of [manage] remote, adds a rule and changes device.timezone takes the
// Pause button off the page, draws the new rule's line and shows times in
// the new zone; a pause posted from the page opened before the reload is
// refused 403, not 500.
func TestPageFollowsReload(t *testing.T) {
	dir := t.TempDir()
	path := configtest.Write(t, dir, pageConfig)
	sensors := func(*config.Config, *slog.Logger) ([]device.Named, func() error) {
		return []device.Named{{Name: "air", Sensor: airSensor{}}}, func() error { return nil }
	}
	a := newReloadable(t, path, Options{Log: slog.New(slog.DiscardHandler), Wiring: Wiring{Sensors: sensors}})
	ctx := context.Background()
	if err := a.Engine().SampleOnce(ctx); err != nil {
		t.Fatal(err)
	}
	url := servePage(t, a)
	before := getPage(t, url)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(before)
	if m == nil || !strings.Contains(before, `id="pause"`) || !strings.Contains(before, " UTC</span>") {
		t.Fatalf("the page before the reload lacks its form token, the Pause button or UTC times:\n%s", before)
	}
	post := func(verb string) (int, string) {
		t.Helper()
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.PostForm(url+"/do/"+verb, neturl.Values{"csrf": {m[1]}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := post("resume"); code != http.StatusSeeOther {
		t.Fatalf("POST /do/resume with the page's token = %d %q, want 303", code, body)
	}

	next := strings.Replace(pageConfig, `"status", "pause", `, `"status", `, 1) + `
[[rule]]
name = "too_humid"
when = "air.humidity > 80"
`
	writeFile(t, path, strings.Replace(configtest.Sim, `timezone = "UTC"`, `timezone = "Asia/Tokyo"`, 1)+next)
	a.Reload(ctx)
	if got := a.current().Manage.Remote; slices.Contains(got, "pause") {
		t.Fatalf("[manage] remote in force after the reload = %q, want pause gone", got)
	}
	after := getPage(t, url)
	if strings.Contains(after, `id="pause"`) {
		t.Error("the page still offers Pause after a reload took it out of [manage] remote")
	}
	if !strings.Contains(after, `class="threshold" data-rule="too_humid"`) {
		t.Error("the page lacks the line of the rule the reload added")
	}
	if !strings.Contains(after, " JST</span>") {
		t.Error("the page does not show times in the device.timezone the reload set (Asia/Tokyo)")
	}
	code, body := post("pause")
	if code != http.StatusForbidden || !strings.Contains(body, "pause") || !strings.Contains(body, "[manage] remote") {
		t.Errorf("POST /do/pause after the reload = %d %q, want 403 naming [manage] remote", code, body)
	}
}
