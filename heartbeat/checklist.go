package heartbeat

// ChecklistFunc returns the current checklist text and whether it is empty
// (blank, headings or comments only). The daemon's (manage.ChecklistFunc)
// reads the file on every run, so an edited HEARTBEAT.md takes effect
// without a restart.
type ChecklistFunc func() (text string, empty bool, err error)
