// Package setup is `vigil init`: the wizard that takes a board from a fresh
// install to its first alert. It surveys the board (a Surveyor), proposes
// sensors and starter rules, checks each alert channel once (Channels),
// writes the secrets to the credential store and config.toml next to them
// (never a secret in config.toml), validates the result as `vigil config
// check` does before anything is written, restarts the unit and sends a
// test alert.
//
// It asks on a terminal and takes every answer from flags and VIGIL_INIT_*
// variables with --yes; the two give the same file for the same answers.
package setup
