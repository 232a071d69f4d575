package report

import (
	"github.com/plateau-perf/plateau/internal/analysis"
	"math"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// target is one monitored target's series.
type target struct {
	name, kind string
	byMetric   map[string]*core.Series
	metrics    []string // in file order
	status     *mondata.TargetStatus
}

// role is what the target is to the test (unknown: the system under test).
func (t *target) role() mondata.Role {
	if t.status == nil {
		return mondata.RoleUnknown
	}
	return t.status.Role
}

// get returns the first of the named metrics the target has.
func (t *target) get(names ...string) *core.Series {
	for _, n := range names {
		if s := t.byMetric[n]; s != nil && len(s.Points) > 0 {
			return s
		}
	}
	return nil
}

// monTargets groups the monitor series by target, in the order the session
// started them.
func (b *builder) monTargets() []*target { return groupTargets(b.in.targets, b.in.series) }

// groupTargets groups monitor series by target, statuses first.
func groupTargets(targets []mondata.TargetStatus, series []core.Series) []*target {
	var out []*target
	idx := map[string]*target{}
	add := func(name, kind string) *target {
		if t := idx[name]; t != nil {
			return t
		}
		t := &target{name: name, kind: kind, byMetric: map[string]*core.Series{}}
		idx[name] = t
		out = append(out, t)
		return t
	}
	for i := range targets {
		st := &targets[i]
		add(st.Name, st.Kind).status = st
	}
	for i := range series {
		s := &series[i]
		t := add(s.Target, s.Kind)
		if t.kind == "" {
			t.kind = s.Kind
		}
		if _, dup := t.byMetric[s.Metric]; !dup {
			t.metrics = append(t.metrics, s.Metric)
		}
		t.byMetric[s.Metric] = s
	}
	return out
}

// rstat summarises one series over a span (for the report's tables; the
// same statistics as resources.Stat over any span).
type rstat struct {
	Min, Mean, Max, First, Last float64
	n                           int
}

// statsOver summarises the finite points of s in [from, to).
func statsOver(s *core.Series, from, to time.Time) (rstat, bool) {
	pts := s.Points
	i := sort.Search(len(pts), func(i int) bool { return !pts[i].T.Before(from) })
	st := rstat{Min: math.Inf(1), Max: math.Inf(-1)}
	sum := 0.0
	for ; i < len(pts) && pts[i].T.Before(to); i++ {
		v := pts[i].V
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if st.n == 0 {
			st.First = v
		}
		st.Last = v
		st.Min, st.Max = math.Min(st.Min, v), math.Max(st.Max, v)
		sum += v
		st.n++
	}
	if st.n == 0 {
		return rstat{}, false
	}
	st.Mean = sum / float64(st.n)
	for _, p := range []*float64{&st.Min, &st.Mean, &st.Max, &st.First, &st.Last} {
		*p = math.Round(*p*1000) / 1000
	}
	return st, true
}

// resourceEntries computes summary.json's resources with the resources
// analysis, names redacted.
func (b *builder) resourceEntries() []resources.Entry {
	es := resources.Summarize(b.in.series, b.d.Phases)
	for i := range es {
		es[i].Target = b.red.String(es[i].Target)
		if es[i].Phase != nil {
			n := b.red.String(*es[i].Phase)
			es[i].Phase = &n
		}
	}
	if es == nil {
		es = []resources.Entry{}
	}
	return es
}

// line is one metric drawn in a resource panel.
type line struct {
	metrics []string // first present wins
	name    string
	color   string
	dash    bool
	// asIs keeps the name as the kernel calls the CPU state (user,
	// system, iowait, steal) in every language.
	asIs bool
}

// panel is one resource chart of a target.
type panel struct {
	key     string // groups the same chart of several targets into a grid
	title   string
	axis    chart.Axis
	stacked bool
	lines   []line
	note    string
	// raw marks a panel of one metric named by its identifier (a
	// Prometheus series): its title and line keep the name as monitored;
	// every other panel's words are the catalogue's.
	raw bool
}

// kbToBytes reports whether a series is in jstat's KB and must be scaled.
func kbToBytes(s *core.Series) float64 { return analysis.KBToBytes(s) }

// panelsFor lists the charts for a target of the given kind.
func panelsFor(t *target) []panel {
	cpuPct := chart.Axis{Label: key("CPU (%)"), Unit: "%", Min: 0, Max: 100, Fixed: true}
	mem := chart.Axis{Label: key("Memory"), Unit: "bytes"}
	switch t.kind {
	case mondata.KindHost:
		return []panel{
			{key: "cpu", title: key("CPU"), axis: cpuPct, stacked: true, note: key("stacked; the white space above is idle"),
				lines: []line{{metrics: []string{"cpu_user_pct"}, name: "user", asIs: true, color: "#4e79a7"}, {metrics: []string{"cpu_system_pct"}, name: "system", asIs: true, color: "#e15759"},
					{metrics: []string{"cpu_iowait_pct"}, name: "iowait", asIs: true, color: "#edc948"}, {metrics: []string{"cpu_steal_pct"}, name: "steal", asIs: true, color: "#b07aa1"}}},
			{key: "memory", title: key("Memory"), axis: mem, lines: []line{{metrics: []string{"mem_used_bytes"}, name: key("used"), color: "#4e79a7"},
				{metrics: []string{"mem_cached_bytes"}, name: key("cached"), color: "#76b7b2"}, {metrics: []string{"mem_total_bytes"}, name: key("total"), color: "#777", dash: true}}},
			{key: "network", title: key("Network"), axis: chart.Axis{Label: key("Network"), Unit: "bytes/s"}, lines: []line{
				{metrics: []string{"net_rx_bytes_per_s"}, name: key("received"), color: "#e15759"}, {metrics: []string{"net_tx_bytes_per_s"}, name: key("sent"), color: "#4e79a7"}}},
			{key: "disk", title: key("Disk"), axis: chart.Axis{Label: key("Disk"), Unit: "bytes/s"}, lines: []line{
				{metrics: []string{"disk_read_bytes_per_s"}, name: key("read"), color: "#59a14f"}, {metrics: []string{"disk_write_bytes_per_s"}, name: key("written"), color: "#f28e2b"}}},
		}
	case mondata.KindProcess, mondata.KindCgroup:
		cpu := panel{key: "cpu", title: key("CPU"), axis: chart.Axis{Label: key("CPU (% of one core)"), Unit: "%"}, stacked: true, note: key("stacked"),
			lines: []line{{metrics: []string{"cpu_user_pct"}, name: "user", asIs: true, color: "#4e79a7"}, {metrics: []string{"cpu_system_pct"}, name: "system", asIs: true, color: "#e15759"}}}
		if t.get("cpu_user_pct") == nil {
			cpu = panel{key: "cpu", title: key("CPU"), axis: chart.Axis{Label: key("CPU (% of one core)"), Unit: "%"}, lines: []line{{metrics: []string{"cpu_pct"}, name: key("CPU"), color: "#4e79a7"}}}
		}
		return []panel{cpu,
			{key: "memory", title: key("Memory"), axis: mem, lines: []line{{metrics: []string{"rss_bytes", "memory_bytes"}, name: key("used"), color: "#4e79a7"},
				{metrics: []string{"memory_working_set_bytes"}, name: key("working set"), color: "#76b7b2"},
				{metrics: []string{"memory_limit_bytes"}, name: key("limit"), color: "#777", dash: true}}},
			{key: "io", title: key("I/O"), axis: chart.Axis{Label: key("I/O"), Unit: "bytes/s"}, lines: []line{
				{metrics: []string{"io_read_bytes_per_s"}, name: key("read"), color: "#59a14f"}, {metrics: []string{"io_write_bytes_per_s"}, name: key("written"), color: "#f28e2b"}}},
		}
	case mondata.KindJVM:
		return []panel{
			{key: "heap", title: key("JVM heap"), axis: mem, lines: []line{{metrics: []string{"EU"}, name: key("young used (EU)"), color: "#edc948"},
				{metrics: []string{"OU"}, name: key("old used (OU)"), color: "#e15759"}, {metrics: []string{"heap_used_bytes"}, name: key("heap used"), color: "#4e79a7"}}},
			{key: "gc", title: key("Garbage collections (cumulative)"), axis: chart.Axis{Label: key("Collections since start"), Unit: ""}, lines: []line{
				{metrics: []string{"YGC"}, name: key("young (YGC)"), color: "#4e79a7"}, {metrics: []string{"FGC"}, name: key("full (FGC)"), color: "#e15759"},
				{metrics: []string{"CGC"}, name: key("concurrent (CGC)"), color: "#59a14f"}}},
		}
	case mondata.KindPostgres:
		return []panel{
			{key: "connections", title: key("Database connections"), axis: chart.Axis{Label: key("Connections"), Unit: ""}, lines: []line{
				{metrics: []string{"connections_total"}, name: key("total"), color: "#4e79a7"}, {metrics: []string{"connections_active"}, name: key("active"), color: "#e15759"},
				{metrics: []string{"connections_idle_in_tx"}, name: key("idle in transaction"), color: "#edc948"}, {metrics: []string{"connections_max"}, name: key("max"), color: "#777", dash: true}}},
			{key: "transactions", title: key("Transactions"), axis: chart.Axis{Label: key("Per second"), Unit: ""}, lines: []line{
				{metrics: []string{"xact_commit_per_s"}, name: key("commits/s"), color: "#59a14f"}, {metrics: []string{"xact_rollback_per_s"}, name: key("rollbacks/s"), color: "#e15759"}}},
		}
	}
	// Any other kind (Prometheus, imports): one chart per unlabelled metric,
	// at most four.
	var ps []panel
	for _, m := range t.metrics {
		if strings.Contains(m, "{") || len(ps) == 4 {
			continue
		}
		s := t.byMetric[m]
		ps = append(ps, panel{key: "m:" + m, title: m, axis: chart.Axis{Label: unitLabel(m, s.Unit), Unit: s.Unit},
			lines: []line{{metrics: []string{m}, name: m, color: "#4e79a7"}}, raw: true})
	}
	return ps
}

// key marks a literal as a message key of the catalogue, worded where it
// is rendered (b.W); the catalogue's test reads every key(…) as it reads
// T and W.
func key(s string) string { return s }

func unitLabel(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}

// panelChart draws one panel of one target; nil when none of its metrics
// was recorded.
func (b *builder) panelChart(t *target, p panel, grid bool) *doc.Figure {
	word := b.W
	if p.raw {
		word = func(s string) string { return s }
	}
	c := b.timeChart(b.red.String(t.name) + " — " + word(p.title))
	c.Y = p.axis
	c.Y.Label = word(p.axis.Label)
	if grid {
		c.Width, c.Height = 600, 270
	}
	from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
	w := chart.BucketWidth(to-from, 1, maxBuckets)
	if grid {
		w = chart.BucketWidth(to-from, 1, maxBuckets/2)
	}
	from = onSamplingClock(from, w, firstSample(t, p))
	reduced := chart.Reduced{}
	for _, l := range p.lines {
		s := t.get(l.metrics...)
		if s == nil {
			continue
		}
		name := word(l.name)
		if l.asIs {
			name = l.name
		}
		// Network totals leave loopback out; when they are all zero and
		// loopback carried traffic (a system under test on this host, as in
		// the demo), draw loopback rather than an empty chart.
		if lo := t.get(s.Metric + "{iface=lo}"); allZero(s) && lo != nil && !allZero(lo) {
			s, name = lo, name+b.W(" (loopback)")
		}
		k := kbToBytes(s)
		x, y := make([]float64, len(s.Points)), make([]float64, len(s.Points))
		for i, pt := range s.Points {
			x[i], y[i] = unix(pt.T), pt.V*k
		}
		r := chart.Reduce(x, y, nil, from, to, w)
		ser := chart.Series{Name: name, Color: l.color, X: r.X, Y: r.Mean, Dash: l.dash, Stack: p.stacked}
		// Envelopes of more than two overlapping lines (a heap's sawtooth
		// generations) would hide each other.
		if !p.stacked && !l.dash && len(p.lines) <= 2 {
			ser.Lo, ser.Hi = band(r, true), band(r, false)
		}
		if !p.stacked && !l.dash && len(p.lines) == 1 {
			ser.Width = 2
		}
		c.Series = append(c.Series, ser)
		if r.Reduced {
			reduced = r
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	note := ""
	if p.note != "" {
		note = " (" + b.W(p.note) + ")"
	}
	return b.figure(t.name+"-"+p.key, c, b.T("%s of %s%s.", word(p.title), b.red.String(t.name), note)+b.bucketNote(reduced))
}

// kindTitle names a group of targets in the document's language.
func (b *builder) kindTitle(kind string) string {
	switch kind {
	case mondata.KindHost:
		return b.W("Hosts")
	case mondata.KindProcess:
		return b.W("Processes")
	case mondata.KindCgroup:
		return b.W("Containers and services (cgroups)")
	case mondata.KindJVM:
		return b.W("JVMs")
	case mondata.KindPostgres:
		return b.W("Databases (PostgreSQL)")
	case mondata.KindPrometheus:
		return b.W("Prometheus endpoints")
	case mondata.KindPromQL:
		return b.W("PromQL queries")
	case mondata.KindRecipe:
		return b.W("PromQL recipes")
	case mondata.KindMySQL:
		return b.W("Databases (MySQL/MariaDB)")
	case mondata.KindCloudWatch:
		return b.W("CloudWatch metrics")
	case "":
		return b.W("Other targets")
	}
	return b.T("Targets of kind %s", kind)
}

func (b *builder) resources() doc.Section {
	sec := doc.Section{ID: SecResources, Title: b.W("Resources")}
	ts := b.monTargets()
	if b.in.monErr != nil {
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: b.W("Monitor data could not be read: ") + b.red.String(b.in.monErr.Error())})
	}
	withData := 0
	for _, t := range ts {
		if len(t.metrics) > 0 {
			withData++
		}
	}
	if len(b.in.targets) > 0 {
		// Every monitor with its state (started or why not, gaps, own
		// cost), so CI can see a monitor that failed to start.
		b.s.Monitors = b.in.targets
	}
	if withData == 0 {
		if len(ts) == 0 {
			sec.Blocks = append(sec.Blocks, noData(b.W("No monitor data: the plan watched no target. Add host, process, cgroup, jvm or postgres targets under monitor: to see what the load cost.")))
		} else {
			sec.Blocks = append(sec.Blocks, noData(b.W("No monitor data: none of the monitored targets could be read (see the appendix).")))
		}
		sec.Blocks = append(sec.Blocks, b.notesWithoutData(ts)...)
		sec.Blocks = append(sec.Blocks, b.topSQL()...)
		return sec
	}
	b.s.Resources = b.resourceEntries()
	clock, phases := b.W("sampled on the same clock as the load"), b.W(" Phase boundaries are drawn as vertical lines. The tables give each metric's mean and maximum per phase.")
	if b.d.Total == nil || b.d.Total.Count == 0 {
		clock = b.W("with no load recorded beside them")
	}
	if len(b.d.Phases) == 0 {
		phases = b.W(" The run records no phases: the tables give each metric's mean and maximum over the run.")
	}
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: b.T("%d monitored %s, %s. Charts of the same kind are laid out side by side, one per target.%s",
		withData, map[bool]string{true: b.W("target"), false: b.W("targets")}[withData == 1], clock, phases)})
	// Group targets by kind, keeping first-seen order.
	var kinds []string
	byKind := map[string][]*target{}
	for _, t := range ts {
		if len(t.metrics) == 0 {
			continue
		}
		if _, ok := byKind[t.kind]; !ok {
			kinds = append(kinds, t.kind)
		}
		byKind[t.kind] = append(byKind[t.kind], t)
	}
	for _, k := range kinds {
		group := byKind[k]
		var names []string
		for _, t := range group {
			names = append(names, b.red.String(t.name))
		}
		sec.Blocks = append(sec.Blocks, &doc.Heading{Text: b.kindTitle(k) + ": " + strings.Join(names, ", ")})
		if labelledKind(k) {
			sec.Blocks = append(sec.Blocks, b.labelledBlocks(group)...)
			continue
		}
		// One grid per chart kind, one figure per target (reference 000's
		// four-server grids).
		var keys []string
		panels := map[string]panel{}
		for _, t := range group {
			for _, p := range panelsFor(t) {
				if _, ok := panels[p.key]; !ok {
					keys = append(keys, p.key)
					panels[p.key] = p
				}
			}
		}
		for _, key := range keys {
			var figs []*doc.Figure
			for _, t := range group {
				for _, p := range panelsFor(t) {
					if p.key == key {
						if f := b.panelChart(t, p, len(group) > 1); f != nil {
							figs = append(figs, f)
						}
					}
				}
			}
			switch {
			case len(figs) == 1:
				sec.Blocks = append(sec.Blocks, figs[0])
			case len(figs) > 1:
				title := panels[key].title
				if !panels[key].raw {
					title = b.W(title)
				}
				sec.Blocks = append(sec.Blocks, &doc.Grid{Title: title, Figures: figs})
			}
		}
		for _, t := range group {
			if tb := b.resourceTable(t); tb != nil {
				sec.Blocks = append(sec.Blocks, tb)
			}
		}
	}
	sec.Blocks = append(sec.Blocks, b.notesWithoutData(ts)...)
	sec.Blocks = append(sec.Blocks, b.topSQL()...)
	b.judgeResources()
	b.judgeServices()
	b.judgeRestarts()
	b.judgeNetwork()
	return sec
}

