package config

// This file decides which setups vigil runs with but warns about: each one
// sends a secret in clear text over the network, leaves a secret too short
// to redact, or lets more people command the device than its owner may
// think. They are not errors, since a trusted network or a broker's own
// rules may make them safe (and a short secret is still a secret); they
// are said once at `vigil run` start and by `vigil config check`.

import (
	"fmt"
	"net"
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
	key, urls := "mqtt.broker", m.BrokerURLs()
	if len(m.Brokers) > 0 {
		key = "mqtt.brokers"
	}
	var clear, scheme []string // the hosts reached without TLS off this machine, and how
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || raw == "" {
			continue
		}
		if !tlsScheme(u.Scheme) && !LoopbackHost(u.Hostname()) {
			clear = append(clear, u.Hostname())
			if !slices.Contains(scheme, u.Scheme+"://") {
				scheme = append(scheme, u.Scheme+"://")
			}
		}
	}
	if c.MQTTEnabled() {
		if len(clear) > 0 && m.Password.value != "" {
			warn(key, "sends the MQTT password in clear text to %s (%s, not TLS): use ssl://, mqtts:// or wss://", strings.Join(clear, ", "), strings.Join(scheme, ", "))
		}
		if m.Commands {
			var how, fix []string
			if len(clear) > 0 {
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
				what := "the broker " + urls[0] + " is"
				if len(urls) > 1 {
					what = "the brokers " + strings.Join(urls, ", ") + " are"
				}
				warn("mqtt.commands", "is on, but %s reached %s: anyone who can publish to %s/%s/cmd/# may command this device (pause it, change its settings); %s",
					what, strings.Join(how, " and "), m.TopicPrefix, id, strings.Join(fix, ", and "))
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
	if h := c.HTTP; h.Password.value != "" {
		// The page serves plain HTTP only; validate refuses a listen
		// address that is not host:port.
		if host, _, err := net.SplitHostPort(h.Listen); err == nil && !LoopbackHost(host) {
			warn("http.listen", "serves the status page on %s, reachable from the network, over plain HTTP: basic auth sends the page's password in clear text with every request; listen on 127.0.0.1 and reach the page through an ssh tunnel or a TLS reverse proxy", h.Listen)
		}
	}
	for _, k := range c.secretKeys() {
		if v := k.dst.value; v != "" && len(v) < MinSecret {
			key := k.section + "." + k.stem + "_env"
			if k.file != "" {
				key = k.section + "." + k.stem + "_file"
			}
			warn(key, "the secret in %s is shorter than %d bytes: vigil does not redact it from what it keeps and shows (notes, alerts, logs); give it at least %d characters", k.dst.from, MinSecret, MinSecret)
		}
	}
	return out
}

// MinSecret is the length in bytes of the shortest secret vigil redacts.
// It is redact.MinSecret, which config may not import (manage's
// TestMinSecretAgrees holds them equal).
const MinSecret = 8

// plainRemote returns the host of an http:// URL that leaves this machine.
func plainRemote(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || LoopbackHost(u.Hostname()) {
		return "", false
	}
	return u.Hostname(), true
}
