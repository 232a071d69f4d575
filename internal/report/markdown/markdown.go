// Package markdown writes report.md: the report's content for wikis, with
// tables as pipe tables and each chart as an SVG file under charts/ beside
// it. Every value from the run is escaped so it renders as text: Markdown
// syntax characters are backslash-escaped and HTML's <, > and & become
// entities, so an error message holding "<script>" shows as written.
package markdown

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// FileName is the report's file name; ChartDir holds its charts.
const (
	FileName = "report.md"
	ChartDir = "charts"
)

// Writer writes report.md and charts/*.svg.
type Writer struct{}

var _ doc.Writer = Writer{}

// Format implements doc.Writer.
func (Writer) Format() string { return "md" }

// Render returns report.md's text; charts are referenced as
// charts/<name>.svg.
func Render(d *doc.Document) []byte { return RenderWith(d, ChartDir) }

// RenderWith renders with charts referenced under chartDir.
func RenderWith(d *doc.Document, chartDir string) []byte {
	var w bytes.Buffer
	fmt.Fprintf(&w, "# %s\n\n", esc(d.Title))
	if d.Subtitle != "" {
		fmt.Fprintf(&w, "%s\n\n", esc(d.Subtitle))
	}
	// Table of contents: the section anchors tools link to.
	var toc []string
	for _, s := range d.Sections {
		toc = append(toc, fmt.Sprintf("[%s](#%s)", esc(s.Title), s.ID))
	}
	fmt.Fprintf(&w, "%s\n\n", strings.Join(toc, " · "))
	for _, s := range d.Sections {
		fmt.Fprintf(&w, "<a id=\"%s\"></a>\n\n## %s\n\n", s.ID, esc(s.Title))
		for _, b := range s.Blocks {
			block(&w, b, chartDir)
		}
	}
	fmt.Fprintf(&w, "---\n\n*%s*\n", d.Lang.T("Written by %s on %s.", esc(d.Tool), d.Generated.Format("2006-01-02 15:04:05 MST")))
	return w.Bytes()
}

func block(w *bytes.Buffer, b doc.Block, chartDir string) {
	switch b := b.(type) {
	case *doc.Heading:
		fmt.Fprintf(w, "### %s\n\n", esc(b.Text))
	case *doc.Para:
		if b.Note {
			fmt.Fprintf(w, "*%s*\n\n", esc(b.Text))
		} else {
			fmt.Fprintf(w, "%s\n\n", esc(b.Text))
		}
	case *doc.Verdict:
		fmt.Fprintf(w, "%s**%s**\n\n", mark(b.Level), esc(b.Text))
	case *doc.List:
		for _, it := range b.Items {
			lead := ""
			if it.Lead != "" {
				lead = "**" + esc(it.Lead) + ":** "
			}
			fmt.Fprintf(w, "- %s%s%s\n", mark(it.Level), lead, esc(it.Text))
		}
		w.WriteString("\n")
	case *doc.Table:
		table(w, b)
	case *doc.Figure:
		figure(w, b, chartDir)
	case *doc.Grid:
		if b.Title != "" {
			fmt.Fprintf(w, "**%s**\n\n", esc(b.Title))
		}
		for _, f := range b.Figures {
			figure(w, f, chartDir)
		}
	case *doc.Code:
		if b.Title != "" {
			fmt.Fprintf(w, "**%s**\n\n", esc(b.Title))
		}
		fence := "```"
		for strings.Contains(b.Text, fence) {
			fence += "`"
		}
		fmt.Fprintf(w, "%s%s\n%s\n%s\n\n", fence, b.Lang, strings.TrimRight(b.Text, "\n"), fence)
	}
}

// mark prefixes graded text with a symbol that survives any renderer.
func mark(l doc.Level) string {
	switch l {
	case doc.OK:
		return "✅ "
	case doc.Warn:
		return "⚠️ "
	case doc.Fail:
		return "❌ "
	case doc.NoData:
		return "— "
	}
	return ""
}

func table(w *bytes.Buffer, t *doc.Table) {
	if t.Caption != "" {
		fmt.Fprintf(w, "**%s**\n\n", esc(t.Caption))
	}
	w.WriteString("|")
	for _, c := range t.Columns {
		fmt.Fprintf(w, " %s |", cell(c.Name))
	}
	w.WriteString("\n|")
	for _, c := range t.Columns {
		if c.Align == doc.Right {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	for _, r := range t.Rows {
		w.WriteString("|")
		for i := range t.Columns {
			text := ""
			var lvl doc.Level
			if i < len(r.Cells) {
				text, lvl = r.Cells[i].Text, r.Cells[i].Level
			}
			s := cell(text)
			if lvl == doc.Fail || lvl == doc.OK {
				s = mark(lvl) + s
			}
			if r.Total && s != "" {
				s = "**" + s + "**"
			}
			fmt.Fprintf(w, " %s |", s)
		}
		w.WriteString("\n")
	}
	w.WriteString("\n")
	if t.Note != "" {
		fmt.Fprintf(w, "*%s*\n\n", esc(t.Note))
	}
}

func figure(w *bytes.Buffer, f *doc.Figure, chartDir string) {
	fmt.Fprintf(w, "![%s](%s/%s.svg)\n\n", esc(f.Title), chartDir, f.Name)
	if f.Caption != "" {
		fmt.Fprintf(w, "*%s*\n\n", esc(f.Caption))
	}
}

// esc escapes text for Markdown: syntax characters get a backslash, HTML
// characters become entities, and line breaks become spaces.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '#', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cell escapes a table cell; an empty cell stays empty.
func cell(s string) string { return esc(strings.TrimSpace(s)) }

// Write implements doc.Writer: report.md and one SVG per chart under
// charts/ (charts of an earlier report are removed first).
func (Writer) Write(dir string, d *doc.Document) ([]string, error) {
	return WriteAs(dir, FileName, ChartDir, d)
}

// WriteAs writes d as dir/name with its charts under dir/chartDir, which
// it owns: SVG files of an earlier rendering there are removed first.
func WriteAs(dir, name, chartDir string, d *doc.Document) ([]string, error) {
	cdir := filepath.Join(dir, chartDir)
	figs := d.Figures()
	old, _ := filepath.Glob(filepath.Join(cdir, "*.svg"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return nil, fmt.Errorf("removing old chart: %w", err)
		}
	}
	path := filepath.Join(dir, name)
	files := []string{path}
	if len(figs) > 0 {
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return nil, fmt.Errorf("creating chart directory: %w", err)
		}
	}
	for _, f := range figs {
		p := filepath.Join(cdir, f.Name+".svg")
		if err := rundir.WriteFileAtomic(p, f.SVG); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		files = append(files, p)
	}
	if err := rundir.WriteFileAtomic(path, RenderWith(d, chartDir)); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return files, nil
}
