package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestAssignPhasesBytes checks that rewriting the "ph" values as bytes
// gives exactly what decoding and encoding every record gives, for records
// with escaped workload names and messages, users and dropped records, and
// a line longer than the reader's buffer.
func TestAssignPhasesBytes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "src")
	w, err := rundir.Create(src, &rundir.Info{Tool: "plateau"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	t0 := int64(1700000000)
	recs := []rundir.IntervalRecord{
		{T: t0, Workload: "jmeter", Phase: -1, Label: "home", Count: 3, SumUs: 9, Hist: "HISTFAAAA"},
		{T: t0, Phase: -1, Users: map[string]int{"jmeter": 5}},
		{T: t0 + 1, Workload: `w"e\ird <&>`, Phase: -1, Label: `GET /a,"b" <x>`, Tx: true, Count: 1,
			Errs: []rundir.ErrRecord{{Class: "http_5xx", Status: 500, Message: "ph\":-1, \"users\": ünïcode \x01"}}},
		{T: t0 + 2, Phase: -1, Dropped: map[string]int64{"jmeter": 2}},
		{T: t0 + 40, Workload: "jmeter", Phase: -1, Label: strings.Repeat("long label ", 40000), Count: 1},
		{T: t0 + 70, Phase: -1, Label: "no workload", Count: 2},
		{T: -3, Workload: "jmeter", Phase: 7, Label: "before 1970", Count: 1},
	}
	for i := range recs {
		if err := w.WriteRecord(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, rundir.IntervalsFile))
	if err != nil {
		t.Fatal(err)
	}
	phases := []core.Phase{{Name: "a", Start: time.Unix(t0, 0), End: time.Unix(t0+30, 0)},
		{Name: "b", Start: time.Unix(t0+30, 0), End: time.Unix(t0+60, 0)}}
	var out [2][]byte
	for i, f := range []func(string, []core.Phase) error{assignPhases, assignPhasesJSON} {
		dir := filepath.Join(base, []string{"bytes", "json"}[i])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.IntervalsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f(dir, phases); err != nil {
			t.Fatal(err)
		}
		if out[i], err = os.ReadFile(filepath.Join(dir, rundir.IntervalsFile)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("byte rewrite differs from decode and encode:\n%.2000s\n---\n%.2000s", out[0], out[1])
	}
	if bytes.Equal(out[0], data) || !bytes.Contains(out[0], []byte(`"ph":1,"label":"long label`)) {
		t.Errorf("no phase assigned:\n%.1000s", out[0])
	}
}
