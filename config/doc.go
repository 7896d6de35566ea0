// Package config parses and validates vigil's config.toml (SPEC §3). It does
// no IO beyond reading an io.Reader: cmd/vigil opens the file and resolves
// secrets by passing its own getenv and readFile functions.
//
// Parse is strict: unknown keys, wrong types and invalid values are all
// reported at once as *Error values naming the file, line and key
// ("config.toml:12: heartbeat.interval: must be at least 1m (got "30s")").
// Sensors and rules are named by their name ("sensor.air.address") or, when
// the name itself is wrong, by their index ("sensor[0].name").
//
// The package also reads the heartbeat checklist (ParseChecklist) and
// provides the template written when it is missing (ChecklistTemplate).
//
// Reading the code: Parse and ParseWith (parse.go) decode the TOML and
// report type errors by key and line; validate.go checks every value
// (durations with units, addresses, rule expressions, which it compiles
// once: RuleSpec hands them out); override.go applies VIGIL_<SECTION>_<KEY>
// and the run-time overlay on top and says where each value came from
// (Origin); secret.go resolves the *_env and *_file secrets; warn.go
// lists setups that run but are unsafe; calibrate.go reads a sensor's
// calibration; write.go writes the resolved config back as TOML (`vigil
// config check`).
package config
