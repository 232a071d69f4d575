package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportReadsNoRunFiles: the report renders what it is handed
// (analysis.Open reads the run directory); no file of package report
// reads a file itself — no os.ReadFile, os.Open, os.Stat, os.ReadDir,
// filepath.Glob or WalkDir, no mondata.Read… or rundir.Read… — except
// sweep, which rereads the files the report just wrote to mask secrets.
func TestReportReadsNoRunFiles(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := func(pkg, name string) bool {
		switch pkg {
		case "os":
			return name == "ReadFile" || name == "Open" || name == "OpenFile" || name == "Stat" || name == "Lstat" || name == "ReadDir"
		case "filepath":
			return name == "Glob" || name == "WalkDir" || name == "Walk"
		case "mondata", "rundir":
			return strings.HasPrefix(name, "Read")
		}
		return false
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Name.Name == "sweep" {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && forbidden(id.Name, sel.Sel.Name) {
					t.Errorf("%s: %s calls %s.%s: read it in analysis.Open and hand it to the report", fset.Position(sel.Pos()), fn.Name.Name, id.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files of package report", checked)
	}
}
