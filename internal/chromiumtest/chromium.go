// Package chromiumtest drives a real headless Chromium over the DevTools
// protocol for tests: load a page at a given window size, evaluate an
// expression in it, click, and take a screenshot. Test support only:
// nothing outside _test.go files imports it.
package chromiumtest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Bin finds chromium. Without it the test skips, unless CI is set: there a
// missing browser is a broken environment and fails.
func Bin(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found and CI is set: install it (apt-get install chromium, or make test-deps)")
	}
	t.Skip("chromium not found: install it (apt-get install chromium) to run the browser test")
	return ""
}

// Browser is one headless Chromium with one page, driven over DevTools.
type Browser struct {
	t    testing.TB
	cmd  *exec.Cmd
	conn *websocket.Conn
	mu   sync.Mutex
	id   int
}

var devtoolsRE = regexp.MustCompile(`DevTools listening on (ws://127\.0\.0\.1:(\d+)/\S+)`)

// Start launches Chromium with a throw-away profile and opens a page. The
// browser is killed when the test ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := Bin(t)
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--hide-scrollbars", "--force-color-profile=srgb",
		"--user-data-dir="+profileDir(t), "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "about:blank")
	// Its own process group: close kills the renderer and helper processes
	// too, which otherwise go on writing into the profile.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &Browser{t: t, cmd: cmd}
	t.Cleanup(b.close)
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := devtoolsRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				port <- m[2]
				sent = true
			}
		}
	}()
	var p string
	select {
	case p = <-port:
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not print its DevTools address within 30s")
	}
	// The page target Chromium opened for about:blank.
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + p + "/json/list")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		ws := ""
		for _, tg := range targets {
			if tg.Type == "page" {
				ws = tg.WS
			}
		}
		if ws != "" {
			if b.conn, _, err = websocket.DefaultDialer.Dial(ws, nil); err != nil {
				t.Fatalf("devtools: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page target in chromium (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Call("Page.enable", nil)
	return b
}

func (b *Browser) close() {
	if b.conn != nil {
		b.conn.Close()
	}
	if b.cmd.Process != nil {
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		b.cmd.Process.Kill()
		b.cmd.Wait()
	}
}

// profileDir is a throw-away profile directory, removed when the test
// ends. A helper process that was still dying may add a file while it is
// removed, so removal is retried for a moment before it is reported.
func profileDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vigil-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var err error
		for range 20 {
			if err = os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("remove the chromium profile: %v", err)
	})
	return dir
}

// Call sends one DevTools command and returns its result, skipping the
// events that arrive before it.
func (b *Browser) Call(method string, params any) json.RawMessage {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.id++
	id := b.id
	if params == nil {
		params = struct{}{}
	}
	_ = b.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := b.conn.WriteJSON(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		b.t.Fatalf("devtools %s: %v", method, err)
	}
	_ = b.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := b.conn.ReadJSON(&msg); err != nil {
			b.t.Fatalf("devtools %s: %v", method, err)
		}
		if msg.ID != id {
			continue
		}
		if msg.Error != nil {
			b.t.Fatalf("devtools %s: %s", method, msg.Error.Message)
		}
		return msg.Result
	}
}

// Size sets the viewport: a phone is mobile, with touch-sized layout.
func (b *Browser) Size(width, height int, mobile bool) {
	b.Call("Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
}

// Eval evaluates a JavaScript expression in the page (DevTools is not
// bound by the page's Content-Security-Policy) and decodes its value into v.
func (b *Browser) Eval(expr string, v any) {
	b.t.Helper()
	raw := b.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		b.t.Fatalf("eval %q: %v", expr, err)
	}
	if res.Exception != nil {
		b.t.Fatalf("eval %q: %s", expr, res.Exception.Text)
	}
	if v != nil {
		if err := json.Unmarshal(res.Result.Value, v); err != nil {
			b.t.Fatalf("eval %q: decode %s: %v", expr, res.Result.Value, err)
		}
	}
}

// Navigate loads url and waits until the document is complete.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Call("Page.navigate", map[string]any{"url": url})
	b.WaitFor(fmt.Sprintf("document.readyState === 'complete' && location.href.startsWith(%q)", url), 20*time.Second)
}

// WaitFor polls a boolean expression until it is true.
func (b *Browser) WaitFor(expr string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		var ok bool
		b.Eval("!!("+expr+")", &ok)
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			var html string
			b.Eval("document.body ? document.body.innerText.slice(0, 2000) : ''", &html)
			b.t.Fatalf("%s not true within %s; page text:\n%s", expr, timeout, html)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Screenshot writes a PNG of the viewport, or of the whole page when full.
func (b *Browser) Screenshot(w io.Writer, full bool) {
	b.t.Helper()
	raw := b.Call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": full})
	var res struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		b.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := w.Write(png); err != nil {
		b.t.Fatal(err)
	}
}
