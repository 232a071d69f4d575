package cli

import "io"

type State struct {
	Args           []string
	Stdout, Stderr io.Writer
}

func version() string { return "x" }
