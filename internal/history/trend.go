package history

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/changepoint"
)

// Metric names of the series (Series.Metric).
const (
	MetricP95        = "p95_ms"
	MetricMean       = "mean_ms"
	MetricErrorPct   = "error_pct"
	MetricThroughput = "throughput_rps"
	// MetricKneeThroughput is the capacity knee's throughput (req/s).
	MetricKneeThroughput = "knee_throughput_rps"
	// MetricCPU is a monitored service's mean CPU over the run (%, 100 =
	// one core); MetricCPUPerRequest the CPU it spent per request of the
	// whole run, in CPU-milliseconds.
	MetricCPU           = "cpu_pct"
	MetricCPUPerRequest = "cpu_ms_per_request"
)

// Direction says which way a series gets worse.
type Direction int

// Directions.
const (
	HigherIsWorse Direction = iota // response times, error %, CPU per request
	LowerIsWorse                   // throughput, capacity
)

// worse reports whether a change from before to after is for the worse.
func (d Direction) worse(before, after float64) bool {
	if d == LowerIsWorse {
		return after < before
	}
	return after > before
}

// MarshalText names the direction in history.json.
func (d Direction) MarshalText() ([]byte, error) {
	if d == LowerIsWorse {
		return []byte("lower_is_worse"), nil
	}
	return []byte("higher_is_worse"), nil
}

// UnmarshalText reads a direction from history.json.
func (d *Direction) UnmarshalText(b []byte) error {
	switch string(b) {
	case "lower_is_worse":
		*d = LowerIsWorse
	case "higher_is_worse":
		*d = HigherIsWorse
	default:
		return fmt.Errorf("direction %q is not higher_is_worse or lower_is_worse", b)
	}
	return nil
}

