package importer

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// SmallSample is the sample count below which a label's percentiles are
// marked in the notes with their n.
const SmallSample = 100

// Percentile definitions of the source tools, each over values sorted in
// increasing order, p in percent (0, 100].

// LegacyPercentile is Apache Commons Math's Percentile with
// EstimationType.LEGACY, which JMeter's dashboard (statistics.json,
// aggregate report) uses: position p·(n+1)/100, the minimum below
// position 1, the maximum from position n, linear interpolation between.
func LegacyPercentile(sorted []float64, p float64) float64 {
	n := float64(len(sorted))
	if n == 0 {
		return 0
	}
	pos := p * (n + 1) / 100
	switch {
	case pos < 1:
		return sorted[0]
	case pos >= n:
		return sorted[len(sorted)-1]
	}
	lo := math.Floor(pos)
	d := pos - lo
	return sorted[int(lo)-1] + d*(sorted[int(lo)]-sorted[int(lo)-1])
}

// legacyRanks are the 0-based ranks LegacyPercentile reads.
func legacyRanks(n int, p float64) (int, int) {
	pos := p * (float64(n) + 1) / 100
	switch {
	case pos < 1:
		return 0, 0
	case pos >= float64(n):
		return n - 1, n - 1
	}
	lo := int(math.Floor(pos))
	return lo - 1, lo
}

// k6Ranks are the 0-based ranks K6Percentile reads.
func k6Ranks(n int, p float64) (int, int) {
	if n == 1 {
		return 0, 0
	}
	i := p / 100 * float64(n-1)
	return int(math.Floor(i)), int(math.Ceil(i))
}

// K6Percentile is k6's TrendSink.P: position p/100·(n−1) over all values,
// linear interpolation between the values either side.
func K6Percentile(sorted []float64, p float64) float64 {
	switch len(sorted) {
	case 0:
		return 0
	case 1:
		return sorted[0]
	}
	i := p / 100 * float64(len(sorted)-1)
	lo, hi := sorted[int(math.Floor(i))], sorted[int(math.Ceil(i))]
	return lo + (hi-lo)*(i-math.Floor(i))
}

// FigureSpec says how a source tool computes its whole-run figures, for an
// Aggregator that keeps the raw response times needed to compute them
// exactly (Aggregator.CollectFigures).
type FigureSpec struct {
	Tool, Method                   string // rundir.SourceFigures.Tool, PercentileMethod
	PercentileRule, ThroughputRule string
	// Percentile is the tool's definition.
	Percentile func(sorted []float64, p float64) float64
	// Ranks are the 0-based ranks of the n sorted values that Percentile
	// reads for p (nil: the values are sorted in full), so that only those
	// order statistics are put in place (selectRanks).
	Ranks func(n int, p float64) (lo, hi int)
	// Window keeps only each label's last Window response times in file
	// order, as JMeter's dashboard does (jmeter.reportgenerator.
	// statistic_window, 20,000); 0 keeps all (k6).
	Window int
	// LabelSpans divides each label's count by that label's own span, first
	// start to last end (JMeter); otherwise the run's span is used.
	LabelSpans bool
}

// JMeterFigures is JMeter's dashboard: Commons Math LEGACY percentiles over
// each label's last 20,000 samples; throughput over the label's own span,
// the total's over the span of the samples it counts (transaction samples
// are neither counted in the total nor widen its span).
var JMeterFigures = FigureSpec{Tool: "JMeter", Method: "jmeter-legacy-window",
	PercentileRule: "JMeter's dashboard definition: Apache Commons Math LEGACY (position p·(n+1), linear interpolation) over each label's last 20,000 samples (jmeter.reportgenerator.statistic_window)",
	ThroughputRule: "JMeter's: a label's count over that label's own span (first start to last end); the total's over the span of the samples it counts (transaction samples left out of both)",
	Percentile:     LegacyPercentile, Ranks: legacyRanks, Window: 20000, LabelSpans: true}

