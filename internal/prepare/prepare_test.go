package prepare

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/secret"
)

func cmd(name, shell string) plan.Command {
	return plan.Command{Name: name, Shell: shell, Timeout: time.Minute}
}

// The log masks a secret even when a line is longer than the line buffer
// and the secret straddles the cut, and keeps the last lines.
func TestLogMasksLongLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const tok = "tok-0123456789abcdef"
	mask := secret.NewValues(tok).String
	// A line of maxLine-5 'a's, then the token (cut by the piece edge),
	// then a newline and a short line with the token.
	script := "head -c " + strconv.Itoa(maxLine-5) + " /dev/zero | tr '\\0' a; printf '" + tok + "\\nend " + tok + "\\n'"
	res, err := Prepare(context.Background(), []plan.Command{cmd("long", script)}, Options{RunDir: dir, Mask: mask})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, res[0].Log))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "tok-01234") || strings.Contains(string(b), "89abcdef") {
		t.Errorf("the token (or a cut piece of it at least %d bytes long) is in the log", secret.MinEdge)
	}
	if res[0].OutputBytes != int64(maxLine-5+len(tok)+1+4+len(tok)+1) {
		t.Errorf("output_bytes %d", res[0].OutputBytes)
	}
	if n := len(res[0].Tail); n == 0 || res[0].Tail[n-1] != "end ***" {
		t.Errorf("tail %q", res[0].Tail)
	}
}

// Output beyond the limit is counted, not kept.
func TestLogLimit(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "x.log"))
	if err != nil {
		t.Fatal(err)
	}
	lw := newLogWriter(f, func(s string) string { return s }, 100)
	for i := 0; i < 50; i++ {
		lw.Write([]byte("0123456789\n"))
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.Name())
	if lw.total != 550 || len(b) > 200 || !strings.Contains(string(b), "output cut here") {
		t.Errorf("total %d, kept %d bytes:\n%s", lw.total, len(b), b)
	}
}

// A program that does not exist fails with the reason; an interrupted
// context ends a command as interrupted, not as a timeout.
func TestStartFailureAndInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := Prepare(context.Background(), []plan.Command{{Name: "missing", Args: []string{"no-such-program-xyz"}, Timeout: time.Minute}, cmd("after", "true")},
		Options{RunDir: dir})
	if err == nil || res[0].Status != rundir.CommandFailed || !strings.Contains(res[0].Error, "no-such-program-xyz") ||
		res[1].Status != rundir.CommandSkipped {
		t.Errorf("err %v, results %+v", err, res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	start := time.Now()
	res, _ = Cleanup(ctx, []plan.Command{cmd("sleeper", "sleep 20 & sleep 20; wait")}, Options{RunDir: dir, KillGrace: time.Second})
	if res[0].Status != rundir.CommandInterrupted || time.Since(start) > 10*time.Second {
		t.Errorf("status %q after %v", res[0].Status, time.Since(start))
	}
}

// Cleanup runs every command whatever the earlier ones did.
func TestCleanupRunsAll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := cmd("b", "echo b > b.txt")
	b.Dir = dir
	res, err := Cleanup(context.Background(), []plan.Command{cmd("a", "exit 1"), b},
		Options{RunDir: dir})
	if err == nil || len(res) != 2 || res[0].ExitCode != 1 || res[1].Status != rundir.CommandOK {
		t.Errorf("err %v results %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err != nil {
		t.Errorf("the second cleanup command did not run in its dir: %v", err)
	}
}