// Series is one figure over the stored runs of one plan.
type Series struct {
	// Key identifies the series: plan, metric, and the label and phase (a
	// label's figures) or the target (a service's resources).
	Plan   string `json:"plan"`
	Metric string `json:"metric"`
	Label  string `json:"label,omitempty"`
	Phase  string `json:"phase,omitempty"`
	Target string `json:"target,omitempty"`
	// Name is the series as a reader names it ("checkout p95 (ms)").
	Name      string    `json:"name"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
	// Points are the runs that have the figure, oldest first; Run indexes
	// Analysis.Runs.
	Points []SeriesPoint `json:"points"`
	// ChangePoints are where the series moved to a new level and stayed,
	// oldest first.
	ChangePoints []ChangePoint `json:"change_points"`
	// Latest is the newest run judged against the last stable segment
	// before it; nil when the series has fewer than two points.
	Latest *Judgement `json:"latest"`
}

// SeriesPoint is one run's value of a series.
type SeriesPoint struct {
	Run   int     `json:"run"`
	RunID string  `json:"run_id"`
	Value float64 `json:"value"`
}

// ChangePoint is one change point of a series, in the series' unit.
type ChangePoint struct {
	// Point indexes Series.Points (the first point at the new level); Run
	// and RunID name that run.
	Point      int     `json:"point"`
	Run        int     `json:"run"`
	RunID      string  `json:"run_id"`
	BeforeMean float64 `json:"before_mean"`
	AfterMean  float64 `json:"after_mean"`
	BeforeRuns int     `json:"before_runs"`
	AfterRuns  int     `json:"after_runs"`
	ChangePct  float64 `json:"change_pct"`
	PValue     float64 `json:"p_value"`
	Worse      bool    `json:"worse"`
}

// Judgement is the latest run against the last stable segment before it.
type Judgement struct {
	Run   int     `json:"run"`
	RunID string  `json:"run_id"`
	Value float64 `json:"value"`
	// Segment is the stretch of points it is compared with ([From, To) of
	// Series.Points): its median and spread, on which the judgement
	// stands, and its mean and sample standard deviation, for the reader.
	// The spread is 1.4826 × the median absolute deviation (the standard
	// deviation of normal data, but one noisy run in the segment does not
	// inflate it and so hide a regression).
	SegmentFrom   int     `json:"segment_from"`
	SegmentTo     int     `json:"segment_to"`
	SegmentMedian float64 `json:"segment_median"`
	SegmentSpread float64 `json:"segment_spread"`
	SegmentMean   float64 `json:"segment_mean"`
	SegmentSD     float64 `json:"segment_sd"`
	// ChangePct is the latest value against the segment's median, in %.
	ChangePct float64 `json:"change_pct"`
	// PValue is the two-sided probability of a value at least this far
	// from the segment's median were the latest run one more run of the
	// segment (Student's t prediction interval on n − 1 degrees of
	// freedom, with the spread above); 1 when the segment has a single
	// run, 0 when it has no spread and the value differs.
	PValue float64 `json:"p_value"`
	// Worse is set when the latest run is significantly worse (PValue ≤
	// Alpha) by more than the threshold (|ChangePct| > ThresholdPct).
	Worse bool `json:"worse"`
}

// Options tunes Analyze.
type Options struct {
	// Alpha is the significance level of change points and of the latest
	// run's judgement; default 0.01.
	Alpha float64
	// MinChangePct is the minimum effect of a change point, in percent;
	// default 5; negative keeps every significant change, a change of
	// spread alone included.
	MinChangePct float64
	// ThresholdPct is how much worse than the last stable segment the
	// latest run must be, in percent, to be Worse; default 5.
	ThresholdPct float64
	// Seed seeds the permutation tests, so a report is reproducible;
	// each series draws from its own stream.
	Seed uint64
	// Label keeps only the series of this label; empty keeps every
	// series.
	Label string
}

// Defaults of Options.
const (
	DefaultAlpha        = 0.01
	DefaultMinChangePct = 5
	DefaultThresholdPct = 5
)

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinChangePct == 0 {
		o.MinChangePct = DefaultMinChangePct
	}
	if o.ThresholdPct == 0 {
		o.ThresholdPct = DefaultThresholdPct
	}
	return o
}

// Analysis is history.json: the runs and every series with its change
// points and the latest run's judgement.
type Analysis struct {
	Options struct {
		Alpha        float64 `json:"alpha"`
		MinChangePct float64 `json:"min_change_pct"`
		ThresholdPct float64 `json:"threshold_pct"`
		Seed         uint64  `json:"seed"`
	} `json:"options"`
	Runs   []RunRef  `json:"runs"`
	Series []*Series `json:"series"`
}

// RunRef is a run as history.json lists it.
type RunRef struct {
	ID      string            `json:"id"`
	Plan    string            `json:"plan"`
	Start   string            `json:"start"`
	Verdict string            `json:"verdict"`
	Tags    map[string]string `json:"tags"`
}

// Worse returns the series whose latest run is significantly worse than
// its last stable segment.
func (a *Analysis) Worse() []*Series {
	var out []*Series
	for _, s := range a.Series {
		if s.Latest != nil && s.Latest.Worse {
			out = append(out, s)
		}
	}
	return out
}

// Analyze draws the series of runs (oldest first) and finds their change
// points.
func Analyze(runs []*Run, opt Options) (*Analysis, error) {
	o := opt.withDefaults()
	a := &Analysis{Series: Extract(runs, o.Label)}
	a.Options.Alpha, a.Options.MinChangePct, a.Options.ThresholdPct, a.Options.Seed = o.Alpha, o.MinChangePct, o.ThresholdPct, o.Seed
	for _, r := range runs {
		a.Runs = append(a.Runs, RunRef{ID: r.ID, Plan: r.Plan, Start: r.Start.Format("2006-01-02T15:04:05Z07:00"), Verdict: r.Verdict, Tags: r.Tags})
	}
	cpo := changepoint.Options{Alpha: o.Alpha, MinChangePct: max(o.MinChangePct, 0)}
	if p := int(math.Ceil(1/o.Alpha)) - 1; p > changepoint.DefaultPermutations {
		cpo.Permutations = p
	}
	// Series are independent (each with its own random stream), so they
	// are analysed in parallel; the result does not depend on the order.
	errs := make([]error, len(a.Series))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(a.Series))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var vals []float64
			for i := range next {
				vals = vals[:0]
				for _, p := range a.Series[i].Points {
					vals = append(vals, p.Value)
				}
				errs[i] = analyzeSeries(a.Series[i], vals, cpo, o)
			}
		}()
	}
	for i := range a.Series {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("history: series %s: %w", a.Series[i].Name, err)
		}
	}
	return a, nil
}

// analyzeSeries finds the change points of s (values vals) and judges
// its latest point.
func analyzeSeries(s *Series, vals []float64, cpo changepoint.Options, o Options) error {
	// One stream per series (PCG's second word), so a series' result does
	// not depend on which other series the store holds.
	rng := rand.New(rand.NewPCG(o.Seed, hashString(s.key())))
	res, err := changepoint.Detect(vals, cpo, rng)
	if err != nil {
		return err
	}
	s.ChangePoints = []ChangePoint{}
	for _, cp := range res.Points {
		pt := s.Points[cp.Index]
		s.ChangePoints = append(s.ChangePoints, ChangePoint{Point: cp.Index, Run: pt.Run, RunID: pt.RunID,
			BeforeMean: cp.Before.Mean, AfterMean: cp.After.Mean, BeforeRuns: cp.Before.Len(), AfterRuns: cp.After.Len(),
			ChangePct: cp.ChangePct, PValue: cp.PValue, Worse: s.Direction.worse(cp.Before.Mean, cp.After.Mean)})
	}
	if len(vals) >= 2 {
		s.Latest = judgeLatest(s, vals, res, o)
	}
	return nil
}

// judgeLatest compares the last point with the last stable segment before
// it: the last segment of the series without its last point. A change
// point needs MinSegment (≥ 2) points after it, so the latest point is
// never a segment of its own: a step at the latest run stays in the last
// segment, which is why it is left out of the segment it is judged
// against.
func judgeLatest(s *Series, vals []float64, res changepoint.Result, o Options) *Judgement {
	n := len(vals)
	from := res.Segments[len(res.Segments)-1].Start
	if from > n-2 {
		from = n - 2
	}
	seg := vals[from : n-1]
	mean, sd := meanSD(seg)
	med, spread := medianSpread(seg)
	last := s.Points[n-1]
	j := &Judgement{Run: last.Run, RunID: last.RunID, Value: last.Value, SegmentFrom: from, SegmentTo: n - 1,
		SegmentMedian: med, SegmentSpread: spread, SegmentMean: mean, SegmentSD: sd}
	if med != 0 {
		j.ChangePct = (last.Value/med - 1) * 100
	}
	j.PValue = predictionP(last.Value, med, spread, len(seg))
	j.Worse = j.PValue <= o.Alpha && math.Abs(j.ChangePct) > o.ThresholdPct && s.Direction.worse(med, last.Value)
	return j
}

// medianSpread is the median of v and 1.4826 × the median absolute
// deviation from it.
func medianSpread(v []float64) (float64, float64) {
	med := median(slices.Clone(v))
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - med)
	}
	return med, 1.4826 * median(dev)
}

// median sorts v and returns its median.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// meanSD is the mean and sample standard deviation (n − 1; 0 for one
// value).
func meanSD(v []float64) (float64, float64) {
	var sum float64
	for _, x := range v {
		sum += x
	}
	m := sum / float64(len(v))
	if len(v) < 2 {
		return m, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(len(v)-1))
	if sd <= 1e-12*math.Abs(m) {
		// Equal values whose mean rounding left a residue.
		sd = 0
	}
	return m, sd
}

// predictionP is the two-sided p-value of x as one more draw from a normal
// sample of n values with centre m and standard deviation sd: the t
// statistic (x−m)/(sd·√(1+1/n)) on n−1 degrees of freedom.
func predictionP(x, m, sd float64, n int) float64 {
	d := x - m
	if d == 0 {
		return 1
	}
	if n < 2 || sd == 0 {
		// Nothing to measure the spread with: a single earlier run, or
		// runs that all gave the same value. Any difference stands; the
		// threshold alone then decides.
		if n < 2 {
			return 1
		}
		return 0
	}
	t := math.Abs(d) / (sd * math.Sqrt(1+1/float64(n)))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	return 2 * dist.Survival(t)
}

func hashString(s string) uint64 {
	// FNV-1a, 64 bit.
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func (s *Series) key() string {
	return strings.Join([]string{s.Plan, s.Metric, s.Label, s.Phase, s.Target}, "\x00")
}

// Extract draws the series of runs (oldest first), of the Comparable
// ones: per plan, for every
// label over the whole run and per phase, its p95, mean, error % and
// throughput; the capacity knee's throughput; and per monitored target
// with CPU, its mean CPU and CPU per request. A series holds the runs that
// have its figure; label keeps one label's series only (empty: all).
func Extract(runs []*Run, label string) []*Series {
	index := map[string]*Series{}
	var out []*Series
	add := func(s Series, run int, r *Run, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		k := s.key()
		p := index[k]
		if p == nil {
			p = &s
			index[k] = p
			out = append(out, p)
		}
		p.Points = append(p.Points, SeriesPoint{Run: run, RunID: r.ID, Value: v})
	}
	for i, r := range runs {
		if !Comparable(r) {
			continue
		}
		var totalRPS float64
		for _, l := range r.Labels {
			if l.Phase == WholeRun && IsTotal(l.Label) {
				totalRPS += l.ThroughputRPS // all requests, or the sum of the workloads'
			}
			if label != "" && l.Label != label {
				continue
			}
			where := l.Label
			if l.Phase != WholeRun {
				where += " · " + l.Phase
			}
			base := Series{Plan: r.Plan, Label: l.Label, Phase: l.Phase}
			if !l.NoTimes && l.Samples > l.Errors {
				add(with(base, MetricP95, where+" p95", "ms", HigherIsWorse), i, r, l.P95Ms)
				add(with(base, MetricMean, where+" mean", "ms", HigherIsWorse), i, r, l.MeanMs)
			}
			if l.Samples > 0 {
				add(with(base, MetricErrorPct, where+" errors", "%", HigherIsWorse), i, r, l.ErrorPct)
				add(with(base, MetricThroughput, where+" throughput", "req/s", LowerIsWorse), i, r, l.ThroughputRPS)
			}
		}
		if label != "" {
			continue
		}
		if c := r.Capacity; c != nil && c.KneeThroughputRPS != nil {
			add(with(Series{Plan: r.Plan}, MetricKneeThroughput, "capacity knee throughput", "req/s", LowerIsWorse), i, r, *c.KneeThroughputRPS)
		}
		for _, res := range r.Resources {
			if res.Phase != WholeRun || res.Metric != "cpu_pct" {
				continue
			}
			base := Series{Plan: r.Plan, Target: res.Target}
			add(with(base, MetricCPU, res.Target+" CPU", "%", HigherIsWorse), i, r, res.Mean)
			if totalRPS > 0 {
				// cpu_pct is 100 per busy core: CPU-ms per second is
				// cpu_pct × 10, per request ÷ req/s.
				add(with(base, MetricCPUPerRequest, res.Target+" CPU per request", "ms", HigherIsWorse), i, r, res.Mean*10/totalRPS)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *Series) int {
		return cmp.Or(strings.Compare(a.Plan, b.Plan), cmp.Compare(seriesGroup(a), seriesGroup(b)),
			strings.Compare(a.Target, b.Target), compareLabel(a.Label, b.Label), cmp.Compare(phaseRank(a, runs), phaseRank(b, runs)),
			cmp.Compare(metricRank(a.Metric), metricRank(b.Metric)))
	})
	return out
}

// Comparable reports whether a run's figures belong in the series: not
// when it was interrupted (its figures cover only part of its load) or no
// request of it succeeded. Such runs stay stored and listed.
func Comparable(r *Run) bool {
	return r.Verdict != analysis.VerdictInterrupted && r.Verdict != analysis.VerdictNotRun
}

func with(s Series, metric, name, unit string, d Direction) Series {
	s.Metric, s.Name, s.Unit, s.Direction = metric, name, unit, d
	if unit != "" {
		s.Name += " (" + unit + ")"
	}
	return s
}

// seriesGroup orders labels' series before capacity before resources.
func seriesGroup(s *Series) int {
	switch {
	case s.Metric == MetricKneeThroughput:
		return 1
	case s.Target != "":
		return 2
	}
	return 0
}

// compareLabel orders TOTALs first (all requests, or each workload's),
// then labels by name.
func compareLabel(a, b string) int {
	if at, bt := IsTotal(a), IsTotal(b); at != bt {
		if at {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// phaseRank orders the whole run first, then phases by their index in the
// first run that has them.
func phaseRank(s *Series, runs []*Run) int {
	if s.Phase == WholeRun || len(s.Points) == 0 {
		return -1
	}
	for _, p := range runs[s.Points[0].Run].Phases {
		if p.Name == s.Phase {
			return p.Index
		}
	}
	return math.MaxInt32
}

func metricRank(m string) int {
	return slices.Index([]string{MetricP95, MetricMean, MetricErrorPct, MetricThroughput, MetricKneeThroughput, MetricCPU, MetricCPUPerRequest}, m)
}
