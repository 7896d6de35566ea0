package daemon

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// ExitWatchdog is the exit status after a watchdog stop: a failure, so
// Restart=on-failure starts vigil again (systemd records the result as
// "watchdog" either way).
const ExitWatchdog = 1

// onWatchdogAbort turns systemd's watchdog stop into one log line. When
// WatchdogSec passes without a ping, systemd sends SIGABRT, on which the Go
// runtime would dump every goroutine's stack (hundreds of journal lines)
// and exit 2. Instead vigil logs what happened and when the sample loop
// last made progress, and exits with ExitWatchdog; the state file needs no
// clean close (every bbolt commit is durable). It is armed only under a
// watchdog (interval > 0): elsewhere SIGABRT keeps Go's stack dump, which
// is what a person sending it by hand wants. stop disarms it and waits
// for its goroutine.
func onWatchdogAbort(log *slog.Logger, interval time.Duration, lastProgress, now func() time.Time, exit func(int)) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGABRT)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-ch:
		case <-done:
			return
		}
		last := "never"
		if t := lastProgress(); !t.IsZero() {
			last = t.Format(time.RFC3339) + " (" + now().Sub(t).Round(time.Second).String() + " ago)"
		}
		log.Error("watchdog: systemd stopped vigil after WatchdogSec without a ping; last progress at "+last,
			"watchdog", interval)
		exit(ExitWatchdog)
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		<-exited
	}
}
