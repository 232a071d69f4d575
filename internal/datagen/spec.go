// Package datagen writes test data at a modelled scale from a small YAML
// spec: entities with counts (fixed, or per parent row drawn from a
// distribution), relations (each child row belongs to one parent row) and
// fields with generators (sequences, UUIDs, names, numbers and dates from
// distributions, weighted choices, templates over the row and its
// ancestors, references to another entity). Output is one CSV (with a
// header), NDJSON or JSON file per entity, written as the rows are made:
// memory does not grow with the row count, and the same spec and seed give
// the same bytes.
//
// Reference 002's data-volume model (teachers → classes → students →
// responses) is the shape it is made for; docs/datagen.md is the
// reference of the spec.
package datagen

import (
	"fmt"
	"sort"
	"strings"
)

// Spec is a parsed, checked data spec. It is immutable once Parse returns.
type Spec struct {
	// Seed makes the data reproducible: the same spec, seed and scale give
	// the same bytes. Default 1.
	Seed uint64
	// Scale multiplies the counts of the root entities (those without a
	// parent); per-parent counts stay, so the shape of the model holds at
	// any scale. Default 1.
	Scale float64
	// Format is the default output format: csv, ndjson or json.
	Format   string
	Entities []*Entity // in file order
	File     string    // the spec's file name, for messages
}

// Entity is one kind of row (one output file).
type Entity struct {
	Name string
	// Parent names the entity each row belongs to; empty for a root
	// entity, whose Count is fixed.
	Parent string
	// Count is a root entity's row count (before Scale).
	Count int64
	// Fixed keeps a root entity's count at every scale (a lookup table:
	// campaigns, product categories). YAML: scaled: false.
	Fixed bool
	// PerParent draws a child entity's row count for each parent row.
	PerParent Dist
	Fields    []*Field
	Format    string // csv, ndjson or json
	File      string // output file name, relative to the output directory
	// ID is the field that identifies a row (a sequence): what a ref
	// field of another entity yields. Default: the first seq field.
	ID  string
	Pos Pos

	parent   *Entity
	children []*Entity
}

// Dist is a distribution of numbers: fixed, uniform, normal, poisson,
// binomial, exponential, lognormal or zipf. Min and Max clamp every draw
// (and bound uniform and zipf).
type Dist struct {
	Kind     string  // fixed | uniform | normal | poisson | binomial | exponential | lognormal | zipf
	Value    float64 // fixed
	Mean, SD float64 // normal (mean, sd), poisson and exponential (mean), lognormal (mean and sd of the log)
	N        int     // binomial trials
	P        float64 // binomial probability
	S        float64 // zipf exponent (> 1)
	Min, Max float64
	HasMin   bool
	HasMax   bool
}

// Field is one column.
type Field struct {
	Name string
	// Type is the generator: seq, uuid, first_name, last_name, name,
	// word, words, fake, int, float, bool, date, datetime, choice,
	// template, parent, ref, const, pattern.
	Type     string
	Start    int64 // seq
	Step     int64 // seq
	Dist     Dist  // int, float; words (the word count)
	Decimals int   // float; default 2
	P        float64
	// Date range (date, datetime) as Unix seconds, and the output layout.
	From, To int64
	Layout   string
	Values   []string  // choice
	Weights  []float64 // choice
	Template string    // template
	Field    string    // parent: the parent's field ("parent.x" for the grandparent's)
	Entity   string    // ref
	Fake     string    // fake: a gofakeit function name
	Value    string    // const
	Pattern  string    // pattern: # digit, ? letter, * letter or digit
	NullP    float64   // probability of an empty value
	Pos      Pos
}

// Pos is a 1-based position in the spec file.
type Pos struct{ Line, Col int }

// Error is one problem in a spec, at its position.
type Error struct {
	File string
	Pos  Pos
	Msg  string
}

func (e Error) Error() string {
	if e.Pos.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Errors is every problem found in a spec, in file order.
type Errors []Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Pos.Line != es[j].Pos.Line {
			return es[i].Pos.Line < es[j].Pos.Line
		}
		return es[i].Pos.Col < es[j].Pos.Col
	})
	return es
}

// Entity returns the entity called name, or nil.
func (s *Spec) Entity(name string) *Entity {
	for _, e := range s.Entities {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Expected is the expected row count of entity e at the spec's scale: a
// root's count, times the mean per-parent count of each entity down to e.
func (s *Spec) Expected(e *Entity) float64 {
	if e.parent == nil {
		return float64(e.rows(s.Scale))
	}
	return s.Expected(e.parent) * e.PerParent.mean()
}

// rows is a root entity's row count at scale.
func (e *Entity) rows(scale float64) int64 {
	if e.Fixed {
		return e.Count
	}
	return scaled(e.Count, scale)
}

// scaled is a root count at scale, at least 1 when the count is.
func scaled(n int64, scale float64) int64 {
	if n == 0 {
		return 0
	}
	v := int64(float64(n)*scale + 0.5)
	return max(v, 1)
}
