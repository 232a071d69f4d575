// Package doc is the report's document model: a format-neutral view of a
// run's results (sections of paragraphs, tables, charts and verdicts) that
// each output format renders. The report pipeline builds one Document per
// run; the writers in the sibling packages (html, markdown, jsonrep, junit)
// only lay it out, so every format states the same facts.
//
// Every string in a Document is plain text that may come from the run
// (labels, error messages, URLs): writers must escape it for their format.
// Only Figure.SVG is markup, produced by the chart package, which escapes the
// text it embeds.
package doc

import (
	"encoding/json"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/locale"
)

// Document is one run's report.
type Document struct {
	// Title is the report heading ("Performance report: checkout").
	Title string
	// Subtitle names the run and its time span.
	Subtitle string
	// Status is the one-line test status.
	Status Verdict
	// Generated is when the report was written.
	Generated time.Time
	// Tool names the tool and version that wrote it ("plateau 0.1.0").
	Tool string
	// Origin says what the document was written from, for its footer
	// ("from the results history (30 stored runs)"); empty means a run
	// report's "from the run directory alone".
	Origin string
	// Sections in reading order; IDs are stable anchors (summary,
	// requirements, runs, results, resources, errors, capacity, trends,
	// comparison, conclusions, appendix).
	Sections []Section
	// Summary is the machine-readable result (summary.json) the document
	// was built from, already redacted.
	Summary *analysis.Summary
	// Extra is what the report adds to summary.json besides the analysis
	// summary: findings, conclusions and the environment.
	Extra *Extra
	// Lang is the language the document is written in; the writers word
	// their own fixed text (footer, table of contents) in it. nil is
	// English.
	Lang *locale.Locale `json:"-"`
}

// Section is one headed part of the report.
type Section struct {
	ID     string
	Title  string
	Blocks []Block
}

// Block is one element of a section: *Heading, *Para, *Verdict, *List,
// *Table, *Figure, *Grid or *Code.
type Block interface{ block() }

// Level grades a verdict, a list item or a table cell.
type Level int

// Levels, from neutral to bad.
const (
	Info   Level = iota // neutral statement
	OK                  // requirement met, healthy
	Warn                // worth a look
	Fail                // requirement broken, unhealthy
	NoData              // nothing to judge
)

// String returns the lower-case name used as a CSS class and in JSON.
func (l Level) String() string {
	switch l {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	case Fail:
		return "fail"
	case NoData:
		return "nodata"
	}
	return "info"
}

// MarshalText makes levels appear by name in JSON.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Heading is a sub-heading inside a section.
type Heading struct{ Text string }

// Para is a paragraph of plain text.
type Para struct {
	Text string
	// Note marks secondary text (how a number was computed, a caveat).
	Note bool
}

// Verdict is a graded one-line judgement ("Verdict: within the
// requirement"), the shape of the references' "Vurdering".
type Verdict struct {
	Level Level
	Text  string
}

// Item is one entry of a List. Lead, when set, is shown emphasised before
// Text ("Response time: …").
type Item struct {
	Level Level
	Lead  string
	Text  string
}

// List is a bulleted list.
type List struct{ Items []Item }

// Align is a column's alignment.
type Align int

// Alignments.
const (
	Left Align = iota
	Right
)

// Column is a table column.
type Column struct {
	Name  string
	Align Align
}

// Cell is one table cell.
type Cell struct {
	Text  string
	Level Level // graded cells are coloured in HTML and marked in Markdown
}

// Row is one table row.
type Row struct {
	Cells []Cell
	// Total marks a summing row (drawn bold); Sub marks a row that belongs
	// to the transaction above it.
	Total bool
}

// Table is a real table with a caption.
type Table struct {
	ID      string // optional anchor
	Caption string
	Columns []Column
	Rows    []Row
	Note    string // shown under the table
}

// Figure is one chart. SVG is a complete <svg> element; Name is the file
// stem used when the chart is written beside a Markdown report.
type Figure struct {
	Name    string
	Title   string
	Caption string
	SVG     []byte
}

// Grid lays figures out side by side (several servers, reference 000's
// 4-server grids); writers may fall back to one figure per line.
type Grid struct {
	Title   string
	Figures []*Figure
}

// Code is preformatted text: the plan as run, a command line.
type Code struct {
	Title string
	Lang  string
	Text  string
}

func (*Heading) block() {}
func (*Para) block()    {}
func (*Verdict) block() {}
func (*List) block()    {}
func (*Table) block()   {}
func (*Figure) block()  {}
func (*Grid) block()    {}
func (*Code) block()    {}

