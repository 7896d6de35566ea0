package packaging

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/config"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// docFiles are the Markdown docs a person reads: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	md, err := filepath.Glob("../docs/*.md")
	if err != nil || len(md) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{"../README.md", "../CONTRIBUTING.md"}, md...)
}

// fragmentBase is what a block marked `<!-- fragment -->` on the line
// before its fence is checked with: the sensors the docs' examples name.
// Every other block must be a whole config on its own.
const fragmentBase = `[[sensor]]
name = "air"
driver = "bme280"

[[sensor]]
name = "freezer"
driver = "ds18b20"

`

// fragmentMark is the HTML comment (invisible when rendered) that marks a
// TOML block as a fragment of a config.
const fragmentMark = "<!-- fragment -->"

type docBlock struct {
	where    string // file:line of the fence
	text     string // the TOML as checked (a fragment with fragmentBase)
	fragment bool
}

// docBlocks returns every ```toml block of README.md and docs/*.md.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var out []docBlock
	for _, f := range docFiles(t) {
		lines := strings.Split(string(readFile(t, f)), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```toml" {
				continue
			}
			start := i
			var body strings.Builder
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				body.WriteString(lines[i])
				body.WriteString("\n")
			}
			if i == len(lines) {
				t.Errorf("%s:%d: a ```toml block that never ends", f, start+1)
			}
			b := docBlock{where: strings.TrimPrefix(f, "../") + ":" + strconv.Itoa(start+1), text: body.String()}
			if start > 0 && strings.TrimSpace(lines[start-1]) == fragmentMark {
				b.fragment = true
				b.text = fragmentBase + b.text
			}
			out = append(out, b)
		}
	}
	return out
}

// TestDocTOMLBlocks: every ```toml block in README.md and docs/*.md passes
// the validation of `vigil config check` (an unknown key, a duplicate key,
// a bad value all fail it). A block that is part of a config says so with
// <!-- fragment --> on the line before its fence and is checked after the
// sensors air (bme280) and freezer (ds18b20); every other block must be a
// config on its own.
func TestDocTOMLBlocks(t *testing.T) {
	blocks := docBlocks(t)
	if len(blocks) < 10 {
		t.Fatalf("found %d TOML blocks in the docs", len(blocks))
	}
	for _, b := range blocks {
		if _, err := config.ParseWith(strings.NewReader(b.text), b.where, config.HardwareOptions()); err != nil {
			how := "as a whole config"
			if b.fragment {
				how = "as a fragment, after sensors air and freezer"
			}
			t.Errorf("%s: the TOML block fails `vigil config check` (%s; mark a part of a config with %s on the line before the fence):\n%v", b.where, how, fragmentMark, err)
		}
	}
}

// TestDocTOMLBlocksCatch: the check above fails on what it must catch.
func TestDocTOMLBlocksCatch(t *testing.T) {
	for _, bad := range []string{
		"[mqtt]\nadress = \"tcp://a:1883\"\n",                             // unknown key
		"[llm]\nbase_url = \"http://a/v1\"\nbase_url = \"http://b/v1\"\n", // duplicate key
	} {
		if _, err := config.ParseWith(strings.NewReader(fragmentBase+bad), "block", config.HardwareOptions()); err == nil {
			t.Errorf("config check accepts %q", bad)
		}
	}
}

// TestReadme: the README is a short guide: at most 300 lines, starting
// with `make run` and `make test`, the install section within its first
// 60 lines leading with the .deb and `vigil init`.
func TestReadme(t *testing.T) {
	src := string(readFile(t, "../README.md"))
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	if len(lines) > 300 {
		t.Errorf("README.md has %d lines, want at most 300: move reference to docs/", len(lines))
	}
	first := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(src)
	if first == nil || !strings.HasPrefix(first[1], "make run") || !strings.Contains(first[1], "\nmake test") {
		t.Errorf("README.md's first code block is not `make run` then `make test`: %q", first)
	}
	install := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "## ") && strings.Contains(strings.ToLower(l), "install") {
			install = i
			break
		}
	}
	if install < 0 || install >= 60 {
		t.Fatalf("README.md's install section starts at line %d, want within the first 60", install+1)
	}
	rest := strings.Join(lines[install:], "\n")
	deb, init := strings.Index(rest, "apt install ./vigil_*_arm64.deb"), strings.Index(rest, "sudo vigil init")
	if deb < 0 || init < deb {
		t.Errorf("README.md's install section does not lead with `apt install ./vigil_*_arm64.deb` then `sudo vigil init`")
	}
}

// TestFleetDocShipped: docs/fleet.md is in the .deb and in the man page's
// SEE ALSO, as the other docs are.
func TestFleetDocShipped(t *testing.T) {
	nfpm := string(readFile(t, "nfpm.yaml"))
	for _, doc := range []string{"install", "alerts", "hardware", "fleet", "configuration", "operations", "llm"} {
		if !strings.Contains(nfpm, "src: docs/"+doc+".md\n    dst: /usr/share/doc/vigil/"+doc+".md") {
			t.Errorf("packaging/nfpm.yaml does not ship docs/%s.md as /usr/share/doc/vigil/%s.md", doc, doc)
		}
	}
	man := string(readFile(t, "../docs/vigil.1"))
	_, see, ok := strings.Cut(man, ".SH SEE ALSO")
	if !ok || !strings.Contains(see, "fleet.md") {
		t.Errorf("docs/vigil.1 SEE ALSO does not name fleet.md:%s", see)
	}
}

// slug is GitHub's anchor for a Markdown heading.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '—' && r != '–' && r != '…' && r != '→' && r != '·':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown file's headings (outside code).
func anchors(src string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		h = strings.ReplaceAll(h, "`", "")
		s := slug(h)
		for n := 1; out[s]; n++ {
			s = slug(h) + "-" + strconv.Itoa(n)
		}
		out[s] = true
	}
	return out
}

// TestDocLinks: every relative link in README.md, CONTRIBUTING.md and
// docs/*.md leads to a file that exists, and an anchor into a Markdown
// file to one of its headings.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	for _, f := range docFiles(t) {
		src := string(readFile(t, f))
		inCode := false
		for i, line := range strings.Split(src, "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if inCode {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target, anchor := m[1], strings.TrimPrefix(m[2], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path := f
				if target != "" {
					path = filepath.Join(filepath.Dir(f), target)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s:%d links to %s, which does not exist", f, i+1, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(string(b))[anchor] {
					t.Errorf("%s:%d links to %s#%s: no such heading in %s", f, i+1, target, anchor, path)
				}
			}
		}
	}
}

// TestPassagesOnce: the passages the docs once had in several copies that
// contradicted each other exist once; the others link to them. The
// [telegram] block (the one with a chat_id) and the alert's JSON are
// docs/alerts.md's; the proxies and the clock's threshold are
// docs/operations.md's alone.
func TestPassagesOnce(t *testing.T) {
	count := func(re *regexp.Regexp) map[string]int {
		n := map[string]int{}
		for _, f := range docFiles(t) {
			if c := len(re.FindAllString(string(readFile(t, f)), -1)); c > 0 {
				n[strings.TrimPrefix(f, "../")] = c
			}
		}
		return n
	}
	for _, tc := range []struct {
		what string
		re   *regexp.Regexp
		want string
		once bool // one copy in want, not only one file
	}{
		{"the [telegram] block", regexp.MustCompile(`(?m)^#? ?chat_id = `), "docs/alerts.md", true},
		{"the alert JSON", regexp.MustCompile(`\{"id":"[a-z-]+-[0-9a-f]{16}","device":"[a-z-]+","time"`), "docs/alerts.md", true},
		{"the proxy passage", regexp.MustCompile(`NO_PROXY|HTTPS_PROXY`), "docs/operations.md", false},
		{"the clock threshold", regexp.MustCompile(`(?i)before 2020|earlier than (the|its) build date|before the build date|binary's build date`), "docs/operations.md", false},
	} {
		got := count(tc.re)
		if len(got) != 1 || got[tc.want] == 0 || tc.once && got[tc.want] != 1 {
			t.Errorf("%s appears %v (file: copies); want it once, in %s, and links to it elsewhere", tc.what, got, tc.want)
		}
	}
}

// TestOllamaNeedsNoKey: docs/llm.md gives one way to use a server without
// a key, and it is the one that works: its block turns the LLM on with no
// key anywhere, where leaving api_key_env out would run rules-only.
func TestOllamaNeedsNoKey(t *testing.T) {
	var found bool
	for _, b := range docBlocks(t) {
		if !strings.Contains(b.text, ":11434/v1") {
			continue
		}
		if !strings.HasPrefix(b.where, "docs/llm.md:") {
			t.Errorf("%s: an Ollama config outside docs/llm.md; link to it instead", b.where)
			continue
		}
		found = true
		noEnv := func(string) string { return "" }
		noFiles := func(p string) ([]byte, error) { return nil, os.ErrNotExist }
		for _, tc := range []struct {
			text string
			want bool
		}{
			{b.text, true},
			{regexp.MustCompile(`(?m)^api_key_env = .*\n`).ReplaceAllString(b.text, ""), false},
		} {
			cfg, err := config.ParseWith(strings.NewReader(tc.text), b.where, config.HardwareOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.ResolveSecrets(noEnv, noFiles); err != nil {
				t.Fatal(err)
			}
			if cfg.LLMEnabled() != tc.want {
				t.Errorf("%s: LLM on = %v with no key anywhere, want %v:\n%s", b.where, cfg.LLMEnabled(), tc.want, tc.text)
			}
		}
	}
	if !found {
		t.Error("docs/llm.md has no Ollama block")
	}
}
