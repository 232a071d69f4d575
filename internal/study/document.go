package study

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/html"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// File names written by Write.
const (
	HTMLFile     = "study.html"
	MarkdownFile = "study.md"
	ChartDir     = "study-charts"
	JSONFile     = "study.json"
	JUnitFile    = "study-junit.xml"
)

// Document lays the study out for the report's writers.
func Document(s *Study, now time.Time, tool string) *doc.Document {
	d := &doc.Document{Title: s.Title, Generated: now.UTC().Truncate(time.Second), Tool: tool,
		Subtitle: fmt.Sprintf("%d runs · baseline %s", len(s.Runs), s.Baseline)}
	ctx := doc.Section{ID: "context", Title: "Context"}
	for _, p := range []struct{ lead, text string }{{"", s.Description}, {"Method", s.Method}, {"Hypothesis", s.Hypothesis}} {
		if p.text != "" {
			t := report.Sentence(p.text)
			if p.lead != "" {
				t = p.lead + ": " + t
			}
			ctx.Blocks = append(ctx.Blocks, &doc.Para{Text: t})
		}
	}
	for _, kt := range []struct {
		cap string
		kv  []KV
	}{{"System under test", s.System}, {"Environment", s.Environment}} {
		if len(kt.kv) == 0 {
			continue
		}
		t := &doc.Table{Caption: kt.cap, Columns: []doc.Column{{Name: "Item"}, {Name: "Value"}}}
		for _, kv := range kt.kv {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: kv.Name}, {Text: kv.Value}}})
		}
		ctx.Blocks = append(ctx.Blocks, t)
	}
	if len(ctx.Blocks) > 0 {
		d.Sections = append(d.Sections, ctx)
	}

	runs := doc.Section{ID: report.SecRuns, Title: "Runs"}
	rt := &doc.Table{Columns: []doc.Column{{Name: "Run"}, {Name: "Role"}, {Name: "Load"}, {Name: "Duration (s)", Align: doc.Right},
		{Name: "Requests", Align: doc.Right}, {Name: "Throughput (req/s)", Align: doc.Right}, {Name: "Error %", Align: doc.Right},
		{Name: "Average (ms)", Align: doc.Right}, {Name: "p95 (ms)", Align: doc.Right}, {Name: "Verdict"}}}
	for _, r := range s.Runs {
		rt.Rows = append(rt.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Name}, {Text: r.Role}, {Text: r.Load}, {Text: f1(r.DurationS)},
			{Text: strconv.FormatInt(r.Requests, 10)}, {Text: f2(r.ThroughputRPS)}, {Text: f2(r.ErrorPct)}, {Text: f1(r.MeanMs)}, {Text: f1(r.P95Ms)}, {Text: r.Verdict}}})
	}
	runs.Blocks = append(runs.Blocks, rt)
	d.Sections = append(d.Sections, runs)
	if s.Kind == string(compare.Series) {
		var rs []compare.RunStats
		for _, r := range s.Runs {
			rs = append(rs, compare.RunStats{Name: r.Name, Load: r.Load, Users: r.users, Rate: r.rate,
				Stats: core.LabelStats{MeanMs: r.MeanMs, P95Ms: r.P95Ms, ThroughputRPS: r.ThroughputRPS, ErrorPct: r.ErrorPct}})
		}
		if sp, err := compare.Summarize(rs); err == nil {
			sec := report.SeriesSection(&sp)
			sec.ID = "series"
			d.Sections = append(d.Sections, sec)
		}
	}

	if len(s.Capacity) > 0 {
		sec := doc.Section{ID: report.SecCapacity, Title: "Capacity side by side"}
		t := &doc.Table{Columns: []doc.Column{{Name: "Run"}, {Name: "Knee load", Align: doc.Right}, {Name: "USL peak load", Align: doc.Right},
			{Name: "USL peak (req/s)", Align: doc.Right}, {Name: "Highest load meeting the SLA", Align: doc.Right}, {Name: "Knee"}}}
		num := func(v float64) string {
			if v == 0 {
				return "—"
			}
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		for _, c := range s.Capacity {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: c.Run}, {Text: num(c.KneeLoad)}, {Text: num(c.USLPeakLoad)}, {Text: num(c.USLPeakRPS)},
				{Text: num(c.MaxLoadMeetingSLA)}, {Text: report.Sentence(c.Knee)}}})
		}
		sec.Blocks = append(sec.Blocks, t, &doc.Para{Note: true, Text: report.Sentence("the knee, USL fit and SLA limit are the run report's capacity analysis (analysis/knee) over each run's load steps; \"all runs\" treats a load series' runs as the steps of one sweep")})
		d.Sections = append(d.Sections, sec)
	}
	res := doc.Section{ID: report.SecResults, Title: "Per label, all runs"}
	res.Blocks = append(res.Blocks, &doc.Para{Note: true, Text: report.Sentences("Δ is the run's average minus the baseline's ("+s.Baseline+"), in per cent",
		"a difference is called faster or slower only when it is beyond run-to-run noise and at least 3 % of the baseline (docs/analysis-methods.md)")})
	cols := []doc.Column{{Name: "Label"}}
	for _, r := range s.Runs {
		cols = append(cols, doc.Column{Name: r.Name + " avg / p95 (ms)", Align: doc.Right}, doc.Column{Name: r.Name + " Δ"})
	}
	lt := &doc.Table{Columns: cols}
	for _, l := range s.Labels {
		name := l.Label
		if name == core.TotalLabel {
			name = "all requests"
		}
		row := doc.Row{Total: l.Label == core.TotalLabel, Cells: []doc.Cell{{Text: name}}}
		for _, c := range l.Cells {
			if !c.Present {
				row.Cells = append(row.Cells, doc.Cell{Text: "—"}, doc.Cell{Text: ""})
				continue
			}
			v := doc.Cell{Text: "baseline"}
			if c.Verdict != "" {
				v = doc.Cell{Text: signedPct(c.DeltaPct) + " " + string(c.Verdict)}
				switch compare.Verdict(c.Verdict) {
				case compare.Faster:
					v.Level = doc.OK
				case compare.Slower:
					v.Level = doc.Fail
				}
			}
			row.Cells = append(row.Cells, doc.Cell{Text: f1(c.MeanMs) + " / " + f1(c.P95Ms)}, v)
		}
		lt.Rows = append(lt.Rows, row)
	}
	res.Blocks = append(res.Blocks, lt)
	d.Sections = append(d.Sections, res)

	rsec := doc.Section{ID: report.SecResources, Title: "Resources across runs"}
	if len(s.Resources) == 0 {
		rsec.Blocks = append(rsec.Blocks, &doc.Para{Note: true, Text: report.Sentence("no run has monitor data (plateau run --monitor …, or plateau import of vmstat/jstat/docker stats)")})
	}
	for _, t := range s.Resources {
		tt := &doc.Table{Caption: t.Target, Columns: []doc.Column{{Name: "Run"}, {Name: "CPU mean %", Align: doc.Right}, {Name: "CPU max %", Align: doc.Right},
			{Name: "Memory mean (MB)", Align: doc.Right}, {Name: "Memory max (MB)", Align: doc.Right}}}
		for _, r := range t.Runs {
			c := []doc.Cell{{Text: r.Run}, {Text: "—"}, {Text: "—"}, {Text: "—"}, {Text: "—"}}
			if r.HasCPU {
				c[1].Text, c[2].Text = f1(r.CPUMeanPct), f1(r.CPUMaxPct)
			}
			if r.HasMem {
				c[3].Text, c[4].Text = f1(r.MemMeanMB), f1(r.MemMaxMB)
			}
			tt.Rows = append(tt.Rows, doc.Row{Cells: c})
		}
		rsec.Blocks = append(rsec.Blocks, tt)
	}
	d.Sections = append(d.Sections, rsec)

	if sp := s.Repeats; sp != nil {
		sec := doc.Section{ID: "repeats", Title: "Repeat spread"}
		t := &doc.Table{Caption: "Average response time of all requests", Columns: []doc.Column{{Name: "Runs"}, {Name: "Mean ± sd (ms)", Align: doc.Right},
			{Name: "CV %", Align: doc.Right}, {Name: "Outliers"}}}
		out := outlierClause(sp.Outliers)
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: strings.Join(sp.Runs, ", ")}, {Text: f1(sp.MeanMs) + " ± " + f1(sp.SDMs)}, {Text: f1(sp.CVPct)}, {Text: out}}})
		sec.Blocks = append(sec.Blocks, t, &doc.Para{Note: true, Text: report.Sentence("an outlier is further from the median than 3 scaled median absolute deviations and 5 % of the median")})
		d.Sections = append(d.Sections, sec)
	}

	con := doc.Section{ID: report.SecConclusions, Title: "Conclusions"}
	l := &doc.List{}
	for _, c := range s.Conclusions {
		l.Items = append(l.Items, doc.Item{Text: c})
	}
	con.Blocks = append(con.Blocks, l)
	for _, n := range []struct {
		title string
		items []string
	}{{"Findings", s.Findings}, {"Recommendations", s.Recommendations}} {
		if len(n.items) == 0 {
			continue
		}
		nl := &doc.List{}
		for _, it := range n.items {
			nl.Items = append(nl.Items, doc.Item{Text: report.Sentence(it)})
		}
		con.Blocks = append(con.Blocks, &doc.Heading{Text: n.title}, nl)
	}
	d.Sections = append(d.Sections, con)
	d.Status = doc.Verdict{Level: doc.Info, Text: report.Sentence(fmt.Sprintf("study of %d runs against %s", len(s.Runs), s.Baseline))}
	return d
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// Write writes the study in the formats asked for (html, md, json, junit)
// into dir and returns the files written.
func Write(dir string, s *Study, d *doc.Document, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	var files []string
	put := func(name string, b []byte) error {
		p := filepath.Join(dir, name)
		if err := rundir.WriteFileAtomic(p, b); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
		files = append(files, p)
		return nil
	}
	for _, f := range formats {
		switch f {
		case "html":
			b, err := html.Render(d)
			if err != nil {
				return nil, err
			}
			if err := put(HTMLFile, b); err != nil {
				return nil, err
			}
		case "md":
			fs, err := markdown.WriteAs(dir, MarkdownFile, ChartDir, d)
			if err != nil {
				return nil, err
			}
			files = append(files, fs...)
		case "json":
			b, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				return nil, fmt.Errorf("encoding study: %w", err)
			}
			if err := put(JSONFile, append(b, '\n')); err != nil {
				return nil, err
			}
		case "junit":
			b, err := junit(s)
			if err != nil {
				return nil, err
			}
			if err := put(JUnitFile, b); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown format %q (html, md, json, junit)", f)
		}
	}
	return files, nil
}

// junit writes one test case per run and label compared with the
// baseline; a significant slowdown is a failure.
func junit(s *Study) ([]byte, error) {
	type failure struct {
		Message string `xml:"message,attr"`
	}
	type tc struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Cases    []tc     `xml:"testcase"`
	}
	st := suite{Name: "plateau study: " + s.Title}
	for _, l := range s.Labels {
		for _, c := range l.Cells {
			if c.Verdict == "" {
				continue
			}
			t := tc{Name: c.Run + ": " + l.Label, Classname: "study.vs_baseline"}
			if c.Verdict == compare.Slower {
				t.Failure = &failure{Message: fmt.Sprintf("slower than %s: average %s", s.Baseline, signedPct(c.DeltaPct))}
				st.Failures++
			}
			st.Cases = append(st.Cases, t)
		}
	}
	st.Tests = len(st.Cases)
	b, err := xml.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding junit: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
