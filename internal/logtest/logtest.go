// Package logtest holds a log sink that a test shares with the goroutines
// whose log it reads. It is test support only: nothing outside _test.go
// files imports it.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer collects log output; Write and String may be called from any
// goroutine. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logger returns a text logger at level writing into s.
func (s *Buffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: level}))
}
