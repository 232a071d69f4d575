//go:build unix

package plan

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parseWithin loads src and fails the test if that takes longer than d,
// so a feeder that blocks (a FIFO) or never ends (/dev/zero) fails it
// instead of hanging the suite.
func parseWithin(t *testing.T, d time.Duration, src, dir string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Parse("f.yaml", []byte(src), dir, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatalf("loading the plan did not finish in %s", d)
		return nil
	}
}

// Devices and FIFOs are refused by name before a byte is read: /dev/zero
// read 3 GB in 3 s, and a FIFO without a writer hung the check.
func TestFeederRefusesNonRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, key, path, want string }{
		{"dev-zero csv", "csv", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"dev-zero json", "json", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"dev-zero ndjson", "ndjson", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"fifo", "csv", fifo, fifo + " is a named pipe (FIFO), not a regular file"},
		{"directory", "csv", dir, dir + " is a directory, not a regular file"},
	} {
		src := strings.Replace(feederPlan("X", ""), "{csv: X}", "{"+c.key+": "+c.path+"}", 1)
		err := parseWithin(t, 30*time.Second, src, dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f.yaml:4:") {
			t.Errorf("%s: %v, want f.yaml:4:… %s", c.name, err, c.want)
		}
	}
}
