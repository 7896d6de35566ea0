package manage

import (
	"testing"

	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/redact"
)

// TestMinSecretAgrees: config warns about a secret shorter than the
// redactor replaces. config may not import redact, so each holds the
// number; manage, which hands config's secrets to the redactor, holds
// them equal.
func TestMinSecretAgrees(t *testing.T) {
	if config.MinSecret != redact.MinSecret {
		t.Errorf("config.MinSecret = %d, redact.MinSecret = %d; want them equal", config.MinSecret, redact.MinSecret)
	}
}
