package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PLATEAU_CPUPROFILE writes a gzip-compressed pprof profile of the command
// (in a child process: the CPU profiler is one per process).
func TestCPUProfileWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	cmd := plateauCmd("version")
	cmd.Env = append(cmd.Env, "PLATEAU_CPUPROFILE="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plateau version: %v\n%s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("profile is not gzip (pprof's format): %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil || len(b) == 0 {
		t.Fatalf("profile unreadable or empty: %d bytes, %v", len(b), err)
	}
}

func TestCPUProfileUnwritable(t *testing.T) {
	var errb bytes.Buffer
	path := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	code := Main(context.Background(), State{Args: []string{"version"}, Stdin: bytes.NewReader(nil), Stdout: io.Discard, Stderr: &errb,
		Getenv: func(k string) (string, bool) {
			if k == "PLATEAU_CPUPROFILE" {
				return path, true
			}
			return "", false
		}})
	if code != ExitError || !strings.Contains(errb.String(), "PLATEAU_CPUPROFILE") || !strings.Contains(errb.String(), path) {
		t.Fatalf("code %d, stderr %q: want exit 2 naming the variable and the path", code, errb.String())
	}
}
