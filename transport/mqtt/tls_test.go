package mqtt

import (
	"errors"
	"testing"
)

// TestTLSConfigSaysWhichPart: TLSConfig's error says by its type which
// part of the TLS material is bad, so a caller names the right file (the
// CA's or the client certificate's) without reading the text.
func TestTLSConfigSaysWhichPart(t *testing.T) {
	p := newTestPKI(t)
	_, err := TLSConfig([]byte("not pem"), p.clientCert, p.clientKey)
	if !errors.Is(err, ErrCA) || errors.Is(err, ErrClientCert) {
		t.Errorf("TLSConfig(garbage CA, good client certificate) = %v, want ErrCA only", err)
	}
	_, err = TLSConfig(p.ca, p.clientCert, p.serverKey)
	if !errors.Is(err, ErrClientCert) || errors.Is(err, ErrCA) {
		t.Errorf("TLSConfig(good CA, mismatched key) = %v, want ErrClientCert only", err)
	}
}
