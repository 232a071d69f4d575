package k8s

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/plan"
)

// DataFiles reads the plan's CSV feeders from disk for the ConfigMap. A file
// below the plan's directory keeps its relative path, so the plan runs
// unchanged; any other (absolute, or up through "..") is placed at
// data/<feeder>.csv and an override pointing the feeder there is returned.
func DataFiles(p *plan.Plan) ([]File, []string, error) {
	names := make([]string, 0, len(p.Data))
	for n := range p.Data {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []File
	var sets []string
	seen := map[string]bool{}
	for _, n := range names {
		f := p.Data[n]
		src := f.CSV
		if !filepath.IsAbs(src) {
			src = filepath.Join(p.Dir, src)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, nil, fmt.Errorf("data %s: %w", n, err)
		}
		rel := filepath.ToSlash(filepath.Clean(f.CSV))
		if filepath.IsAbs(f.CSV) || rel == ".." || strings.HasPrefix(rel, "../") || rel == PlanKey {
			rel = path.Join("data", n+".csv")
			sets = append(sets, fmt.Sprintf("data.%s.csv=%s", n, rel))
		}
		if seen[rel] {
			continue // two feeders reading one file
		}
		seen[rel] = true
		files = append(files, File{Path: rel, Data: b})
	}
	return files, sets, nil
}

// Duration is how long the plan's load lasts at most: the longest workload,
// start_after included. ok is false when a workload runs a number of
// iterations, whose duration nobody knows in advance.
func Duration(p *plan.Plan) (d time.Duration, ok bool) {
	ok = true
	for _, w := range p.Workloads {
		l := &w.Load
		var wd time.Duration
		switch {
		case len(l.Steps) > 0:
			for _, s := range l.Steps {
				wd += s.Duration
			}
		case len(l.Stages) > 0:
			for _, s := range l.Stages {
				wd += s.Duration
			}
		case l.Iterations > 0 && l.Duration == 0:
			ok = false
		default:
			wd = l.Duration // ramp-up is inside the duration
		}
		d = max(d, l.StartAfter+wd)
	}
	return d, ok
}

var envRef = regexp.MustCompile(`\$\{env\.([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// EnvRefs lists the environment variables the plan file reads through
// ${env.NAME}: the pods need them too (see Options.EnvFromSecrets).
func EnvRefs(src []byte) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range envRef.FindAllSubmatch(src, -1) {
		if n := string(m[1]); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// JobName derives a Job name from a plan name: "plateau-" and the name in
// lowercase letters, digits and dashes, cut to fit.
func JobName(planName string) string {
	s := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(planName), "-"), "-")
	if s == "" {
		s = "run"
	}
	s = "plateau-" + s
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	return s
}
