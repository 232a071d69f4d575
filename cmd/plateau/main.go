// Command plateau runs HTTP load tests, watches the system under test and
// writes the performance report. See README.md and docs/.
package main

import (
	"context"
	"os"

	"github.com/plateau-perf/plateau/internal/cli"
)

func main() {
	ctx, stop := cli.Interruptible(context.Background())
	code := cli.Main(ctx, cli.State{
		Args:   os.Args[1:],
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.LookupEnv,
		Exe:    executable(),
	})
	stop()
	os.Exit(code)
}

func executable() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}
