package search

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestStandardLibraryOnly: the package is pure and imports nothing but the
// standard library, so no report, engine, monitor, importer or cli.
func TestStandardLibraryOnly(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			if p := strings.Trim(im.Path.Value, `"`); strings.Contains(strings.Split(p, "/")[0], ".") {
				t.Errorf("%s imports %s", e.Name(), p)
			}
		}
	}
}
