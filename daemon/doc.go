// Package daemon is the running vigil: an App owns the heartbeat engine
// and everything around it while `vigil run` lives, and serves the CLI
// working on the state file when no daemon runs. Package main reads the
// files, flags and environment, wires the concrete parts (sensors, the
// LLM, the transports) and hands them over as a Wiring, a struct of
// constructors; the App calls them at start and again when a reload
// changes their section.
//
// Reading the code, top-down:
//   - app.go: New (open the state file, apply the stored run-time
//     settings, wire the engine), Run (the engine's loops, the control
//     socket, the status page, the transports, reloads, the systemd
//     watchdog and the memory trims under one errgroup) and Close, which
//     waits for every goroutine the App started.
//   - commands.go: Commander, what MQTT, Telegram, the control socket, the
//     page and the CLI may ask; the one place that bounds, gates and
//     audits a command. change.go: the one path every change takes (gate,
//     rate, check, store, apply, audit), from every channel and from the
//     CLI on the state file. settings.go: set, unset, the checklist from afar,
//     logs and notes, validated once against the base the daemon runs on
//     (package manage) and stored before they apply.
//   - reload.go: a reload (SIGHUP) and the apply that puts a validated
//     config into the running daemon, touching only what changed
//     (liveTransport swaps a transport under the engine).
//   - control.go: the control socket's server. Its protocol (one JSON
//     line each way, the codes an error crosses it with, the client) is
//     package control's; Commander.Do answers a request's text verbs, for
//     the socket and for the CLI on the state file. status.go: App.Status,
//     the status view (package status, which the page gathers too) that
//     the socket and Telegram's and MQTT's /status show. view.go: the
//     other text answers.
//   - web.go: the status page's listener; engine.go: the config turned
//     into the engine's settings; store.go: how each command opens the
//     state file.
//
// Time comes from the Clock and Wall in Options, so tests can hold it.
package daemon