// K6Figures is k6's end-of-test summary: linear interpolation over all
// values; rates over the run.
var K6Figures = FigureSpec{Tool: "k6", Method: "k6-linear",
	PercentileRule: "k6's definition (TrendSink): position p·(n−1) over all values, linear interpolation",
	ThroughputRule: "the run's: count over the run's span (first request start to last end)",
	Percentile:     K6Percentile, Ranks: k6Ranks}

// GatlingFigures is Gatling's report (js/stats.json): its percentiles are
// read from a T-Digest of all response times, which for the sizes of one
// run lies on linear interpolation between order statistics (position
// p·(n−1), k6's definition), and stats.json rounds them to whole
// milliseconds; every label's and the total's rate is its count over the
// run's duration in whole seconds (Run.SetFigureSpans).
var GatlingFigures = FigureSpec{Tool: "Gatling", Method: "gatling-linear",
	PercentileRule: "Gatling's report: its T-Digest's percentiles, which are linear interpolation between order statistics (position p·(n−1)) over all values; Gatling prints them rounded to whole ms",
	ThroughputRule: "Gatling's: count over the run's duration rounded up to whole seconds (first user start or request to last)",
	Percentile:     K6Percentile, Ranks: k6Ranks}

// figLabel is one label's (or the total's) raw figures.
type figLabel struct {
	vals           []float64 // ms; a ring of the last Window values when Window > 0
	next           int
	count          int64
	minStart       int64
	maxEnd         int64
	workload, name string
	tx, total      bool
}

func (f *figLabel) add(v float64, start, end int64, window int) {
	f.count++
	f.minStart, f.maxEnd = min(f.minStart, start), max(f.maxEnd, end)
	if window > 0 && len(f.vals) == window {
		f.vals[f.next] = v
		f.next = (f.next + 1) % window
		return
	}
	f.grow(1, window)
	f.vals = append(f.vals, v)
}

// grow makes room for n more values by doubling, up to the window: append
// grows a large slice by a quarter at a time, which allocated five times
// the ring's final size on its way there.
func (f *figLabel) grow(n, window int) {
	need := len(f.vals) + n
	if need <= cap(f.vals) {
		return
	}
	c := max(need, 2*cap(f.vals), 256)
	if window > 0 {
		c = min(c, window)
	}
	f.vals = append(make([]float64, 0, c), f.vals...)
}

// figures collects the raw response times an Aggregator's source tool
// needs for its own figures. Fed in file order from one goroutine.
type figures struct {
	spec   FigureSpec
	labels map[figKey]*figLabel
	total  *figLabel
	// The last sample's label, kept: a tool's samples come in runs of one.
	lastKey figKey
	last    *figLabel
	// shared is the only label whose values the total has had, while it
	// is: the total's values are then that label's, in the same order,
	// and are not kept twice (a run of one request: beside k6 at its
	// peak, growing the second copy cost as much as the rest of add).
	shared *figLabel
}

type figKey struct {
	label int32
	tx    bool
}

func newFigures(spec FigureSpec, workload string) *figures {
	return &figures{spec: spec, labels: map[figKey]*figLabel{},
		total: &figLabel{workload: workload, total: true, minStart: math.MaxInt64, maxEnd: math.MinInt64}}
}

func (f *figures) add(s *Rec, us int64, a *Aggregator) {
	start, end := s.End-us*1e3, s.End
	v := float64(us) / 1000
	k := figKey{s.Label, s.Tx}
	l := f.last
	if l == nil || k != f.lastKey {
		if l = f.labels[k]; l == nil {
			l = &figLabel{workload: a.workload, name: a.labels.Name(s.Label), tx: s.Tx, minStart: math.MaxInt64, maxEnd: math.MinInt64}
			f.labels[k] = l
		}
		f.lastKey, f.last = k, l
	}
	l.add(v, start, end, f.spec.Window)
	if !s.Tx {
		f.addTotal(l, v, start, end)
	}
}

