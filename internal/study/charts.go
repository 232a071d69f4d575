package study

import (
	"fmt"
	"math"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// runChart is one run's CPU or memory per monitored service over time,
// bucketed for drawing, with its phases as spans.
type runChart struct {
	run    string
	memory bool
	lines  []chartLine
	spans  []chart.Span
}

type chartLine struct {
	name string
	x, y []float64
}

// maxChartPoints bounds the points of one drawn line.
const maxChartPoints = 240

// cpuMetrics and memMetricsChart are the series a run's resource charts
// draw, in preference order.
var (
	cpuMetrics      = []string{"cpu_pct", "cpu_busy_pct"}
	memMetricsChart = []string{"rss_bytes", "memory_working_set_bytes", "heap_used_bytes", "mem_used_bytes"}
)

// runCharts are a run's CPU (%) and memory (MB) charts, one line per
// monitored service under test (the generator's own targets and hosts of
// unknown role left out: a host holds every process).
func runCharts(m *member) []runChart {
	var out []runChart
	from, to := float64(m.d.Start.UnixNano())/1e9, float64(m.d.End.UnixNano())/1e9
	if !(to > from) {
		return nil
	}
	w := chart.BucketWidth(to-from, 1, maxChartPoints)
	for _, mem := range []bool{false, true} {
		rc := runChart{run: m.name, memory: mem}
		names := cpuMetrics
		scale := 1.0
		if mem {
			names, scale = memMetricsChart, 1e-6
		}
		for _, t := range targetsOf(m.series, m.statuses) {
			if t.Kind == mondata.KindHost && m.roleOf(t.Name) == mondata.RoleUnknown {
				continue
			}
			var s *core.Series
			for _, want := range names {
				for _, x := range t.Series {
					if x.Metric == want && len(x.Points) > 0 && s == nil {
						s = x
					}
				}
			}
			if s == nil {
				continue
			}
			var xs, ys []float64
			for _, p := range s.Points {
				xs, ys = append(xs, float64(p.T.UnixNano())/1e9), append(ys, p.V*scale)
			}
			r := chart.Reduce(xs, ys, nil, from, to, w)
			if !anyFinite(r.Mean) {
				continue
			}
			rc.lines = append(rc.lines, chartLine{name: t.Name, x: r.X, y: r.Mean})
		}
		if len(rc.lines) == 0 {
			continue
		}
		for _, p := range m.d.Phases {
			rc.spans = append(rc.spans, chart.Span{From: float64(p.Start.UnixNano()) / 1e9, To: float64(p.End.UnixNano()) / 1e9, Label: p.Name})
		}
		out = append(out, rc)
	}
	return out
}

func anyFinite(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return true
		}
	}
	return false
}

// figure draws the chart.
func (rc runChart) figure(i int, wd *words) *doc.Figure {
	what, axis, unit := "CPU", "CPU (%)", "%"
	if rc.memory {
		what, axis, unit = wd.W("Memory"), wd.W("Memory (MB)"), ""
	}
	c := &chart.Chart{ID: fmt.Sprintf("study-run-%d-%s", i, unitKey(rc.memory)), Title: wd.T("%s per service, %s", what, rc.run), XKind: chart.Time,
		Y: chart.Axis{Label: axis, Unit: unit}, Spans: rc.spans, Loc: wd.loc}
	for _, l := range rc.lines {
		c.Series = append(c.Series, chart.Series{Name: l.name, X: l.x, Y: l.y})
	}
	return &doc.Figure{Name: c.ID, Title: c.Title, SVG: c.SVG()}
}

func unitKey(mem bool) string {
	if mem {
		return "memory"
	}
	return "cpu"
}
