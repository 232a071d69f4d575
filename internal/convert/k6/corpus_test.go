package k6

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

var httpCallRe = regexp.MustCompile(`\bhttp\.(get|post|put|patch|del|head|options|request)\(`)

// Every script of the k6 testdata converts into a plan that loads, and
// every http call of the script (and of the modules it imports) is either
// a request of the plan or named in the report — none is lost. A function
// called from several scenarios is counted once per call site.
func TestCorpusAccountsForEveryRequest(t *testing.T) {
	root := filepath.Join("..", "wiretest", "testdata", "k6")
	var scripts []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".js") && !strings.Contains(p, string(filepath.Separator)+"lib"+string(filepath.Separator)) && !strings.HasSuffix(p, "k6-summary.js") {
			scripts = append(scripts, p)
		}
		return nil
	})
	if len(scripts) < 8 {
		t.Fatalf("found %d scripts", len(scripts))
	}
	for _, path := range scripts {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(path, src)
			if err != nil {
				t.Fatal(err)
			}
			p, rep := Convert(s, Options{Source: path})
			if _, err := convert.Verify(p, "plan.yaml", filepath.Dir(path)); err != nil {
				t.Fatalf("plan does not load: %v", err)
			}
			// Call sites in the files the conversion read.
			sites := map[string]bool{}
			for _, it := range rep.Items {
				if strings.HasPrefix(it.Type, "http.") && it.Type != "http.batch" {
					sites[it.Path] = true
				}
			}
			want := 0
			files := []string{path}
			for _, m := range s.Imports {
				if strings.HasPrefix(m.Module, "./") {
					files = append(files, filepath.Join(filepath.Dir(path), m.Module))
				}
			}
			seen := map[string]bool{}
			for _, f := range files {
				if seen[f] {
					continue
				}
				seen[f] = true
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(string(b), "\n") {
					if l := strings.TrimSpace(line); !strings.HasPrefix(l, "//") && !strings.HasPrefix(l, "*") {
						want += len(httpCallRe.FindAllString(line, -1))
					}
				}
			}
			if len(sites) != want {
				t.Errorf("%d http calls in the source, %d accounted for in the report: %v", want, len(sites), sites)
			}
			t.Logf("%s: %d http calls, %d report items, %d requirements", filepath.Base(path), want, len(rep.Items), len(p.SLA))
		})
	}
}
