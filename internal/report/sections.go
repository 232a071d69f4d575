package report

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- conclusions ------------------------------------------------------------

func (b *builder) conclusionsSection() doc.Section {
	sec := doc.Section{ID: SecConclusions, Title: b.W("Conclusions"), Blocks: b.validityConclusion()}
	l := &doc.List{}
	// Aspects judged only for some runs (connections, from database
	// monitors; the load generator) follow the fixed ones.
	for _, a := range doc.AllAspects() {
		c, ok := b.conclusions[a]
		if !ok && int(a) >= doc.FixedAspects {
			continue
		}
		if !ok {
			c = doc.Conclusion{Aspect: a, Level: doc.NoData, Verdict: b.W("not measured"), Evidence: b.noEvidence(a)}
		}
		b.extra.Conclusions = append(b.extra.Conclusions, c)
		text := c.Verdict
		if c.Evidence != "" {
			text += " — " + c.Evidence
		}
		l.Items = append(l.Items, doc.Item{Level: c.Level, Lead: b.aspect(a), Text: finish(text)})
	}
	sec.Blocks = append(sec.Blocks, l)
	return sec
}

// aspect is an aspect's name as the conclusions lead with it: the
// reference's own words in Danish ("Cpu status", "io på netværk").
func (b numbers) aspect(a doc.Aspect) string {
	if k := "aspect " + a.String(); !b.loc.English() && b.loc.Has(k) {
		return b.W(k)
	}
	return a.String()
}

func (b numbers) noEvidence(aspect doc.Aspect) string {
	switch aspect {
	case doc.AspectCPU, doc.AspectNetwork, doc.AspectMemory:
		return b.W("no monitor recorded it; add a host, process or cgroup target under monitor: in the plan")
	case doc.AspectGC:
		return b.W("no JVM was monitored; add a jvm target under monitor: in the plan")
	}
	return b.W("no data")
}

// ---- appendix ---------------------------------------------------------------

// environment describes the load generator for the appendix and summary.json.
func environment(in *input) map[string]string {
	h := in.d.Info.Host
	env := map[string]string{}
	set := func(k, v string) {
		if v != "" && v != "0" {
			env[k] = in.red.String(v)
		}
	}
	// run.json's host is the load generator's only when the run's data
	// hold it; an import records the machine that read the files.
	if _, holds := in.d.Info.Origin(); holds.GeneratorEnv {
		set("host", h.Hostname)
		set("os", h.OS)
		set("kernel", h.Kernel)
		set("cpu", h.CPUModel)
		if h.CPUs > 0 {
			set("cpus", fmt.Sprint(h.CPUs))
		}
		if h.MemBytes > 0 {
			set("memory", numbers{}.bytesU(float64(h.MemBytes)))
		}
		set("go", h.GoVersion)
	}
	set("tool", strings.TrimSpace(nonEmpty(in.d.Info.Tool, "plateau")+" "+in.version))
	set("segment", in.d.Info.Segment)
	return env
}

func (b *builder) appendix() doc.Section {
	sec := doc.Section{ID: SecAppendix, Title: b.W("Appendix")}
	env := b.extra.Environment
	caption := b.W("Environment (load generator)")
	if !b.holds().GeneratorEnv {
		caption = b.W("Environment")
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: b.W("The load generator's environment (host, CPU, memory) is not in the imported data, so it is not known here.")})
	}
	t := &doc.Table{Caption: caption, Columns: []doc.Column{{Name: b.W("Item")}, {Name: b.W("Value")}}}
	for _, k := range []struct{ key, name string }{{"host", "Host"}, {"os", "OS"}, {"kernel", "Kernel"}, {"cpu", "CPU"},
		{"cpus", b.W("CPU cores")}, {"memory", "Memory"}, {"go", b.W("Go runtime")}, {"tool", "Tool"}, {"segment", b.W("Generator segment")}} {
		if v, ok := env[k.key]; ok {
			if k.key == "memory" {
				v = b.loc.Num(v) // "23.5 GiB": a number, written as the language writes one
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.W(k.name)}, {Text: v}}})
		}
	}
	t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.W("Run directory")}, {Text: b.red.String(b.in.dir)}}},
		doc.Row{Cells: []doc.Cell{{Text: b.W("Report written")}, {Text: b.extra.Generated.Format("2006-01-02 15:04:05 MST") + b.W(" by ") + b.doc.Tool + " (" + runtime.GOOS + ")"}}})
	sec.Blocks = append(sec.Blocks, t)

	if cmd := b.d.Info.Command; len(cmd) > 0 {
		sec.Blocks = append(sec.Blocks, &doc.Code{Title: b.W("Command line"), Lang: "sh", Text: b.red.String(shellJoin(cmd))})
	}
	if t := b.commandsTable(); t != nil {
		sec.Blocks = append(sec.Blocks, t)
	}
	sec.Blocks = append(sec.Blocks, b.monitorsTable()...)
	if len(b.d.Info.Source) > 0 {
		l := &doc.List{}
		for _, s := range b.d.Info.Source {
			l.Items = append(l.Items, doc.Item{Text: b.red.String(b.worded(b.d.Info, s))})
		}
		sec.Blocks = append(sec.Blocks, &doc.Heading{Text: b.W("Imported files")}, l)
	}
	if notes := append(append([]string{}, b.d.Info.Notes...), b.extra.Notes...); len(notes) > 0 {
		l := &doc.List{}
		for _, n := range notes {
			l.Items = append(l.Items, doc.Item{Level: doc.Info, Text: b.red.String(b.worded(b.d.Info, n))})
		}
		sec.Blocks = append(sec.Blocks, &doc.Heading{Text: b.W("Notes")}, l)
	}
	if b.in.plan != "" {
		sec.Blocks = append(sec.Blocks, &doc.Code{Title: b.W("Plan as run (secrets masked)"), Lang: "yaml", Text: b.in.plan})
	} else {
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: b.W("The run directory holds no plan copy (imported run).")})
	}
	return sec
}

