// Package html writes report.html: one self-contained file with the styles
// and the SVG charts inline, no script, and a Content-Security-Policy that
// forbids every network request, so it reads the same offline, in a mail
// attachment or printed to PDF (print styles keep tables and charts whole
// and start the major sections on a new page).
//
// The page is rendered with html/template: every value from the run is
// escaped by context. The only markup inserted verbatim is the charts' SVG,
// which the chart package builds with its own escaping.
package html

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"path/filepath"

	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// FileName is the report's file name in the run directory.
const FileName = "report.html"

// Writer writes report.html.
type Writer struct{}

var _ doc.Writer = Writer{}

// Format implements doc.Writer.
func (Writer) Format() string { return "html" }

//go:embed report.gohtml
var pageSource string

//go:embed style.css
var styleSource string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"svg":   func(b []byte) template.HTML { return template.HTML(b) }, // built and escaped by package chart
	"css":   func() template.CSS { return template.CSS(styleSource) },
	"level": func(l doc.Level) string { return l.String() },
	"right": func(a doc.Align) bool { return a == doc.Right },
	"cell": func(r doc.Row, i int) doc.Cell {
		if i < len(r.Cells) {
			return r.Cells[i]
		}
		return doc.Cell{}
	},
	"num": func(i int) int { return i + 1 },
}).Parse(pageSource))

// blockView lets the template dispatch on a block's type.
type blockView struct {
	Kind    string
	Heading *doc.Heading
	Para    *doc.Para
	Verdict *doc.Verdict
	List    *doc.List
	Table   *doc.Table
	Figure  *doc.Figure
	Grid    *doc.Grid
	Code    *doc.Code
}

type sectionView struct {
	ID, Title string
	Major     bool // starts a new page in print
	Blocks    []blockView
}

type pageView struct {
	*doc.Document
	Secs []sectionView
	// Words are the page's own fixed text in the document's language.
	Words pageWords
}

// pageWords is the fixed text of the page around the document.
type pageWords struct {
	Lang, Brand, Contents, Footer string
}

func view(b doc.Block) blockView {
	switch b := b.(type) {
	case *doc.Heading:
		return blockView{Kind: "heading", Heading: b}
	case *doc.Para:
		return blockView{Kind: "para", Para: b}
	case *doc.Verdict:
		return blockView{Kind: "verdict", Verdict: b}
	case *doc.List:
		return blockView{Kind: "list", List: b}
	case *doc.Table:
		return blockView{Kind: "table", Table: b}
	case *doc.Figure:
		return blockView{Kind: "figure", Figure: b}
	case *doc.Grid:
		return blockView{Kind: "grid", Grid: b}
	case *doc.Code:
		return blockView{Kind: "code", Code: b}
	}
	return blockView{Kind: "none"}
}

// majorSections start on a new page when printed.
var majorSections = map[string]bool{"results": true, "resources": true, "errors": true, "conclusions": true, "appendix": true}

// Render returns report.html's bytes.
func Render(d *doc.Document) ([]byte, error) {
	l := d.Lang
	footer := l.T("from the run directory alone. Times are in the run's own time zone.")
	if d.Origin != "" {
		footer = d.Origin + "."
	}
	pv := pageView{Document: d, Words: pageWords{Lang: l.Lang(), Brand: l.T("%s · performance report", d.Tool), Contents: l.T("Contents"),
		Footer: l.T("Written by %s on %s", d.Tool, d.Generated.Format("2006-01-02 15:04:05 MST")) + " " + footer}}
	for _, s := range d.Sections {
		sv := sectionView{ID: s.ID, Title: s.Title, Major: majorSections[s.ID]}
		for _, b := range s.Blocks {
			sv.Blocks = append(sv.Blocks, view(b))
		}
		pv.Secs = append(pv.Secs, sv)
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, pv); err != nil {
		return nil, fmt.Errorf("rendering html: %w", err)
	}
	return buf.Bytes(), nil
}

// Write implements doc.Writer: it writes dir/report.html atomically.
func (Writer) Write(dir string, d *doc.Document) ([]string, error) {
	b, err := Render(d)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	if err := rundir.WriteFileAtomic(path, b); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return []string{path}, nil
}