// addTotal adds a value of label l to the total, whose values are l's
// own while l is the only label that has fed it.
func (f *figures) addTotal(l *figLabel, v float64, start, end int64) {
	t := f.total
	if f.shared == nil && t.count == 0 {
		f.shared = l
	}
	if f.shared == l {
		t.count++
		t.minStart, t.maxEnd = min(t.minStart, start), max(t.maxEnd, end)
		return
	}
	if o := f.shared; o != nil {
		// A second label: the total's values become its own.
		t.vals, t.next = slices.Clone(o.vals), o.next
		f.shared = nil
	}
	t.add(v, start, end, f.spec.Window)
}

// result computes the figures.
func (f *figures) result(workers int) *rundir.SourceFigures {
	sf := &rundir.SourceFigures{Tool: f.spec.Tool, PercentileMethod: f.spec.Method,
		PercentileRule: f.spec.PercentileRule, ThroughputRule: f.spec.ThroughputRule}
	ls := make([]*figLabel, 0, len(f.labels)+1)
	for _, l := range f.labels {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].name != ls[j].name {
			return ls[i].name < ls[j].name
		}
		return ls[i].tx
	})
	work := ls // whose values are put in order
	if f.total.count > 0 {
		ls = append(ls, f.total)
		if f.shared == nil {
			work = ls
		}
	}
	// Ordering each label's values (20,000 for JMeter) is most of the
	// work: only the ranks the percentiles read are put in place, on up to
	// workers goroutines.
	pcts := []float64{50, 90, 95, 99}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(work)) {
		wg.Go(func() {
			var ranks []int
			var counts []int32
			for i := int(next.Add(1)) - 1; i < len(work); i = int(next.Add(1)) - 1 {
				v := work[i].vals
				if f.spec.Ranks == nil || len(v) == 0 {
					sort.Float64s(v)
					continue
				}
				ranks = ranks[:0]
				for _, p := range pcts {
					lo, hi := f.spec.Ranks(len(v), p)
					ranks = append(ranks, lo, hi)
				}
				var ok bool
				if counts, ok = countRanks(v, ranks, counts); !ok {
					selectRanks(v, ranks)
				}
			}
		})
	}
	wg.Wait()
	if f.shared != nil {
		f.total.vals = f.shared.vals // ordered as the label's are
	}
	for _, l := range ls {
		pc := func(p float64) *float64 {
			v := math.Round(f.spec.Percentile(l.vals, p)*1e6) / 1e6
			return &v
		}
		out := rundir.SourceLabel{Workload: l.workload, Label: l.name, Tx: l.tx, Total: l.total, Count: l.count,
			P50Ms: pc(pcts[0]), P90Ms: pc(pcts[1]), P95Ms: pc(pcts[2]), P99Ms: pc(pcts[3])}
		if f.spec.LabelSpans && l.maxEnd > l.minStart {
			out.SpanS = float64(l.maxEnd-l.minStart) / 1e9
		}
		sf.Labels = append(sf.Labels, out)
		l.vals = nil
	}
	return sf
}

// CollectFigures makes the aggregator keep what spec needs to compute the
// source tool's own whole-run figures (percentiles by its definition,
// throughput by its denominator); Close hands them to the run, which
// writes them in run.json's source_figures. Memory: Window values per
// label, or every value when Window is 0 (as the tool itself keeps them).
func (a *Aggregator) CollectFigures(spec FigureSpec) {
	a.fig = newFigures(spec, a.workload)
}

// SetFigureSpans gives every label of workload in the run's source
// figures the throughput denominator spanS (s), the source tool's run
// duration when only a side file knows it (k6's summary export), and sets
// the throughput rule's words.
func (r *Run) SetFigureSpans(workload string, spanS float64, rule string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.figures == nil || spanS <= 0 {
		return
	}
	for i := range r.figures.Labels {
		if r.figures.Labels[i].Workload == workload {
			r.figures.Labels[i].SpanS = spanS
		}
	}
	r.figures.ThroughputRule = rule
}