// keyMetric is a column pair of a target's per-phase table.
type keyMetric struct {
	name    string
	metrics []string
	counter bool // cumulative: show the increase over the phase
	busy    bool // CPU busy = 100 − idle when no busy metric
	raw     bool // named by the metric's own identifier
}

// kmName is a key metric's column name: a named quantity in the
// document's language, a monitored metric by its own name.
func (b *builder) kmName(km keyMetric) string {
	if km.raw {
		return km.name
	}
	return b.W(km.name)
}

func keyMetrics(t *target) []keyMetric {
	switch t.kind {
	case mondata.KindHost:
		return []keyMetric{{name: key("CPU busy"), metrics: []string{"cpu_busy_pct"}, busy: true}, {name: key("Memory used"), metrics: []string{"mem_used_bytes"}},
			{name: key("Net in"), metrics: []string{"net_rx_bytes_per_s"}}, {name: key("Net out"), metrics: []string{"net_tx_bytes_per_s"}}}
	case mondata.KindProcess, mondata.KindCgroup:
		return []keyMetric{{name: key("CPU"), metrics: []string{"cpu_pct"}}, {name: key("Memory"), metrics: []string{"rss_bytes", "memory_bytes"}},
			{name: key("Threads"), metrics: []string{"threads", "pids"}}}
	case mondata.KindJVM:
		return []keyMetric{{name: key("Heap used"), metrics: []string{"heap_used_bytes"}}, {name: key("Old used"), metrics: []string{"OU"}},
			{name: key("Young GCs"), metrics: []string{"YGC"}, counter: true}, {name: key("Full GCs"), metrics: []string{"FGC"}, counter: true},
			{name: key("GC time"), metrics: []string{"gc_time_pct"}}}
	case mondata.KindPostgres:
		return []keyMetric{{name: key("Connections"), metrics: []string{"connections_total"}}, {name: key("Active"), metrics: []string{"connections_active"}},
			{name: key("Commits/s"), metrics: []string{"xact_commit_per_s"}}}
	}
	var out []keyMetric
	for _, m := range t.metrics {
		if !strings.Contains(m, "{") && len(out) < 4 {
			out = append(out, keyMetric{name: m, metrics: []string{m}, raw: true})
		}
	}
	return out
}

