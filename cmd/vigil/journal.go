package main

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// toJournal reports whether w is the journal's stream: systemd sets
// $JOURNAL_STREAM to "DEV:INODE" of the stream it connected to stderr, and a
// stderr redirected elsewhere (`vigil run 2>log` in a unit) has another.
func toJournal(w io.Writer) bool {
	js := os.Getenv("JOURNAL_STREAM")
	f, ok := w.(*os.File)
	if js == "" || !ok {
		return false
	}
	ds, is, ok := strings.Cut(js, ":")
	if !ok {
		return false
	}
	dev, err1 := strconv.ParseUint(ds, 10, 64)
	ino, err2 := strconv.ParseUint(is, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	d, i, err := devIno(f)
	return err == nil && d == dev && i == ino
}
