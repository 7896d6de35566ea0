package agent

import "testing"

func TestRedact(t *testing.T) {
	secrets := []string{"hunter2-mqtt", "abc", "s3cr3t-http", ""}
	tests := []struct{ in, want string }{
		{"nothing to hide: air 21.4 °C at 14:05", "nothing to hide: air 21.4 °C at 14:05"},
		{"mqtt password is hunter2-mqtt, remember", "mqtt password is [redacted], remember"},
		{"abc is too short to be a secret", "abc is too short to be a secret"},
		{"login s3cr3t-http", "login [redacted]"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "Authorization: Bearer [redacted]"},
		{"key sk-proj-AbCdEf0123456789xyz works", "key [redacted] works"},
		{"anthropic sk-ant-api03-AbCdEf0123456789_-xyz", "anthropic [redacted]"},
		{"bot 123456789:AAHk-2jD7s9d8f7g6h5j4k3l2m1n0b9v8c7x ok", "bot [redacted] ok"},
		{"url ?password=hunter3&x=1", "url ?password=[redacted]&x=1"},
		{`{"token":"abcdef123"}`, `{"token":"[redacted]"}`},
		{"TOKEN: zzz999 and api_key=k-123", "TOKEN: [redacted] and api_key=[redacted]"},
		{"tokens: 1234 used", "tokens: 1234 used"},
		{"at 12:30 the door opened", "at 12:30 the door opened"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in, secrets...); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
