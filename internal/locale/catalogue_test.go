package locale

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// documentDirs are the packages whose documents are written through the
// catalogue: every literal key they pass to T, W or Word is checked.
var documentDirs = []string{"../report", "../report/html", "../report/markdown", "../study", "../history/historydoc", "../cli", "../prepare"}

// usedKeys returns every string-literal key passed to a T, W or Word call
// in the non-test Go files of dirs, with where it was seen.
func usedKeys(t *testing.T, dirs []string) map[string]string {
	t.Helper()
	keys := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := parser.ParseFile(fset, f, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				// A selector T, W or Word words a key; a plain key(…)
				// marks a literal written now and worded later (a chart's
				// series name in a table of panels).
				switch f := call.Fun.(type) {
				case *ast.SelectorExpr:
					if f.Sel.Name != "T" && f.Sel.Name != "W" && f.Sel.Name != "Word" {
						return true
					}
				case *ast.Ident:
					if f.Name != "key" {
						return true
					}
				default:
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				k, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				if _, seen := keys[k]; !seen {
					keys[k] = fset.Position(lit.Pos()).String()
				}
				return true
			})
		}
	}
	// The study's patterns are one struct of keys (internal/study/text.go,
	// var english): each of its string values is a key.
	studyText := filepath.Join("..", "study", "text.go")
	src, err := os.ReadFile(studyText)
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(fset, studyText, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "english" || len(vs.Values) != 1 {
			return true
		}
		found = true
		for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
			kv := e.(*ast.KeyValueExpr)
			if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				k, _ := strconv.Unquote(lit.Value)
				keys[k] = fset.Position(lit.Pos()).String()
			}
		}
		return false
	})
	if !found {
		t.Fatalf("no var english in %s: the scan is broken", studyText)
	}
	if len(keys) < 100 {
		t.Fatalf("found only %d keys in %v: the scan is broken", len(keys), dirs)
	}
	return keys
}

// messageDirs hold the importers, whose notes and source descriptions a
// report quotes: each literal format passed to Note, AddSourcef or
// rundir.NewMessage is a message key once its verbs are made %s
// (rundir.NewMessage).
var messageDirs = []string{"../importer", "../cli", "../executor"}

// messageVerb is a verb of a message's format.
var messageVerb = regexp.MustCompile(`%[-+#0 ]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// messageKeys returns the message key of every literal format passed to
// Note, AddSourcef or NewMessage under dirs (walked), with where it was
// seen.
func messageKeys(t *testing.T, dirs []string) map[string]string {
	t.Helper()
	keys := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			file, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Note" && sel.Sel.Name != "AddSourcef" && sel.Sel.Name != "NewMessage") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				f, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				k := messageVerb.ReplaceAllStringFunc(f, func(v string) string {
					if v == "%%" {
						return v
					}
					return "%s"
				})
				if _, seen := keys[k]; !seen {
					keys[k] = fset.Position(lit.Pos()).String()
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(keys) < 20 {
		t.Fatalf("found only %d message keys in %v: the scan is broken", len(keys), dirs)
	}
	return keys
}

// TestDanishCatalogue: every key a document uses has a Danish
// translation, or is named in untranslatedDA.
func TestDanishCatalogue(t *testing.T) {
	keys := usedKeys(t, documentDirs)
	for k, at := range messageKeys(t, messageDirs) {
		if _, seen := keys[k]; !seen {
			keys[k] = at
		}
	}
	var missing []string
	for k, at := range keys {
		if _, ok := da[k]; !ok && !untranslatedDA[k] {
			missing = append(missing, at+": "+strconv.Quote(k))
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("no Danish for %s", m)
	}
	for k := range untranslatedDA {
		if _, ok := da[k]; ok {
			t.Errorf("%q is translated but still listed as untranslated", k)
		}
		if _, ok := keys[k]; !ok {
			t.Errorf("%q is listed as untranslated but no document uses it", k)
		}
	}
	t.Logf("%d keys used, %d translated, %d left in English", len(keys), len(keys)-len(untranslatedDA), len(untranslatedDA))
}

var verb = regexp.MustCompile(`%[-+#0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// TestDanishVerbs: a translation takes the same arguments as its key, in
// the same order (a missing %s would drop a number from a sentence).
func TestDanishVerbs(t *testing.T) {
	for k, v := range da {
		kv, vv := verb.FindAllString(k, -1), verb.FindAllString(v, -1)
		if !slices.Equal(kv, vv) {
			t.Errorf("%q → %q: verbs %v, want %v", k, v, vv, kv)
		}
		if !validKey(k) || strings.TrimSpace(v) == "" && strings.TrimSpace(k) != "" {
			t.Errorf("bad entry %q → %q", k, v)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"", "en"}, {"en", "en"}, {"DA", "da"}, {"da-DK", "da"}, {"en_GB", "en"}} {
		l, err := Parse(c.in)
		if err != nil || l.Name() != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", c.in, l.Name(), err, c.want)
		}
	}
	_, err := Parse("klingon")
	if err == nil || !strings.Contains(err.Error(), `"klingon"`) || !strings.Contains(err.Error(), "en, da") {
		t.Errorf("Parse(klingon) error %v: want the value and the languages available", err)
	}
}

func TestNumbers(t *testing.T) {
	da := MustParse("da")
	for in, want := range map[string]string{"1,234.5": "1.234,5", "0.42": "0,42", "−12.3 %": "−12,3 %", "155": "155"} {
		if got := da.Num(in); got != want {
			t.Errorf("da.Num(%q) = %q, want %q", in, got, want)
		}
		if got := MustParse("en").Num(in); got != in {
			t.Errorf("en.Num(%q) = %q", in, got)
		}
	}
	// The printer localises numeric arguments of a translated message.
	if got := da.T("%d of %d questions failed their expectation: %s", 1234, 2, "x"); !strings.HasPrefix(got, "1.234 af 2") {
		t.Errorf("da.T = %q", got)
	}
	var nilLoc *Locale
	if got := nilLoc.T("%d requests", 1234); got != "1234 requests" {
		t.Errorf("nil locale T = %q, want fmt's English", got)
	}
}

// FuzzParse: any --lang or lang: value gives a language available or an
// error naming the value; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "en", "da", "DA-dk", "en_GB", "-", "_da", "klingon", "d\xffa"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not name %q", err, s)
			}
			return
		}
		if !slices.Contains(Names(), l.Name()) {
			t.Fatalf("Parse(%q) = %q, not a language available", s, l.Name())
		}
	})
}

// TestDayClock: a chart's tick over several days is written as the
// language writes a date: Danish day first with the month's name.
func TestDayClock(t *testing.T) {
	at := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	if got := MustParse("en").DayClock(at); got != "03-04 09:30" {
		t.Errorf("en = %q", got)
	}
	if got := MustParse("da").DayClock(at); got != "4. mar 09:30" {
		t.Errorf("da = %q", got)
	}
	var nilLoc *Locale
	if got := nilLoc.DayClock(at.AddDate(0, 9, 0)); got != "12-04 09:30" {
		t.Errorf("nil = %q", got)
	}
}