// shellJoin quotes arguments the way a POSIX shell would need them.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// ---- small generic helpers ----------------------------------------------------

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// sortedByValue returns map keys by descending value, then by key.
func sortedByValue(m map[string]int64) []string {
	ks := sortedKeys(m)
	slices.SortStableFunc(ks, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	return ks
}

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// monitorsTable lists the monitors used, their state and their own cost.
func (b *builder) monitorsTable() []doc.Block {
	ts := b.in.targets
	if len(ts) == 0 {
		return nil
	}
	t := &doc.Table{Caption: b.W("Monitors and their own cost"), Columns: []doc.Column{{Name: b.W("Target")}, {Name: b.W("Kind")}, {Name: b.W("State")},
		{Name: b.W("Method")}, {Name: b.W("Interval"), Align: doc.Right}, {Name: b.monitorSamples(), Align: doc.Right}, {Name: b.W("Gaps"), Align: doc.Right},
		{Name: b.W("CPU used (s)"), Align: doc.Right}, {Name: b.W("CPU share of one core"), Align: doc.Right}}}
	secs := b.d.Span().Seconds()
	var total float64
	for _, st := range ts {
		state := doc.Cell{Text: b.W("sampled"), Level: doc.OK}
		if !st.Started {
			state = doc.Cell{Text: b.W("could not start: ") + b.red.String(nonEmpty(st.Error, b.W("unknown reason"))), Level: doc.Fail}
		}
		share := "–"
		if secs > 0 && st.CPUSeconds > 0 {
			share = b.pct(100 * st.CPUSeconds / secs)
		}
		total += st.CPUSeconds
		iv := "–"
		if st.IntervalS > 0 {
			iv = b.loc.Num(trimZeros(fmt.Sprintf("%.3f", st.IntervalS))) + " s"
		}
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(st.Name)}, {Text: b.monitorKind(st.Kind)}, state, {Text: nonEmpty(st.Method, "–")},
			{Text: iv}, {Text: b.count(int64(st.Samples))}, {Text: fmt.Sprint(len(st.Gaps))},
			{Text: b.loc.Num(trimZeros(fmt.Sprintf("%.2f", st.CPUSeconds)))}, {Text: share}}})
	}
	if len(ts) > 1 && secs > 0 {
		t.Rows = append(t.Rows, doc.Row{Total: true, Cells: []doc.Cell{{Text: b.W("all monitors")}, {}, {}, {}, {}, {}, {},
			{Text: b.loc.Num(trimZeros(fmt.Sprintf("%.2f", total)))}, {Text: b.pct(100 * total / secs)}}})
	}
	t.Note = b.W("CPU used is the monitors' own cost (sampling threads and helper processes such as jstat) over the run.")
	blocks := []doc.Block{t}
	var gaps []string
	for _, st := range ts {
		for _, g := range st.Gaps {
			end := b.W("end of run")
			if g.End != nil {
				end = b.hms(g.End.In(b.d.Start.Location()))
			}
			gaps = append(gaps, b.T("%s lost %s – %s: %s", b.red.String(st.Name), b.hms(g.Start.In(b.d.Start.Location())), end, b.red.String(g.Error)))
		}
	}
	if len(gaps) > 0 {
		l := &doc.List{}
		for _, g := range gaps {
			l.Items = append(l.Items, doc.Item{Level: doc.Warn, Text: g})
		}
		blocks = append(blocks, l)
	}
	return blocks
}

// monitorSamples heads the monitors' column of readings: "Samples" in
// English as before; a monitor's readings are no calls, so another
// language says readings.
func (b *builder) monitorSamples() string {
	if b.loc.English() {
		return "Samples"
	}
	return b.W("Readings")
}

// monitorKind is a monitor's kind as the plan's monitor: key names it,
// the English words among them in the document's language.
func (b *builder) monitorKind(kind string) string {
	switch kind {
	case mondata.KindProcess:
		return b.W("process")
	case mondata.KindRecipe:
		return b.W("recipe")
	}
	return kind
}
