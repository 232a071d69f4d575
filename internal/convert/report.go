package convert

import (
	"fmt"
	"io"
	"strings"
)

// Status is what became of one source element.
type Status int

// The statuses an element can have. Every enabled element of a source gets
// exactly one, so the report accounts for all of them.
const (
	// Converted: the plan does what the element did.
	Converted Status = iota
	// Partial: converted, with a difference the report names.
	Partial
	// NotNeeded: the element has no job in a plateau plan (a results
	// listener: plateau records and reports results itself).
	NotNeeded
	// NotConverted: left as a comment where it was; the report says why.
	NotConverted
	// Disabled: disabled in the source, skipped with everything inside it.
	Disabled
)

func (s Status) String() string {
	return [...]string{"converted", "partial", "not needed", "not converted", "disabled"}[s]
}

// StatusOf is the status of an element converted with the given notes
// (differences) and needs (missing plateau features): Partial when either
// is not empty, and the first need as the item's Needs.
func StatusOf(notes, needs []string) (st Status, need string) {
	if len(needs) > 0 {
		return Partial, needs[0]
	}
	if len(notes) > 0 {
		return Partial, ""
	}
	return Converted, ""
}

// Item is one source element and what became of it.
type Item struct {
	Path   string // position in the source tree, "Test Plan / Users / Login"
	Name   string // the element's name
	Type   string // the element's kind, "HTTP Request", "JSR223 PostProcessor"
	Status Status
	Note   string // what differs, or why it was not converted
	// Needs names the plateau feature that would convert the element fully
	// ("if", "template function __Random"); the report writes
	// "needs plateau feature X".
	Needs string
}

// Correlation is one value found in a response and reused by later requests.
type Correlation struct {
	Var    string
	From   string // the request whose response holds the value
	How    string // "json $.token", "header Location", "regex …"
	UsedBy []string
}

// EnvVar is one value the plan reads from the environment.
type EnvVar struct {
	Env  string // environment variable
	What string // what it holds
}

// Report is the conversion report, plan.convert.md.
type Report struct {
	Source string // the converted file
	Kind   string // "JMeter", "HAR", "Postman"
	Items  []Item
	// Correlations made automatically (HAR).
	Correlations []Correlation
	// Env lists the environment variables the plan needs (secrets never
	// written into the plan).
	Env []EnvVar
	// Notes are free remarks, one sentence each.
	Notes []string
	// Behaviour lists, in terms of traffic, how the converted plan's
	// requests differ from the source's ("requests run unconditionally",
	// "pacing lost", "header empty"); written first.
	Behaviour []string
	// Verified says the written plan loaded with plateau's plan loader;
	// VerifyError is the loader's message when it did not.
	Verified    bool
	VerifyError string
}

// AddBehaviour records a difference in behaviour once.
func (r *Report) AddBehaviour(s string) {
	for _, x := range r.Behaviour {
		if x == s {
			return
		}
	}
	r.Behaviour = append(r.Behaviour, s)
}

// Add records one element.
func (r *Report) Add(it Item) { r.Items = append(r.Items, it) }

// Counts is the tally of a report's items by status.
type Counts struct {
	Enabled                                     int // every item but Disabled
	Converted, Partial, NotNeeded, NotConverted int
	Disabled                                    int
}

// Count tallies the items.
func (r *Report) Count() Counts {
	var c Counts
	for _, it := range r.Items {
		switch it.Status {
		case Converted:
			c.Converted++
		case Partial:
			c.Partial++
		case NotNeeded:
			c.NotNeeded++
		case NotConverted:
			c.NotConverted++
		case Disabled:
			c.Disabled++
		}
	}
	c.Enabled = c.Converted + c.Partial + c.NotNeeded + c.NotConverted
	return c
}

// ConvertedShare is the share of enabled elements converted fully or
// partially, in [0,1]; elements with no job in plateau count as converted.
func (c Counts) ConvertedShare() float64 {
	if c.Enabled == 0 {
		return 1
	}
	return float64(c.Converted+c.Partial+c.NotNeeded) / float64(c.Enabled)
}