// busySeries derives CPU busy % from idle when the host has no busy metric.
func busySeries(t *target) *core.Series {
	return resources.BusySeries(resourceTargetsOf([]*target{t})[0])
}

func (km keyMetric) series(t *target) *core.Series {
	if km.busy {
		return busySeries(t)
	}
	return t.get(km.metrics...)
}

// resourceTable is the per-phase mean/max table of one target.
func (b *builder) resourceTable(t *target) *doc.Table {
	kms := keyMetrics(t)
	type col struct {
		km keyMetric
		s  *core.Series
	}
	var cols []col
	for _, km := range kms {
		if s := km.series(t); s != nil {
			cols = append(cols, col{km, s})
		}
	}
	if len(cols) == 0 {
		return nil
	}
	tb := &doc.Table{Caption: b.red.String(t.name) + b.W(" per phase"), Columns: []doc.Column{{Name: b.W("Phase")}}}
	for _, c := range cols {
		if c.km.counter {
			tb.Columns = append(tb.Columns, doc.Column{Name: b.kmName(c.km), Align: doc.Right})
			continue
		}
		u := ""
		if c.s.Unit == "%" {
			u = " (%)"
		}
		tb.Columns = append(tb.Columns, doc.Column{Name: b.kmName(c.km) + b.W(" mean") + u, Align: doc.Right}, doc.Column{Name: b.W("max"), Align: doc.Right})
	}
	row := func(name string, from, to time.Time, total bool) {
		r := doc.Row{Total: total, Cells: []doc.Cell{{Text: name}}}
		for _, c := range cols {
			st, ok := statsOver(c.s, from, to)
			k := kbToBytes(c.s)
			unit := c.s.Unit
			if k != 1 {
				unit = "bytes"
			}
			switch {
			case !ok && c.km.counter:
				r.Cells = append(r.Cells, doc.Cell{Text: "–"})
			case !ok:
				r.Cells = append(r.Cells, doc.Cell{Text: "–"}, doc.Cell{Text: "–"})
			case c.km.counter:
				r.Cells = append(r.Cells, doc.Cell{Text: b.count(int64(math.Round(st.Last - st.First)))})
			default:
				f := func(v float64) string {
					if unit == "%" {
						return b.num3(v)
					}
					return b.valueU(v*k, unit)
				}
				r.Cells = append(r.Cells, doc.Cell{Text: f(st.Mean)}, doc.Cell{Text: f(st.Max)})
			}
		}
		tb.Rows = append(tb.Rows, r)
	}
	for _, p := range b.d.Phases {
		row(b.red.String(p.Name), p.Start, p.End, false)
	}
	row(b.W("Whole run"), b.d.Start, b.d.End.Add(time.Nanosecond), len(b.d.Phases) > 0)
	for _, c := range cols {
		if c.km.counter {
			tb.Note = b.W("GC columns count the collections that happened during the phase.")
		}
	}
	return tb
}

