package config_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/vigil-iot/vigil/config"
)

func ExampleParse() {
	src := `[device]
id = "greenhouse"

[heartbeat]
interval = "10s"

[[sensor]]
name = "Air"
driver = "bme280"
`
	_, err := config.Parse(strings.NewReader(src), "config.toml")
	fmt.Println(err)
	// Output:
	// config.toml:5: heartbeat.interval: must be at least 1m (got "10s"); allowed: "0" (off) or 1m to 24h
	// config.toml:8: sensor[0].name: must match [a-z0-9_]{1,32} (got "Air")
}

func ExampleConfig_ResolveSecrets() {
	src := `[telegram]
token_env = "VIGIL_TELEGRAM_TOKEN"
chat_id = 42
`
	c, err := config.Parse(strings.NewReader(src), "config.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	getenv := func(name string) string {
		return map[string]string{"VIGIL_TELEGRAM_TOKEN": "123:secret"}[name]
	}
	if err := c.ResolveSecrets(getenv, os.ReadFile); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Telegram.Token, c.TelegramEnabled(), c.LLMEnabled())
	// Output: [redacted] true false
}

func ExampleParseChecklist() {
	text, empty, _ := config.ParseChecklist(strings.NewReader(config.ChecklistTemplate))
	fmt.Println(empty)
	text, empty, _ = config.ParseChecklist(strings.NewReader("# Checks\n<!-- examples -->\n- Freezer below -15 °C\n"))
	fmt.Printf("%v %q\n", empty, text)
	// Output:
	// true
	// false "# Checks\n\n- Freezer below -15 °C"
}
