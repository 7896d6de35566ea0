package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
)

// DigestLen is the length of Digest's answer in hex digits.
const DigestLen = 12

// Digest names the config in force in DigestLen lowercase hex digits: the
// first ones of the SHA-256 of c's canonical form (WriteTOML: defaults
// applied, the run-time overlay included when c was resolved with it,
// secrets never — only where each comes from) followed by the checklist
// in force. Two devices with the same digest run the same settings and
// the same checklist; a set, an unset, a checklist set or an edited file
// changes it. A comment or a key's order in config.toml does not, and
// neither does device.id: devices configured alike share a digest, so a
// fleet view can tell the odd one out.
func Digest(c *Config, checklist []byte) string {
	same := *c
	same.Device.ID = ""
	var b bytes.Buffer
	_ = same.WriteTOML(&b) // fails only when its writer does, and a bytes.Buffer does not
	b.WriteString("\n# checklist\n")
	b.Write(checklist)
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])[:DigestLen]
}
