package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/rundir"
)

func badRun(t testing.TB, jtl string) string {
	dir := t.TempDir()
	if err := rundir.WriteInfo(dir, &rundir.Info{Tool: "plateau", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, rundir.IntervalsFile), nil, 0o644)
	os.WriteFile(filepath.Join(dir, rundir.SamplesFile), []byte(jtl), 0o644)
	return dir
}

// TestBadSampleLine names file and line of a malformed sample.
func TestBadSampleLine(t *testing.T) {
	dir := badRun(t, rundir.JTLHeader+"1000,5,a,200,OK,u,text,true,,1,1,1,1,http://x,1,0,0,5\n1000,five,a,200,OK,u,text,true,,1,1,1,1,http://x,1,0,0,5\n")
	_, err := Run(dir, t.TempDir(), CSV)
	if err == nil || !strings.Contains(err.Error(), "samples.jtl:3") || !strings.Contains(err.Error(), "elapsed") {
		t.Fatalf("err = %v, want samples.jtl:3 and the column", err)
	}
}

// FuzzExportSamples: any sample log is exported or refused with an error,
// never a panic.
func FuzzExportSamples(f *testing.F) {
	f.Add(rundir.JTLHeader + "1000,5,a,200,OK,u,text,true,,1,1,1,1,http://x,1,0,0,5\n")
	f.Add("timeStamp,elapsed,label,success\n1,2,\"a\nb\",true\n1,2")
	f.Add("")
	f.Fuzz(func(t *testing.T, jtl string) {
		dir := badRun(t, jtl)
		_, _ = Run(dir, filepath.Join(dir, "out"), Parquet)
	})
}
