package manage

import "github.com/vigil-iot/vigil/config"

// Digest is config.Digest of cfg with the checklist in force (InForce: the
// one set from afar while it exists, else heartbeat.checklist): what a
// fleet view compares devices by. A checklist that cannot be read counts
// as empty.
func Digest(cfg *config.Config) string {
	text, err := readChecklist(InForce(cfg))
	if err != nil {
		text = nil
	}
	return config.Digest(cfg, text)
}