// Needs lists the plateau features the conversion missed, each once, with
// how many elements needed it, in first-seen order.
func (r *Report) Needs() []struct {
	Feature string
	N       int
} {
	var out []struct {
		Feature string
		N       int
	}
	idx := map[string]int{}
	for _, it := range r.Items {
		if it.Needs == "" {
			continue
		}
		i, ok := idx[it.Needs]
		if !ok {
			i = len(out)
			idx[it.Needs] = i
			out = append(out, struct {
				Feature string
				N       int
			}{it.Needs, 0})
		}
		out[i].N++
	}
	return out
}

// WriteTo writes the report as Markdown.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	c := r.Count()
	fmt.Fprintf(&b, "# Conversion of %s (%s)\n\n", mdText(r.Source), r.Kind)
	if len(r.Behaviour) > 0 {
		b.WriteString("## What the converted plan sends differently\n\n")
		for _, s := range r.Behaviour {
			fmt.Fprintf(&b, "- %s\n", mdText(s))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("The converted plan sends the same requests as the source (no known difference in behaviour).\n\n")
	}
	fmt.Fprintf(&b, "%d enabled elements: %d converted, %d converted in part, %d not needed in plateau, %d not converted",
		c.Enabled, c.Converted, c.Partial, c.NotNeeded, c.NotConverted)
	if c.Disabled > 0 {
		fmt.Fprintf(&b, "; %d disabled elements skipped", c.Disabled)
	}
	fmt.Fprintf(&b, ". Share converted (fully, in part or not needed): %.1f %%.\n\n", 100*c.ConvertedShare())
	switch {
	case r.Verified:
		b.WriteString("The converted plan passes plateau's checks (`plateau check`: the plan loader and the engine's compile).\n\n")
	case r.VerifyError != "":
		fmt.Fprintf(&b, "The converted plan does **not** load yet:\n\n```\n%s\n```\n\n", r.VerifyError)
	}
	if needs := r.Needs(); len(needs) > 0 {
		b.WriteString("## Needs plateau features\n\n")
		for _, n := range needs {
			fmt.Fprintf(&b, "- needs plateau feature %s (%d %s)\n", mdText(n.Feature), n.N, plural(n.N, "element"))
		}
		b.WriteString("\n")
	}
	if len(r.Env) > 0 {
		b.WriteString("## Environment variables the plan reads\n\n")
		b.WriteString("Secrets found in the source are not written into the plan; set these before `plateau run`.\n\n")
		b.WriteString("| variable | holds |\n|---|---|\n")
		for _, e := range r.Env {
			fmt.Fprintf(&b, "| `%s` | %s |\n", e.Env, mdCell(e.What))
		}
		b.WriteString("\n")
	}
	if len(r.Correlations) > 0 {
		b.WriteString("## Correlations\n\n")
		b.WriteString("Values that a response returned and later requests sent back, now extracted into variables.\n\n")
		b.WriteString("| variable | taken from | how | used by |\n|---|---|---|---|\n")
		for _, k := range r.Correlations {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Var, mdCell(k.From), mdCell(k.How), mdCell(strings.Join(k.UsedBy, ", ")))
		}
		b.WriteString("\n")
	}
	for _, sec := range []struct {
		title string
		st    Status
	}{
		{"Not converted", NotConverted},
		{"Converted in part", Partial},
		{"Converted", Converted},
		{"Not needed in plateau", NotNeeded},
		{"Disabled (skipped)", Disabled},
	} {
		var rows []Item
		for _, it := range r.Items {
			if it.Status == sec.st {
				rows = append(rows, it)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s (%d)\n\n| element | type | note |\n|---|---|---|\n", sec.title, len(rows))
		for _, it := range rows {
			note := it.Note
			if it.Needs != "" {
				note = joinNote(note, "needs plateau feature "+it.Needs)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(it.Path), mdCell(it.Type), mdCell(note))
		}
		b.WriteString("\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", mdText(n))
		}
		b.WriteString("\n")
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return strings.TrimRight(a, ". ") + "; " + b
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func mdText(s string) string {
	return strings.NewReplacer("\n", " ", "\r", "").Replace(s)
}

func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", "").Replace(s)
}
