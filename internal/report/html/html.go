// Package html writes report.html: one self-contained file.
package html

import (
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// Writer writes report.html.
type Writer struct{}

var _ doc.Writer = Writer{}

// Format implements doc.Writer.
func (Writer) Format() string { return "html" }

// Write implements doc.Writer.
func (Writer) Write(dir string, d *doc.Document) ([]string, error) { return nil, nil }
