// Package status is the one view of vigil's status: the engine's status,
// the last hour of every reading and what changed at run time, gathered
// once (Gather) and rendered by every surface: the control socket's JSON
// and `vigil status --json` carry a View, `vigil status` and the /status
// of Telegram and MQTT print it as text (WriteStatus, WriteReadings), and
// the status page and /api/status draw it.
//
// It imports neither the daemon nor the page: both, and the command line,
// import it.
package status
