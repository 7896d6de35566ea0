package manage

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
)

// Errors of the management verbs (a refusal of who asked wraps
// alert.ErrNotAllowed; these refusals, like it, are alert.ErrRefused).
var (
	// ErrNotSet is wrapped by an unset of a key the overlay does not hold.
	ErrNotSet = errors.New("not set at run time")
	// ErrRemoteRaise refuses a remote channel's raise of the daily LLM budget.
	ErrRemoteRaise = alert.Refusal("a remote channel may lower the daily LLM budget, not raise it")
	// ErrRemoteModel refuses a remote channel's choice of a model that
	// [manage] models does not list.
	ErrRemoteModel = alert.Refusal("a remote channel may choose only a model of [manage] models, or model or scout_model as configured")
)

// CheckModelSet bounds what the model may set: only heartbeat.interval,
// when heartbeat.model_may lists "interval", within interval_min..max.
func CheckModelSet(cfg *config.Config, key, value string) error {
	hb := cfg.Heartbeat
	if key != "heartbeat.interval" || !slices.Contains(hb.ModelMay, "interval") {
		return fmt.Errorf("%w: the model may not set %s (heartbeat.model_may = %q)", alert.ErrNotAllowed, key, hb.ModelMay)
	}
	var d config.Duration
	if err := d.UnmarshalText([]byte(strings.TrimSpace(value))); err != nil {
		return fmt.Errorf("heartbeat.interval: %w", err)
	}
	if d.Duration < hb.IntervalMin.Duration || d.Duration > hb.IntervalMax.Duration {
		return fmt.Errorf("%w: heartbeat.interval %s is outside heartbeat.interval_min..interval_max (%s..%s)",
			alert.ErrNotAllowed, d.Duration, hb.IntervalMin.Duration, hb.IntervalMax.Duration)
	}
	return nil
}

// CheckRemoteSet bounds what a remote channel may set beyond [manage]
// remote (see the policy in doc.go): heartbeat.max_llm_calls_per_day at
// most the larger of the configured value (base) and the value in force
// (was); llm.model and llm.scout_model only to a name [manage] models
// lists, or to model or scout_model as configured. A value that is no
// integer, or no model name, is left to the validator.
func CheckRemoteSet(base *config.Config, key, value, was string) error {
	switch key {
	case "llm.model", "llm.scout_model":
		return checkRemoteModel(base, key, strings.TrimSpace(value))
	case "heartbeat.max_llm_calls_per_day":
	default:
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(value), 0, 64) // as config reads it: 0x7fffffff too
	if err != nil {
		return nil
	}
	limit, what := int64(base.Heartbeat.MaxLLMCallsPerDay), "the configured value"
	if now, err := strconv.ParseInt(was, 10, 64); err == nil && now > limit {
		limit, what = now, "the value in force"
	}
	if n <= limit {
		return nil
	}
	return fmt.Errorf("%s: %w: at most %d, %s (got %d); raise it on the device with 'vigil set'", key, ErrRemoteRaise, limit, what, n)
}

// Gate refuses a verb that [manage] remote does not list, for a command
// from a remote channel (MQTT, Telegram, the status page). The CLI, the
// control socket and the model are not remote and are not gated here (the
// model's set has its own bounds, CheckModelSet).
func Gate(m config.Manage, verb, channel string) error {
	if m.Allows(verb) {
		return nil
	}
	return fmt.Errorf("%w: %s from %s: [manage] remote does not list %q", alert.ErrNotAllowed, verb, channel, verb)
}

// checkRemoteModel bounds the model a remote channel may choose (a model
// is money): one of [manage] models, or model or scout_model as the base
// (the file and the environment) has them.
func checkRemoteModel(base *config.Config, key, value string) error {
	if config.CheckModelName(value) != nil {
		return nil
	}
	var may []string
	for _, m := range append([]string{base.LLM.Model, base.LLM.ScoutModel}, base.Manage.Models...) {
		if m != "" && !slices.Contains(may, m) {
			may = append(may, m)
		}
	}
	if slices.Contains(may, value) {
		return nil
	}
	q := make([]string, len(may))
	for i, m := range may {
		q[i] = strconv.Quote(m)
	}
	names := "none"
	switch len(q) {
	case 0:
	case 1:
		names = q[0]
	default:
		names = strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	}
	return fmt.Errorf("%s: %w: %s (got %q); add it to [manage] models, or set it on the device with 'vigil set'", key, ErrRemoteModel, names, value)
}
