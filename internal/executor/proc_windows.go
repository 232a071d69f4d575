//go:build windows

package executor

import (
	"os/exec"
	"time"
)

// On Windows there is no SIGINT to send to another process: the tool is
// killed at once (its results so far are read as usual).
func ownGroup(cmd *exec.Cmd) {}

func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// SelfCPU is not measured on Windows.
func SelfCPU() (time.Duration, bool) { return 0, false }
