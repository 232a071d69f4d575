package report_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/report"
)

var updatePins = flag.Bool("update-pins", false, "rewrite testdata/pins/*.json from the current summary.json of every prose variant")

// pinChanged lists the figures whose pinned value changed on purpose, as
// "variant|path pattern" (path.Match, * for one index; variant * for every
// variant) → why. Every other
// figure of summary.json keeps its value.
var pinChanged = map[string]string{
	"no SLA|capacity.max_load_meeting_sla":                           "without a requirement no load met one (issue 30)",
	"no SLA|capacity.points.*.sla_met":                               "without a requirement there is nothing to meet (issue 30)",
	"import nginx access log|capacity.max_load_meeting_sla":          "without a requirement no load met one (issue 30)",
	"import nginx access log|capacity.points.*.sla_met":              "without a requirement there is nothing to meet (issue 30)",
	"every request fails|validity.phases.*.held":                     "no request succeeded, so no load was held (issue 30)",
	"import Locust with a change of user count|capacity.knee_reason": "a 4-second step of 58 requests is not enough data to judge scaling (issue 30)",
	"*|trends.memory.*.verdict":                                      "a memory trend too thin to judge is not_enough_data, as a thin drift is, where it said unknown (issue 30)",
}

// changedOnPurpose says whether a figure of variant at p is in pinChanged.
func changedOnPurpose(variant, p string) bool {
	for k := range pinChanged {
		v, pat, _ := strings.Cut(k, "|")
		if ok, _ := path.Match(pat, p); ok && (v == variant || v == "*") {
			return true
		}
	}
	return false
}

// TestSummaryFiguresPinned: every figure summary.json held when the pins were
// written (testdata/pins, one file per prose variant, the "report" member of
// prose left out) keeps its value and its field name, so moving computation
// between packages changes no number a user or a script reads. New fields
// may appear; an empty list may turn from null into [] (docs/summary.md
// promises []), nothing else.
func TestSummaryFiguresPinned(t *testing.T) {
	t.Parallel()
	for _, v := range proseVariants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			v.make(t, dir)
			now := func() time.Time { return time.Date(2025, 5, 14, 9, 0, 0, 0, time.UTC) }
			if _, err := report.Write(dir, report.Options{Formats: []string{"json"}, Now: now}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			delete(got, "report") // the words, not the figures
			pin := filepath.Join("testdata", "pins", strings.ReplaceAll(v.name, " ", "-")+".json")
			if *updatePins {
				out, _ := json.MarshalIndent(got, "", " ")
				if err := os.MkdirAll(filepath.Dir(pin), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(pin, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			pb, err := os.ReadFile(pin)
			if err != nil {
				t.Fatalf("%v (go test -run TestSummaryFiguresPinned -update-pins writes it)", err)
			}
			var want map[string]any
			if err := json.Unmarshal(pb, &want); err != nil {
				t.Fatal(err)
			}
			gf, wf := map[string]any{}, map[string]any{}
			flatten("", got, gf)
			flatten("", want, wf)
			var bad []string
			for path, w := range wf {
				if changedOnPurpose(v.name, path) {
					continue
				}
				g, ok := gf[path]
				switch {
				case !ok && w == nil && hasPrefixKey(gf, path):
					// null became a non-empty value below: checked by its leaves
				case !ok:
					bad = append(bad, fmt.Sprintf("%s: gone (was %v)", path, w))
				case w == nil && isEmptyList(g):
					// null → []
				case fmt.Sprint(g) != fmt.Sprint(w):
					bad = append(bad, fmt.Sprintf("%s: %v, pinned %v", path, g, w))
				}
			}
			sort.Strings(bad)
			for _, s := range bad {
				t.Error(s)
			}
		})
	}
}

// flatten maps every leaf of v to its path ("labels.0.p95_ms"); an empty
// list or object is a leaf of its own.
func flatten(prefix string, v any, out map[string]any) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix] = "{}"
		}
		for k, e := range x {
			flatten(join(k), e, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = "[]"
		}
		for i, e := range x {
			flatten(join(fmt.Sprint(i)), e, out)
		}
	default:
		out[prefix] = v
	}
}

func isEmptyList(v any) bool { return v == "[]" }

func hasPrefixKey(m map[string]any, p string) bool {
	for k := range m {
		if strings.HasPrefix(k, p+".") {
			return true
		}
	}
	return false
}
