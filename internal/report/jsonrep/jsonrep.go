// Package jsonrep writes summary.json: the analysis summary (field names
// documented in docs/summary.md) plus a "report" member with what the report
// adds — the status, the summary findings, the per-aspect conclusions, the
// environment and any notes.
package jsonrep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Writer writes summary.json.
type Writer struct{}

var _ doc.Writer = Writer{}

// Format implements doc.Writer.
func (Writer) Format() string { return "json" }

// file is summary.json's layout: the summary's fields at the top level and
// the report's additions under "report".
type file struct {
	*analysis.Summary
	Report *doc.Extra `json:"report,omitempty"`
}

// Encode returns the summary.json bytes for d.
func Encode(d *doc.Document) ([]byte, error) {
	if d.Summary == nil {
		return nil, fmt.Errorf("document has no summary")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// Error messages and labels are shown by browsers and wikis; keeping
	// <, > and & escaped costs nothing in JSON and stays safe to embed.
	enc.SetEscapeHTML(true)
	if err := enc.Encode(file{Summary: d.Summary, Report: d.Extra}); err != nil {
		return nil, fmt.Errorf("encoding summary: %w", err)
	}
	return buf.Bytes(), nil
}

// Write implements doc.Writer: it writes dir/summary.json atomically.
func (Writer) Write(dir string, d *doc.Document) ([]string, error) {
	b, err := Encode(d)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, rundir.SummaryFile)
	if err := rundir.WriteFileAtomic(path, b); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return []string{path}, nil
}
