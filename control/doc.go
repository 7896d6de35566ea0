// Package control is the control socket's protocol: the request and the
// answer (one JSON line each way), the codes an error crosses it with, and
// the Client the command line asks a running daemon with. The daemon
// serves it; the CLI's client verbs (status, get, set, ack, pause, ...)
// need nothing of the daemon but this package.
//
// It imports neither the daemon nor the status page.
package control
