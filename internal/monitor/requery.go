package monitor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// RequerySpecs reads again what a remote monitor kind keeps after the run
// (plateau report --requery): every <stem><suffix> spec file in the run's
// monitor directory, in name order, decoded into a new T and handed with
// the directory to query, which returns one line for the user. Errors are
// collected per file; a run without such files is ErrNothingToRequery.
func RequerySpecs[T any](runDir, suffix string, query func(dir string, sf *T) (string, error)) ([]string, error) {
	dir := filepath.Join(runDir, SubDir)
	files, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		return nil, fmt.Errorf("listing query specs: %w", err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, ErrNothingToRequery
	}
	var out []string
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("requery: %w", err))
			continue
		}
		sf := new(T)
		if err := json.Unmarshal(b, sf); err != nil {
			errs = append(errs, fmt.Errorf("requery: %s: %w", filepath.Base(f), err))
			continue
		}
		line, err := query(dir, sf)
		if err != nil {
			errs = append(errs, fmt.Errorf("requery %w", err))
			continue
		}
		out = append(out, line)
	}
	return out, errors.Join(errs...)
}
