package heartbeat

import "time"

// commandRing is how many accepted remote commands `vigil status` lists.
// The list lives in memory only: it is an audit aid for a running daemon,
// and writing it to flash would cost a commit per command.
const commandRing = 8

// Command is an accepted remote command, as `vigil status` lists it.
type Command struct {
	Time    time.Time `json:"time"`
	Source  string    `json:"source"`  // "mqtt vigil/dev/cmd/check", "telegram chat 1 user 2", "socket", "cli"
	Command string    `json:"command"` // "check", "pause 30m0s", "resume"
}

// NoteCommand adds an accepted command to the bounded list `vigil status`
// shows, stamped with the wall clock.
func (e *Engine) NoteCommand(source, command string) {
	c := Command{Time: e.deps.Wall().UTC().Round(time.Second), Source: source, Command: command}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.commands) == commandRing {
		copy(e.commands, e.commands[1:])
		e.commands = e.commands[:commandRing-1]
	}
	e.commands = append(e.commands, c)
}
