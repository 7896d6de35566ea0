package manage

import (
	"github.com/vigil-iot/vigil/config"
)

// SettingView is one line of `vigil get`.
type SettingView struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// SettingViews lists key (all settable keys when empty) with its effective
// value and origin.
func SettingViews(cfg *config.Config, key string) ([]SettingView, error) {
	keys := cfg.SettableKeys()
	if key != "" {
		if err := config.CheckSettable(key, cfg); err != nil {
			return nil, err
		}
		keys = []string{key}
	}
	out := make([]SettingView, 0, len(keys))
	for _, k := range keys {
		v, err := cfg.Get(k)
		if err != nil {
			return nil, err
		}
		out = append(out, SettingView{Key: k, Value: v, Origin: OriginText(cfg, k)})
	}
	return out, nil
}

// OriginText is a key's origin with the file's name as the person wrote it
// (config.toml:12).
func OriginText(cfg *config.Config, key string) string {
	return cfg.Origin(key).String()
}

// ShowSetting shows an empty value as "" so that "set to" never ends in
// nothing.
func ShowSetting(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