// Writer renders a Document into a run directory. Write returns the paths
// of the files it wrote (the report first).
type Writer interface {
	// Format is the format's name as given to --format: html, md, json,
	// junit.
	Format() string
	Write(dir string, d *Document) ([]string, error)
}

// Extra is what the report adds to summary.json (under "report").
type Extra struct {
	// Status is "passed", "failed" or "no requirements".
	Status string `json:"status"`
	// Findings are the summary bullets in words, each with its number.
	Findings []Finding `json:"findings"`
	// Conclusions are the per-aspect verdicts.
	Conclusions []Conclusion `json:"conclusions"`
	// Environment describes the load generator and the tool.
	Environment map[string]string `json:"environment,omitempty"`
	// Notes lists problems met while building the report (a monitor file
	// that could not be read, an analysis that had too little data).
	Notes []string `json:"notes,omitempty"`
	// Generated is when the report was written (RFC 3339).
	Generated time.Time `json:"generated"`
}

// Finding is one summary bullet.
type Finding struct {
	Kind  FindingKind `json:"kind"`
	Level Level       `json:"level"`
	Text  string      `json:"text"`
}

// FindingKind says what a finding is about. The summary orders its bullets
// by kind, in the order of the constants below (what a reader must know
// first), never by the wording of the text.
type FindingKind string

// Finding kinds, most important first.
const (
	FindRequirement FindingKind = "requirement" // an SLA judged
	FindNoSamples   FindingKind = "no_samples"  // nothing was measured
	FindCapacity    FindingKind = "capacity"    // where throughput stopped scaling
	FindComparison  FindingKind = "comparison"  // against a baseline
	FindLoad        FindingKind = "load"        // the generator fell short of the plan
	FindErrors      FindingKind = "errors"      // failed requests
	FindDrift       FindingKind = "drift"       // latency drift over the run
	FindMemory      FindingKind = "memory"      // memory after GC
	FindResources   FindingKind = "resources"   // CPU and other resources
	FindNoErrors    FindingKind = "no_errors"   // no request failed
	FindVolume      FindingKind = "volume"      // how much was sent, the slowest label
)

// FindingKinds lists the kinds in summary order.
var FindingKinds = []FindingKind{FindRequirement, FindNoSamples, FindCapacity, FindComparison, FindLoad, FindErrors,
	FindDrift, FindMemory, FindResources, FindNoErrors, FindVolume}

// Rank is the kind's place in the summary; unknown kinds go last.
func (k FindingKind) Rank() int {
	for i, x := range FindingKinds {
		if x == k {
			return i
		}
	}
	return len(FindingKinds)
}

// Aspect is what a conclusion judges. The fixed aspects are always stated
// (reference 000's order), the others only when a run has them.
type Aspect int

// Aspects, in the order the conclusions list them.
const (
	AspectResponseTime Aspect = iota
	AspectThroughput
	AspectCPU
	AspectNetwork
	AspectMemory
	AspectGC
	AspectErrors
	// Judged only for some runs:
	AspectConnections // from database or pool monitors
	AspectGenerator   // the load generator's own health
	AspectRestarts    // services that restarted
	aspectCount
)

// FixedAspects is how many aspects every report states.
const FixedAspects = int(AspectErrors) + 1

var aspectNames = [aspectCount]string{"Response time", "Throughput", "CPU", "Network", "Memory", "GC", "Errors",
	"Connections", "Load generator", "Restarts"}

// AllAspects lists every aspect in order.
func AllAspects() []Aspect {
	out := make([]Aspect, aspectCount)
	for i := range out {
		out[i] = Aspect(i)
	}
	return out
}

// String is the aspect's name as the report prints it.
func (a Aspect) String() string {
	if a >= 0 && a < aspectCount {
		return aspectNames[a]
	}
	return "unknown"
}

// MarshalJSON writes the aspect's name (summary.json report.conclusions).
func (a Aspect) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// Conclusion is the verdict on one aspect (response time, throughput, CPU,
// network, memory, GC, errors, and the others a run has).
type Conclusion struct {
	Aspect   Aspect `json:"aspect"`
	Level    Level  `json:"level"`
	Verdict  string `json:"verdict"`
	Evidence string `json:"evidence"`
}

// Find returns the section with the given id, or nil.
func (d *Document) Find(id string) *Section {
	for i := range d.Sections {
		if d.Sections[i].ID == id {
			return &d.Sections[i]
		}
	}
	return nil
}

// Figures returns every figure of the document in order, including those
// inside grids.
func (d *Document) Figures() []*Figure {
	var out []*Figure
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			switch b := b.(type) {
			case *Figure:
				out = append(out, b)
			case *Grid:
				out = append(out, b.Figures...)
			}
		}
	}
	return out
}