// firstSample is the time of the panel's earliest sample (NaN without any).
// onSamplingClock moves a bucket grid starting at from so that its buckets
// are centred on the sampling clock whose first sample is at first (NaN:
// no sample, from unchanged). Monitors and scrapes sample every interval at
// a fixed phase, and a grid offset from it would put two samples in one
// bucket and none in the next, drawing false gaps.
func onSamplingClock(from, w, first float64) float64 {
	if math.IsNaN(first) {
		return from
	}
	return first - w/2 - math.Ceil((first-w/2-from)/w)*w
}

func firstSample(t *target, p panel) float64 {
	first := math.NaN()
	for _, l := range p.lines {
		if s := t.get(l.metrics...); s != nil && len(s.Points) > 0 {
			if x := unix(s.Points[0].T); math.IsNaN(first) || x < first {
				first = x
			}
		}
	}
	return first
}

// allZero reports whether every finite value of s is 0.
func allZero(s *core.Series) bool {
	for _, p := range s.Points {
		if p.V != 0 && !math.IsNaN(p.V) {
			return false
		}
	}
	return true
}

// loopbackTarget reports whether the run's target is on this machine's
// loopback interface (127.0.0.0/8, ::1, localhost).
func (b *builder) loopbackTarget() bool {
	t := b.d.Info.Target
	if t == "" {
		return false
	}
	if u, err := url.Parse(t); err == nil && u.Host != "" {
		t = u.Hostname()
	}
	if t == "localhost" {
		return true
	}
	ip := net.ParseIP(t)
	return ip != nil && ip.IsLoopback()
}
