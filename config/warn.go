package config

// This file decides which setups vigil runs with but warns about: each one
// sends a secret in clear text over the network, or lets more people
// command the device than its owner may think. They are not errors, since
// a trusted network or a broker's own rules may make them safe; they are
// said once at `vigil run` start and by `vigil config check`.

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Warnings returns one *Error per unsafe setup in c, naming the key, its
// line and the fix. It looks at the resolved secrets: a secret that is not
// set is not sent.
func (c *Config) Warnings() []*Error {
	var out []*Error
	warn := func(key, format string, args ...any) {
		out = append(out, &Error{File: c.file, Key: key, Line: c.lines[key], Err: fmt.Errorf(format, args...)})
	}
	m := c.MQTT
	if u, err := url.Parse(m.Broker); err == nil && m.Broker != "" {
		plain := !slices.Contains([]string{"ssl", "mqtts", "wss"}, u.Scheme)
		remote := !LoopbackHost(u.Hostname())
		if plain && remote && m.Password.value != "" {
			warn("mqtt.broker", "sends the MQTT password in clear text to %s (%s://, not TLS): use ssl://, mqtts:// or wss://", u.Hostname(), u.Scheme)
		}
		if m.Commands {
			var how, fix []string
			if plain && remote {
				how = append(how, "without TLS")
				fix = append(fix, "use ssl://, mqtts:// or wss://")
			}
			if m.Username == "" && m.CertFile == "" {
				how = append(how, "without a username or client certificate")
				fix = append(fix, "set mqtt.username with a broker ACL that lets only vigil write there")
			}
			if len(how) > 0 {
				id := c.Device.ID
				if id == "" {
					id = "<id>"
				}
				warn("mqtt.commands", "is on, but the broker %s is reached %s: anyone who can publish to %s/%s/cmd/# may command this device (pause it, change its settings); %s",
					m.Broker, strings.Join(how, " and "), m.TopicPrefix, id, strings.Join(fix, ", and "))
			}
		}
	}
	if c.LLM.APIKey.value != "" {
		if host, ok := plainRemote(c.LLM.BaseURL); ok {
			warn("llm.base_url", "sends the API key in clear text to %s (http://): use https://, or a server on this machine", host)
		}
	}
	if c.TelegramEnabled() {
		t := c.Telegram
		if host, ok := plainRemote(t.APIURL); ok {
			warn("telegram.api_url", "sends the bot token in clear text to %s (http://): use https://", host)
		}
		var groups []string
		for _, id := range t.AllowedChats {
			if id < 0 { // groups, supergroups and channels have negative ids
				groups = append(groups, strconv.FormatInt(id, 10))
			}
		}
		if len(groups) > 0 && len(t.AllowedUsers) == 0 {
			what := "group chat " + groups[0]
			if len(groups) > 1 {
				what = "group chats " + strings.Join(groups, ", ")
			}
			warn("telegram.allowed_chats", "%s may send commands and telegram.allowed_users is empty: every member may pause this device or change its settings; list the user ids that may in telegram.allowed_users", what)
		}
	}
	return out
}

// plainRemote returns the host of an http:// URL that leaves this machine.
func plainRemote(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || LoopbackHost(u.Hostname()) {
		return "", false
	}
	return u.Hostname(), true
}
