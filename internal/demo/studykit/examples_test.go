package studykit_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/plateau-perf/plateau/internal/demo/study001"
	"github.com/plateau-perf/plateau/internal/demo/study002"
	"github.com/plateau-perf/plateau/internal/demo/study003"
	"github.com/plateau-perf/plateau/internal/demo/study004"
)

// The study demos run the examples' plans as they are: the embedded copies
// must equal the files in examples/.
func TestDemoPlansMatchExamples(t *testing.T) {
	for path, b := range map[string][]byte{
		"../../../examples/folio-circulation/plan.yaml":    study001.PlanYAML,
		"../../../examples/concurrency-sweep/plan.yaml":    study003.PlanYAML,
		"../../../examples/concurrency-sweep/ids.csv":      study003.IDsCSV,
		"../../../examples/concurrent-workloads/plan.yaml": study004.PlanYAML,
		"../../../examples/school-data/school.yaml":        study002.SchoolYAML,
	} {
		ex, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ex, b) {
			t.Errorf("%s differs from the demo's embedded copy: copy one over the other", path)
		}
	}
}
