package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestX(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"jmeter", "../jtl/testdata/jmeter-5.6.3/results.jtl", "-o", filepath.Join(dir, "a")},
		{"-o", filepath.Join(dir, "b"), "--tz", "Europe/Copenhagen", "jmeter:../jtl/testdata/jmeter-5.6.3/semicolon-copenhagen.jtl,workload=x", "vmstat:h1=/tmp/vm.log,start=2019-05-13T11:09:36,interval=10s"},
		{"-o", filepath.Join(dir, "c"), "jmeter:../jtl/testdata/jmeter-5.6.3/semicolon-copenhagen.jtl"},
		{"accesslog", "--format", "combined_rt", "-o", filepath.Join(dir, "d"), "web1=/nonexistent.log"},
	} {
		st := &State{Args: args, Stdout: os.Stdout, Stderr: os.Stderr}
		c := newImportCmd(st)
		c.SetArgs(args)
		err := c.ExecuteContext(context.Background())
		t.Logf("%v → %v", args, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "b", "run.json"))
	t.Log(string(b))
	b, _ = os.ReadFile(filepath.Join(dir, "b", "import.log"))
	t.Log(string(b))
}
