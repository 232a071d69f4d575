// Package importertest holds what the importers' tests share: importing
// sources into a fresh run directory and loading it as the report would.
package importertest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
)

// Import imports the sources, in order, into a new run directory (opt.Dir,
// or a temporary one) and loads it with analysis.Load. An import error is
// returned (the test may expect one); any other failure stops the test.
func Import(t testing.TB, opt importer.Options, sources ...importer.Source) (*analysis.Dataset, error) {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = filepath.Join(t.TempDir(), "run")
	}
	run, err := importer.NewRun(opt)
	if err != nil {
		t.Fatal(err)
	}
	var ierr error
	for _, s := range sources {
		if ierr = s.Import(context.Background(), run); ierr != nil {
			break
		}
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		return nil, ierr
	}
	d, err := analysis.Load(opt.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return d, nil
}
