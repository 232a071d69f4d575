// Package cli holds plateau's subcommands, flag handling and exit codes. It is
// the only package that sees process state (arguments, stdio, environment),
// which reaches it as one State value so the CLI runs in-process under test.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes, decided here and nowhere else (README and docs/summary.md
// list them).
const (
	ExitOK        = 0 // done; every SLA held, or the plan states none
	ExitSLAFailed = 1 // done; an SLA (or a --fail-on rule) failed
	ExitError     = 2 // the run or command could not be done, or no request succeeded
	ExitNotHeld   = 3 // the planned load was not applied (invalid), or the run was interrupted
)

// State is the process state the CLI may use.
type State struct {
	Args           []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) (string, bool)
	Exe            string // path of the running binary (to start child processes)
}

// ErrSLAFailed is returned by commands whose work succeeded but whose
// requirements did not hold.
var ErrSLAFailed = errors.New("requirements not met")

// Version is the tool version; set by -ldflags "-X …cli.Version=…" or taken
// from the module build info.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// Interruptible returns a context cancelled by the first SIGINT or SIGTERM,
// which plateau treats as "stop gracefully and write everything". After it,
// a second Ctrl-C (SIGINT) ends plateau at once (default handling), while
// further SIGTERMs are ignored: a generator started by --generators gets
// SIGTERM when its parent dies (Pdeathsig), once per thread of the dying
// parent, and must still write its results.
func Interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		signal.Reset(os.Interrupt)
		for {
			select {
			case <-ch: // a further SIGTERM: already stopping
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}

// Main runs the CLI and returns the exit code.
func Main(ctx context.Context, st State) int {
	if path, ok := st.Getenv("PLATEAU_CPUPROFILE"); ok && path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(st.Stderr, "plateau: PLATEAU_CPUPROFILE: %v\n", err)
			return ExitError
		}
		defer stop()
	}
	root := newRoot(ctx, &st)
	root.SetArgs(st.Args)
	err := root.ExecuteContext(ctx)
	code := exitCodeOf(err)
	if code != ExitOK && code != ExitSLAFailed {
		fmt.Fprintf(st.Stderr, "plateau: %v\n", err)
	}
	return code
}

// exitCodeOf is the exit code of a command's error: the one place where
// "SLA failed" and "tool failed" part.
func exitCodeOf(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrSLAFailed):
		return ExitSLAFailed
	case errors.As(err, new(*notHeldError)):
		return ExitNotHeld
	}
	return ExitError
}

// startCPUProfile writes a CPU profile of the whole command to path, for
// `go tool pprof`: the real binary profiled on the work the performance
// figures measure (docs/performance.md).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// command constructors, one per file; each takes the shared state.
type commandFunc func(st *State) *cobra.Command

func newRoot(ctx context.Context, st *State) *cobra.Command {
	root := &cobra.Command{
		Use:           "plateau",
		Short:         "HTTP load tests that write their own performance report",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.SetIn(st.Stdin)
	for _, c := range commands() {
		root.AddCommand(c(st))
	}
	return root
}

// commands lists the subcommands; plugins are a plain list here rather than
// init() side effects.
func commands() []commandFunc {
	return []commandFunc{newVersionCmd, newRunCmd, newCheckCmd, newReportCmd, newCompareCmd, newImportCmd, newDemoCmd, newMergeCmd, newK8sCmd, newConvertCmd, newExportCmd, newStudyCmd, newDatagenCmd, newCapacityCmd, newHistoryCmd}
}

func newVersionCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plateau version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(st.Stdout, "plateau %s\n", version())
			return err
		},
	}
}
