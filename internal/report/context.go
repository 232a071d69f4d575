package report

import (
	"slices"

	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// ContextBlocks lays out a test's context (the plan's description,
// system, environment, method and hypothesis): sentences for the text,
// two-column tables (sorted by item) for system and environment. red
// masks secrets; nil keeps text as is.
func ContextBlocks(c *rundir.Context, red func(string) string) []doc.Block {
	return ContextBlocksIn(c, red, nil)
}

// ContextBlocksIn is ContextBlocks in the language loc (nil is English).
func ContextBlocksIn(c *rundir.Context, red func(string) string, loc *locale.Locale) []doc.Block {
	b := numbers{loc: loc}
	if c == nil {
		return nil
	}
	if red == nil {
		red = func(s string) string { return s }
	}
	var out []doc.Block
	for _, p := range []struct{ lead, text string }{{"", c.Description}, {b.W("Method"), c.Method}, {b.W("Hypothesis"), c.Hypothesis}} {
		if p.text == "" {
			continue
		}
		t := sentence(red(p.text))
		if p.lead != "" {
			t = p.lead + ": " + t
		}
		out = append(out, &doc.Para{Text: t})
	}
	for _, kt := range []struct {
		cap string
		m   map[string]string
	}{{b.W("System under test"), c.System}, {b.W("Environment (as the plan states it; the generator's own is in the appendix)"), c.Environment}} {
		if len(kt.m) == 0 {
			continue
		}
		t := &doc.Table{Caption: kt.cap, Columns: []doc.Column{{Name: b.W("Item")}, {Name: b.W("Value")}}}
		keys := make([]string, 0, len(kt.m))
		for k := range kt.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: red(k)}, {Text: red(kt.m[k])}}})
		}
		out = append(out, t)
	}
	return out
}
