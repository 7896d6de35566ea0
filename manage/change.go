package manage

import (
	"fmt"

	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/store"
)

// Who is who asks for a change, as the policy (doc.go) sees it. The
// daemon tells it from the channel that sent the command
// (transport.Source.Remote).
type Who int

const (
	// Local is the CLI and the control socket (local root): every verb,
	// every value the validator takes.
	Local Who = iota
	// Remote is MQTT, Telegram and the status page: the verbs [manage]
	// remote lists (Gate), within CheckRemoteSet's bounds.
	Remote
	// Model is the model's own tool: heartbeat.model_may and its bounds
	// (CheckModelSet).
	Model
)

// A Set is one change of a run-time setting.
type Set struct {
	Key string
	// Value is the new value, computed from the one before (toggle flips
	// what is stored, not what is in force, so two toggles cancel out).
	Value func(was string) string
	Who   Who
	By    string    // who asked, as the audit names them ("mqtt vigil/d/cmd/set")
	At    time.Time // when, as stored
}

// To is a Set's Value for a value given as it stands.
func To(value string) func(string) string { return func(string) string { return value } }

// Checked is a Set that passed Check: the entry to store, the key's value
// before it, and the config with it.
type Checked struct {
	Setting store.Setting
	Was     string
	Config  *config.Config
}

// Check is the one validation of a set, whichever channel asks and
// whether a daemon runs or not: the key must be settable; the model only
// within CheckModelSet, checked against inForce (heartbeat.model_may and
// its bounds are file keys); a remote channel only within CheckRemoteSet,
// checked against the base without the overlay; and the config with the
// value over stored (the overlay kept in the state file) must validate,
// with the validator's messages. latest is the config with stored: the
// value before the change is its, which a change still being applied may
// not have put in force yet. Check changes nothing; the caller stores
// what it returns.
func (b *Base) Check(s Set, latest, inForce *config.Config, stored []store.Setting) (Checked, error) {
	if err := config.CheckSettable(s.Key, latest); err != nil {
		return Checked{}, err
	}
	was, _ := latest.Get(s.Key)
	v := s.Value(was)
	switch s.Who {
	case Model:
		if err := CheckModelSet(inForce, s.Key, v); err != nil {
			return Checked{}, err
		}
	case Remote:
		configured, err := b.Configured()
		if err != nil {
			return Checked{}, err
		}
		if err := CheckRemoteSet(configured, s.Key, v, was); err != nil {
			return Checked{}, err
		}
	}
	e := store.Setting{Key: s.Key, Value: v, By: s.By, At: s.At}
	cfg, err := b.With(stored, e)
	if err != nil {
		return Checked{}, err
	}
	return Checked{Setting: e, Was: was, Config: cfg}, nil
}

// CheckUnset is the one check of an unset beyond [manage] remote (Gate):
// the model may not unset.
func CheckUnset(who Who, key string) error {
	if who == Model {
		return fmt.Errorf("%w: the model may not unset %s", alert.ErrNotAllowed, key)
	}
	return nil
}
