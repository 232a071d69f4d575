package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
)

// TestMain lets the test binary act as the plateau binary: child processes
// (demo services, killed runs) re-execute it with PLATEAU_TEST_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("PLATEAU_TEST_MAIN") == "1" {
		exe, _ := os.Executable()
		ctx, stop := Interruptible(context.Background())
		defer stop()
		os.Exit(Main(ctx, State{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout,
			Stderr: os.Stderr, Getenv: os.LookupEnv, Exe: exe}))
	}
	// A run the tests start in-process (runCLI) re-executes its binary for
	// generators, segments and demo services: that binary is this test
	// binary, which must then act as plateau, never run the tests again.
	os.Setenv("PLATEAU_TEST_MAIN", "1")
	os.Exit(m.Run())
}

// plateauCmd returns a command running the test binary as plateau.
func plateauCmd(args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "PLATEAU_TEST_MAIN=1")
	return cmd
}

// runCLI runs the CLI in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	exe, _ := os.Executable()
	code := Main(context.Background(), State{Args: args, Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) {
			if k == "PLATEAU_TEST_TOKEN" {
				return "s3cr3t-token-value", true
			}
			return "", false
		}, Exe: exe})
	return code, out.String(), errb.String()
}
