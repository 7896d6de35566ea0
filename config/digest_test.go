package config

import (
	"regexp"
	"strings"
	"testing"
)

func TestDigest(t *testing.T) {
	const base = "[device]\nid = \"gh1\"\ntags = [\"north\"]\n[heartbeat]\ninterval = \"30m\"\n[llm]\napi_key_env = \"KEY\"\n"
	withKey := func(src, key string) *Config {
		t.Helper()
		c := mustParse(t, src)
		if err := c.ResolveSecrets(env(map[string]string{"KEY": key}), files(nil)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	list := []byte("# Checklist\n- the soil is moist\n")
	d := Digest(withKey(base, "sk-one"), list)
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(d) {
		t.Fatalf("Digest = %q, want 12 lowercase hex digits", d)
	}
	same := []struct{ name, src, key string }{
		{"a comment and another order", "# greenhouse one\n[heartbeat]\ninterval = \"30m\"\n[llm]\napi_key_env = \"KEY\"\n[device]\ntags = [\"north\"]\nid = \"gh1\"\n", "sk-one"},
		{"a default written out", base + "[mqtt]\ntopic_prefix = \"vigil\"\n", "sk-one"},
		{"another secret value (never in the digest)", base, "sk-two"},
		{"another device id", strings.Replace(base, `"gh1"`, `"gh2"`, 1), "sk-one"},
	}
	for _, tt := range same {
		if got := Digest(withKey(tt.src, tt.key), list); got != d {
			t.Errorf("%s: Digest = %s, want %s as before", tt.name, got, d)
		}
	}
	differ := []struct {
		name      string
		src       string
		checklist []byte
	}{
		{"another interval", "[device]\nid = \"gh1\"\ntags = [\"north\"]\n[heartbeat]\ninterval = \"10m\"\n[llm]\napi_key_env = \"KEY\"\n", list},
		{"another tag", "[device]\nid = \"gh1\"\ntags = [\"south\"]\n[heartbeat]\ninterval = \"30m\"\n[llm]\napi_key_env = \"KEY\"\n", list},
		{"another checklist", base, []byte("# Checklist\n- the soil is dry\n")},
		{"no checklist", base, nil},
	}
	for _, tt := range differ {
		if got := Digest(withKey(tt.src, "sk-one"), tt.checklist); got == d {
			t.Errorf("%s: Digest = %s, the same as before", tt.name, got)
		}
	}
}
