package report

import "github.com/plateau-perf/plateau/internal/analysis"

// load reads a run for the package's own tests as Write does, without a
// baseline.
func load(dir string, opt Options) (*input, error) {
	run, err := analysis.Open(dir)
	if err != nil {
		return nil, err
	}
	return prepare(run, nil, nil, opt), nil
}
