package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestSaysOnlyWhatTheDataHold: each kind of run records where its data came
// from, and its report states nothing the data do not hold — no planned
// load or intended start for an import, no generator environment for an
// import, no held load or sustained throughput when every request failed.
func TestSaysOnlyWhatTheDataHold(t *testing.T) {
	t.Parallel()
	want := map[string]rundir.SourceKind{
		"stepped with monitors":                  rundir.SourceLive,
		"every request fails":                    rundir.SourceLive,
		"import JMeter JTL":                      rundir.SourceJMeter,
		"import k6 JSON":                         rundir.SourceK6,
		"import k6 JSON with its summary export": rundir.SourceK6,
		"import nginx access log":                rundir.SourceAccessLog,
		"import access log without durations":    rundir.SourceAccessLog,
		"import Locust CSV":                      rundir.SourceLocust,
		"vmstat alone":                           rundir.SourceSystem,
	}
	for _, v := range proseVariants() {
		kind, ok := want[v.name]
		if !ok {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			v.make(t, dir)
			info, err := rundir.ReadInfo(dir)
			if err != nil {
				t.Fatal(err)
			}
			k, h := info.Origin()
			if k != kind {
				t.Errorf("source kind %q, want %q", k, kind)
			}
			now := func() time.Time { return time.Date(2025, 5, 14, 9, 0, 0, 0, time.UTC) }
			if _, err := report.Write(dir, report.Options{Formats: []string{"md"}, Now: now}); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "report.md"))
			md := string(b)
			if kind.Imported() {
				for _, s := range []string{"planned against achieved", "from intended start", "Environment (load generator)"} {
					if strings.Contains(md, s) {
						t.Errorf("an import (%s) says %q", kind, s)
					}
				}
				if h.PlannedLoad || h.COCorrection || h.GeneratorEnv {
					t.Errorf("an import holds %+v", h)
				}
			}
			if v.name == "import access log without durations" && h.Durations {
				t.Error("an access log without a time field records durations")
			}
			if v.name == "every request fails" {
				if strings.Contains(md, "✅ yes |") || strings.Contains(md, "req/s sustained") {
					t.Error("a run where every request failed says the load was held or sustained")
				}
			}
		})
	}
}