// AddFigures adds a source's own figures to the run (sources that read
// them from the tool's files, like Locust's stats file).
func (r *Run) AddFigures(sf *rundir.SourceFigures) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var small []string
	for _, l := range sf.Labels {
		if l.Count < SmallSample && !l.Total {
			small = append(small, fmt.Sprintf("%s (n = %d)", l.Label, l.Count))
		}
	}
	if len(small) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("%s percentiles from fewer than %d samples say little: %s", sf.Tool, SmallSample, strings.Join(small, ", ")))
	}
	if r.figures == nil {
		r.figures = sf
		return
	}
	if r.figures.PercentileMethod != sf.PercentileMethod {
		r.figures.PercentileMethod = "mixed"
		r.figures.Tool += ", " + sf.Tool
		r.figures.PercentileRule += "; " + sf.PercentileRule
		r.figures.ThroughputRule += "; " + sf.ThroughputRule
	}
	r.figures.Labels = append(r.figures.Labels, sf.Labels...)
}

// countSpan bounds the spread (max − min + 1) of values countRanks counts:
// 64 Ki whole milliseconds, a minute, take a 256 KB count table.
const countSpan = 1 << 16

// countRanks is selectRanks for values that are whole numbers spread over
// fewer than countSpan, as the milliseconds JMeter writes are: one pass
// counts each value and the ranks are read off the running count, where a
// quickselect partitions the values several times with a mispredicted
// branch on each. It writes the value of rank r to v[r] for each r in
// ranks (v's other positions are left as they were, so v is no longer a
// permutation of its values) and returns counts, its reusable table; it
// reports false, changing nothing in v, when the values do not qualify.
// It sorts ranks, as selectRanks does.
func countRanks(v []float64, ranks []int, counts []int32) ([]int32, bool) {
	if len(v) < 256 { // a quickselect is as cheap
		return counts, false
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		if x != math.Trunc(x) || x < -1<<52 || x > 1<<52 { // also NaN and ±Inf
			return counts, false
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	if hi-lo >= countSpan {
		return counts, false
	}
	span := int(hi-lo) + 1
	if cap(counts) < span {
		counts = make([]int32, span, countSpan)
	}
	counts = counts[:span]
	clear(counts)
	base := int64(lo)
	for _, x := range v {
		counts[int64(x)-base]++
	}
	slices.Sort(ranks)
	below, b := 0, 0 // values in the buckets before b
	for _, r := range ranks {
		for below+int(counts[b]) <= r {
			below += int(counts[b])
			b++
		}
		v[r] = float64(base + int64(b))
	}
	return counts, true
}

// selectRanks reorders v so that v[r] is the value of rank r of sorted v
// for each r in ranks (any order, duplicates allowed, 0 ≤ r < len(v)): a
// quickselect for several ranks at once, a few passes over v where a sort
// makes log₂ len(v). v holds no NaN.
func selectRanks(v []float64, ranks []int) {
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	var sel func(lo, hi int, rs []int)
	sel = func(lo, hi int, rs []int) {
		for len(rs) > 0 {
			if hi-lo <= 32 {
				slices.Sort(v[lo:hi])
				return
			}
			a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi-1]
			p := max(min(a, b), min(max(a, b), c)) // median of three
			// Three-way partition: v[lo:lt] < p, v[lt:gt] == p, v[gt:hi] > p.
			lt, i, gt := lo, lo, hi
			for i < gt {
				switch x := v[i]; {
				case x < p:
					v[lt], v[i] = v[i], v[lt]
					lt++
					i++
				case x > p:
					gt--
					v[i], v[gt] = v[gt], v[i]
				default:
					i++
				}
			}
			l := 0
			for l < len(rs) && rs[l] < lt {
				l++
			}
			r := l
			for r < len(rs) && rs[r] < gt {
				r++
			}
			left, right := rs[:l], rs[r:]
			if len(left) > 0 && len(right) > 0 {
				sel(lo, lt, left)
				lo, rs = gt, right
				continue
			}
			if len(left) > 0 {
				hi, rs = lt, left
			} else {
				lo, rs = gt, right
			}
		}
	}
	sel(0, len(v), ranks)
}
