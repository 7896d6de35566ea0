// Package web renders what vigil knows for people: CSV/JSON exports of
// the sensor history (for `vigil history`), and the optional status page —
// one server-rendered HTML page with an SVG chart per reading drawn in
// Go, the alert timeline, the run log and buttons, plus /api/status,
// /api/history, /metrics and /healthz.
//
// The page costs nothing while nobody looks: the package starts no
// goroutine and no timer; everything is computed per request from the
// Source, through the one status view (package status). The engine comes
// in through the small interfaces Source and Controller, defined here.
package web
