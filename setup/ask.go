package setup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// prompter asks questions on a terminal: the default in brackets, Enter
// takes it. Secrets are read without echo.
type prompter struct {
	in     *bufio.Reader
	out    io.Writer
	hidden func() (string, error) // reads one line without echo
}

// errEOF: the person closed the input (Ctrl-D) in the middle of a question.
var errEOF = errors.New("input closed before the questions were answered (nothing was written)")

func (p *prompter) line() (string, error) {
	s, err := p.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", errEOF
		}
		return "", fmt.Errorf("read answer: %w", err)
	}
	return strings.TrimSpace(s), nil
}

// ask asks q and returns the answer, or def for an empty one.
func (p *prompter) ask(q, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", q, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", q)
	}
	s, err := p.line()
	if err != nil {
		return "", err
	}
	if s == "" {
		return def, nil
	}
	return s, nil
}

// yes asks a yes/no question.
func (p *prompter) yes(q string, def bool) (bool, error) {
	d := "Y/n"
	if !def {
		d = "y/N"
	}
	for {
		fmt.Fprintf(p.out, "%s [%s]: ", q, d)
		s, err := p.line()
		if err != nil {
			return false, err
		}
		switch strings.ToLower(s) {
		case "":
			return def, nil
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
		fmt.Fprintln(p.out, "  please answer y or n")
	}
}

// secret asks for a secret without echoing it.
func (p *prompter) secret(q string) (string, error) {
	fmt.Fprintf(p.out, "%s (not shown): ", q)
	s, err := p.hidden()
	fmt.Fprintln(p.out)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(s), nil
}
