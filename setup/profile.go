package setup

import (
	"context"
	"fmt"

	"github.com/vigil-iot/vigil/board"
)

// ProfileSurvey names the board and finds no sensor: the survey of a
// board whose buses are not looked at.
type ProfileSurvey struct{ Root string } // "/" on the device

// Survey names the board profile: board when given, else detected.
func (s ProfileSurvey) Survey(_ context.Context, name string, _ []int) (*Survey, error) {
	switch name {
	case "sim":
		return &Survey{Board: "sim", How: "--board sim: every sensor simulated"}, nil
	case "", "auto":
		p, ok := board.Detect(s.Root)
		if !ok {
			return &Survey{Board: "auto", How: "not a known single-board computer: the generic Linux profile"}, nil
		}
		return &Survey{Board: p.Name, How: fmt.Sprintf("detected: %s", board.Model(s.Root))}, nil
	}
	p, ok := board.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("--board %q: unknown board (see 'vigil version --boards')", name)
	}
	return &Survey{Board: p.Name, How: "--board " + name}, nil
}
