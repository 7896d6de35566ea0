package config

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func addSeeds(f *testing.F) {
	full, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(full))
	f.Add(newSensors)
	for _, s := range []string{
		"",
		"[device]\nid = 1\n[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = { t = \"x\" }\n",
		"sensor = [{ name = \"a\", driver = \"sim\" }, 1]\n",
		"[a.b]\nc.d = 1\n[[x.y]]\nz = \"\"\"\nq\n\"\"\"\n",
		"[[rule]]\nname = \"r\"\nwhen = '''board.load1\n> 4'''\n",
		"\"quoted key\".'lit' = { a = [1, { b = 2 }], c = 1979-05-27 07:32:00Z }\n",
		"[llm]\napi_key = \"sk\"\n[telegram]\nchat_id = 1\n",
		"[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ndeadband = \"x\"\n",
		"[heartbeat]\nchecklist = \"~/HEARTBEAT.md\"\nschedule = [\"07:30\"]\n[llm]\nmodel = \"../m\"\n",
		"[[sensor]]\nname = \"a\"\ndriver = \"sim\"\ncalibrate = { temperature = { offset = -1.5 }, humidity = { points = [[35, 33.2], [75.0, 76.1]] } }\n",
		"[[sensor]]\nname = \"a\"\ndriver = \"sim\"\n[sensor.calibrate.temperature]\npoints = [[1e300, -0.0], [nan, 1]]\n",
	} {
		f.Add(s)
	}
}

// FuzzParse: no panics; every error names a key or a line; whatever parses
// survives WriteTOML and parses back to the same config.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		c, err := Parse(strings.NewReader(src), "f.toml")
		if err != nil {
			errs := Errors(err)
			if len(errs) == 0 {
				t.Fatalf("Parse error %q is not an *Error", err)
			}
			for _, e := range errs {
				if e.Key == "" && e.Line == 0 {
					t.Fatalf("error %q names neither key nor line", e)
				}
				if e.Line > strings.Count(src, "\n")+1 {
					t.Fatalf("error %q: line past the end of %q", e, src)
				}
			}
			return
		}
		var buf bytes.Buffer
		if err := c.WriteTOML(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(&buf, "written.toml")
		if err != nil {
			t.Fatalf("Parse(WriteTOML(Parse(%q))) = %v\n%s", src, err, buf.String())
		}
		sameLines(c, back)
		if diff := cmp.Diff(c, back, cmpConfig...); diff != "" {
			t.Fatalf("round trip of %q (-want +got):\n%s", src, diff)
		}
	})
}

// FuzzLocate: on valid TOML, locate finds every key the decoder saw.
func FuzzLocate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		var v map[string]any
		md, err := toml.Decode(src, &v)
		found := map[string]bool{}
		for _, k := range locate(src) {
			found[k.plain()] = true
			if k.line < 1 || k.line > strings.Count(src, "\n")+1 {
				t.Fatalf("locate(%q): %s on line %d", src, indexedKey(k.path), k.line)
			}
		}
		if err != nil {
			return
		}
		for _, k := range md.Keys() {
			if !found[k.String()] {
				t.Fatalf("locate(%q) missed %s (found %v)", src, k, found)
			}
		}
	})
}
