package mqtt

import (
	"errors"
	"testing"

	"github.com/vigil-iot/vigil/internal/mosquittotest"
)

// TestTLSConfigSaysWhichPart: TLSConfig's error says by its type which
// part of the TLS material is bad, so a caller names the right file (the
// CA's or the client certificate's) without reading the text.
func TestTLSConfigSaysWhichPart(t *testing.T) {
	p := mosquittotest.NewPKI(t)
	_, err := TLSConfig([]byte("not pem"), p.ClientCert, p.ClientKey)
	if !errors.Is(err, ErrCA) || errors.Is(err, ErrClientCert) {
		t.Errorf("TLSConfig(garbage CA, good client certificate) = %v, want ErrCA only", err)
	}
	_, err = TLSConfig(p.CA, p.ClientCert, p.ServerKey)
	if !errors.Is(err, ErrClientCert) || errors.Is(err, ErrCA) {
		t.Errorf("TLSConfig(good CA, mismatched key) = %v, want ErrClientCert only", err)
	}
}
