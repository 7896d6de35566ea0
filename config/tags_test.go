package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestDeviceTags(t *testing.T) {
	c := mustParse(t, "[device]\ntags = [\"north\", \"tomatoes\", \"gh-2\", \"0_a\"]\n")
	if got := strings.Join(c.Device.Tags, " "); got != "north tomatoes gh-2 0_a" {
		t.Errorf("device.tags = %q, want north tomatoes gh-2 0_a", got)
	}
	if c := mustParse(t, ""); len(c.Device.Tags) != 0 {
		t.Errorf("device.tags by default = %q, want none", c.Device.Tags)
	}
	const bad = `is not a tag: use 1-32 of a-z, 0-9, _ and -, starting with a letter or digit, as in "north"`
	many := make([]string, MaxTags+1)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("t%d", i))
	}
	tests := []struct {
		name, tags, want string
	}{
		{"capital", `["north", "North"]`, `config.toml:3: device.tags: tags[1]: "North" ` + bad},
		{"empty", `[""]`, `config.toml:3: device.tags: tags[0]: "" ` + bad},
		{"leading dash", `["-north"]`, `config.toml:3: device.tags: tags[0]: "-north" ` + bad},
		{"space", `["north side"]`, `config.toml:3: device.tags: tags[0]: "north side" ` + bad},
		{"too long", `["` + strings.Repeat("a", 33) + `"]`, `config.toml:3: device.tags: tags[0]: "` + strings.Repeat("a", 33) + `" ` + bad},
		{"twice", `["north", "tomatoes", "north"]`, `config.toml:3: device.tags: tags[2]: "north" is listed twice`},
		{"too many", "[" + strings.Join(many, ", ") + "]", `config.toml:3: device.tags: 17 tags, more than 16: keep the 16 that matter for selecting this device`},
		{"not a list", `"north"`, `config.toml:3: device.tags: must be an array (got a string)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseString(t, "[device]\nid = \"gh1\"\ntags = "+tt.tags+"\n")
			if err == nil || err.Error() != tt.want {
				t.Errorf("tags = %s: error %v\nwant %s", tt.tags, err, tt.want)
			}
		})
	}
	// 32 characters is the longest tag.
	if _, err := parseString(t, "[device]\ntags = [\""+strings.Repeat("a", 32)+"\"]\n"); err != nil {
		t.Errorf("a 32-character tag: %v", err)
	}
}
