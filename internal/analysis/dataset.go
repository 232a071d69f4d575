// Package analysis turns a run directory's records into the facts a report
// states: per-label and per-phase statistics, per-second timelines, error
// breakdowns and the run's summary. It reads aggregates, never raw samples, so
// its memory depends on the number of seconds and labels, not of samples.
package analysis

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// LabelKey names a label of a workload; labels of different workloads with
// the same name are kept apart.
type LabelKey struct {
	Workload string
	Label    string
	Tx       bool
	Derived  bool // computed from other samples; never in totals
}

// Tick is one second of one label's timeline.
type Tick struct {
	T      time.Time
	Count  int64
	Errors int64
	MeanMs float64
	P95Ms  float64
	MaxMs  float64
}

// ErrorDetail is one kind of failure with where and when it was seen.
type ErrorDetail struct {
	Class    string    `json:"class"`
	Status   int       `json:"status,omitempty"`
	Message  string    `json:"message,omitempty"`
	Label    string    `json:"label"`
	Workload string    `json:"workload,omitempty"`
	Count    int64     `json:"count"`
	SharePct float64   `json:"share_pct"` // of all samples
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	Phases   []string  `json:"phases"`
}

// Dataset is a run directory loaded for analysis.
type Dataset struct {
	Dir    string
	Info   *rundir.Info
	Start  time.Time
	End    time.Time
	Phases []core.Phase

	// Run holds the whole-run aggregate per label; Total all requests
	// (transactions excluded, so nothing is counted twice).
	Run   map[LabelKey]*metrics.Agg
	Total *metrics.Agg
	// ByPhase[i] holds phase i's aggregate per label and its total.
	ByPhase    []map[LabelKey]*metrics.Agg
	PhaseTotal []*metrics.Agg
	Timeline   map[LabelKey][]Tick
	TotalTicks []Tick
	// Minutes and TotalMinutes are per-minute figures (T on the minute),
	// each from the minute's merged histogram: a minute's p95 is the 95th
	// percentile of the minute's samples, not an average of per-second
	// p95s.
	Minutes      map[LabelKey][]Tick
	TotalMinutes []Tick
	Users        []UsersTick
	Errors       []ErrorDetail
	Dropped      map[string]int64 // per workload
	LastInterval time.Time        // completion second of the last record
	// Server is the server-side data attached to a live run (access logs,
	// vmstat, jstat, docker stats imported into rundir.ServerDir with the
	// run's phases); nil when none was. ServerErr says why it could not be
	// read.
	Server    *Dataset
	ServerErr error
	// RecordedEnd[i] is phase i's end as run.json recorded it when that
	// was after the run's end (the phase is clipped to the run); zero
	// otherwise.
	RecordedEnd []time.Time
}

// clipPhases ends every phase at the run's end (or its last recorded
// second's) at the latest: a phase
// recorded as ending after its run (a clock step, a hand-edited or
// converted run.json) would otherwise stretch its rates over time nothing
// ran. RecordedEnd keeps what run.json said, so the report can say so.
func (d *Dataset) clipPhases() {
	d.RecordedEnd = make([]time.Time, len(d.Phases))
	// The run's data reach to the end of its last recorded second, which
	// an import may put one second after its run's end; and a phase's end
	// within the second after that is the records' rounding, not an error.
	end := d.End
	if d.LastInterval.After(end) {
		end = d.LastInterval
	}
	for i := range d.Phases {
		p := &d.Phases[i]
		if !p.End.After(end.Add(time.Second)) || end.IsZero() {
			continue
		}
		d.RecordedEnd[i] = p.End
		p.End = end
		if p.Start.After(p.End) {
			p.Start = p.End
		}
	}
}

// UsersTick is the number of active users per workload at a second.
type UsersTick struct {
	T     time.Time
	Users map[string]int
	Total int
}

// Load reads run.json and intervals.ndjson from dir.
//
// Each record's histogram is decoded once, sparsely, and added into one
// aggregate per label and phase; per-second figures come from the sparse
// record itself. Run, phase and total aggregates are derived from the
// label×phase aggregates at the end, so the cost is one sparse merge per
// record and memory is bounded by labels × phases plus a few open seconds.
func Load(dir string) (*Dataset, error) {
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Dir: dir, Info: info, Run: map[LabelKey]*metrics.Agg{}, Total: metrics.NewAgg(),
		Timeline: map[LabelKey][]Tick{}, Minutes: map[LabelKey][]Tick{}, Dropped: map[string]int64{}}
	nph := len(info.Phases)
	type lp struct {
		k     LabelKey
		phase int
	}
	// A label's histogram in a phase is summed bucket by bucket and made
	// an HDR histogram once, at the end.
	type lpAgg struct {
		a    *metrics.Agg
		hist metrics.BucketSum
	}
	byLP := map[lp]*lpAgg{}
	type errAcc struct {
		detail ErrorDetail
		phases map[int]bool
	}
	errs := map[string]*errAcc{}
	totals := newTickWindow()
	minutes := newMinuteWindow()
	var first, last int64 = math.MaxInt64, 0
	span := 0 // the run's seconds, when run.json knows them
	if info.End != nil && !info.Start.IsZero() && info.End.After(info.Start) {
		span = int(min(info.End.Sub(info.Start)/time.Second+2, 1<<31))
	}
	err = rundir.ReadIntervalsDecoded(dir, func(dr *rundir.DecodedRecord) error {
		r, p := &dr.IntervalRecord, &dr.Hist
		if r.Users != nil || r.Dropped != nil {
			if r.Users != nil {
				u := UsersTick{T: time.Unix(r.T, 0), Users: r.Users}
				for _, n := range r.Users {
					u.Total += n
				}
				d.Users = append(d.Users, u)
			}
			for w, n := range r.Dropped {
				d.Dropped[w] += n
			}
			return nil
		}
		first, last = min(first, r.T), max(last, r.T)
		lk := LabelKey{Workload: r.Workload, Label: r.Label, Tx: r.Tx, Derived: r.Derived}
		ph := r.Phase
		if ph < 0 || ph >= nph {
			ph = -1
		}
		key := lp{lk, ph}
		a := byLP[key]
		if a == nil {
			a = &lpAgg{a: metrics.NewAgg()}
			byLP[key] = a
		}
		r.AddScalars(a.a)
		a.hist.Add(p)
		d.Timeline[lk] = appendTick(d.Timeline[lk], recordTick(r, p), span)
		minutes.add(lk, false, r, p, d)
		if !r.Tx && !r.Derived {
			totals.add(r, p, d)
			minutes.add(LabelKey{}, true, r, p, d)
		}
		for _, e := range r.Errs {
			k := fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", r.Workload, r.Label, e.Status, e.Class, e.Message)
			acc := errs[k]
			if acc == nil {
				acc = &errAcc{detail: ErrorDetail{Class: e.Class, Status: e.Status, Message: core.EscapeBytes(e.Message), Label: core.EscapeBytes(r.Label),
					Workload: r.Workload, First: time.Unix(r.T, 0)}, phases: map[int]bool{}}
				errs[k] = acc
			}
			acc.detail.Count += e.Count
			if t := time.Unix(r.T, 0); t.Before(acc.detail.First) {
				acc.detail.First = t
			} else if t.After(acc.detail.Last) {
				acc.detail.Last = t
			}
			if acc.detail.Last.IsZero() {
				acc.detail.Last = acc.detail.First
			}
			acc.phases[r.Phase] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	totals.flushAll(d)
	minutes.flushAll(d)
	// Derive run, phase and total aggregates from label × phase.
	d.ByPhase = make([]map[LabelKey]*metrics.Agg, nph)
	d.PhaseTotal = make([]*metrics.Agg, nph)
	for i := range d.ByPhase {
		d.ByPhase[i] = map[LabelKey]*metrics.Agg{}
		d.PhaseTotal[i] = metrics.NewAgg()
	}
	for key, la := range byLP {
		a := la.a
		la.hist.AddTo(a.Hist)
		merge(d.Run, key.k, a)
		if key.phase >= 0 {
			d.ByPhase[key.phase][key.k] = a
			if !key.k.Tx && !key.k.Derived {
				d.PhaseTotal[key.phase].Merge(a)
			}
		}
	}
	for k, a := range d.Run {
		if !k.Tx && !k.Derived {
			d.Total.Merge(a)
		}
	}
	for k, ticks := range d.Timeline {
		sort.SliceStable(ticks, func(i, j int) bool { return ticks[i].T.Before(ticks[j].T) })
		d.Timeline[k] = mergeSameSecond(ticks)
	}
	sort.Slice(d.TotalTicks, func(i, j int) bool { return d.TotalTicks[i].T.Before(d.TotalTicks[j].T) })
	// Run span: from run start (or the first record) to its end (or the
	// last record after a kill).
	d.Start = info.Start
	if last > 0 {
		d.LastInterval = time.Unix(last, 0).Add(time.Second)
		if d.Start.IsZero() || time.Unix(first, 0).Before(d.Start.Add(-time.Hour)) {
			d.Start = time.Unix(first, 0)
		}
	}
	switch {
	case info.End != nil:
		d.End = *info.End
	case !d.LastInterval.IsZero():
		d.End = d.LastInterval
	default:
		d.End = d.Start
	}
	d.Phases = info.CorePhases(d.End)
	d.clipPhases()
	for _, acc := range errs {
		acc.detail.Phases = []string{} // docs/summary.md: a list is [] when empty (a run without phases)
		for p := range acc.phases {
			if p >= 0 && p < len(d.Phases) {
				acc.detail.Phases = append(acc.detail.Phases, d.Phases[p].Name)
			}
		}
		sort.Strings(acc.detail.Phases)
		if d.Total.Count > 0 {
			acc.detail.SharePct = math.Round(1e5*float64(acc.detail.Count)/float64(d.Total.Count)) / 1e3
		}
		d.Errors = append(d.Errors, acc.detail)
	}
	d.loadServer()
	sort.Slice(d.Errors, func(i, j int) bool {
		a, b := d.Errors[i], d.Errors[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if !a.First.Equal(b.First) {
			return a.First.Before(b.First)
		}
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		if a.Status != b.Status {
			return a.Status < b.Status
		}
		return a.Message < b.Message
	})
	return d, nil
}

// appendTick appends t to a label's timeline, doubling its storage up to
// the run's length in seconds (span, 0 when unknown). append's own steps of
// a quarter allocated five times a long run's timelines; this allocates at
// most twice, and a label recorded every second ends with no spare room.
func appendTick(ts []Tick, t Tick, span int) []Tick {
	if len(ts) == cap(ts) {
		n := max(64, 2*cap(ts))
		if span > len(ts) {
			n = min(n, span)
		}
		grown := make([]Tick, len(ts), n)
		copy(grown, ts)
		ts = grown
	}
	return append(ts, t)
}

// recordTick is one label's figures for one second, from its record.
func recordTick(r *rundir.IntervalRecord, p *metrics.Sparse) Tick {
	t := Tick{T: time.Unix(r.T, 0), Count: r.Count, Errors: r.Errors, MaxMs: float64(r.MaxUs) / 1000}
	if r.Count > 0 {
		t.MeanMs = float64(r.SumUs) / float64(r.Count) / 1000
	}
	if p.Total > 0 {
		v := min(max(p.ValueAtPercentile(95), r.MinUs), r.MaxUs)
		t.P95Ms = float64(v) / 1000
	}
	return t
}

// tickWindow builds the all-requests timeline. Records of one second arrive
// together (the engine writes a second at a time; merged and imported runs
// nearly so), so only a few seconds are open at once: older ones are
// finished into Ticks and their aggregates reused.
type tickWindow struct {
	open  map[int64]*windowAgg
	spare []*windowAgg
	high  int64
}

const tickWindowSeconds = 5

func newTickWindow() *tickWindow { return &tickWindow{open: map[int64]*windowAgg{}} }

func (w *tickWindow) add(r *rundir.IntervalRecord, p *metrics.Sparse, d *Dataset) {
	a := w.open[r.T]
	if a == nil {
		if n := len(w.spare); n > 0 {
			a, w.spare = w.spare[n-1], w.spare[:n-1]
		} else {
			a = newWindowAgg()
		}
		w.open[r.T] = a
	}
	a.add(r, p)
	if r.T > w.high {
		w.high = r.T
		for s, a := range w.open {
			if s < w.high-tickWindowSeconds {
				w.finish(s, a, d)
			}
		}
	}
}

func (w *tickWindow) finish(s int64, a *windowAgg, d *Dataset) {
	d.TotalTicks = append(d.TotalTicks, a.tick(time.Unix(s, 0)))
	delete(w.open, s)
	a.reset()
	w.spare = append(w.spare, a)
}

func (w *tickWindow) flushAll(d *Dataset) {
	for s, a := range w.open {
		w.finish(s, a, d)
	}
	// A second that arrived after its window closed (out-of-order input)
	// yields two ticks for one second: fold them.
	sort.Slice(d.TotalTicks, func(i, j int) bool { return d.TotalTicks[i].T.Before(d.TotalTicks[j].T) })
	d.TotalTicks = mergeSameSecond(d.TotalTicks)
}

// minuteWindow builds the per-minute figures from merged histograms. Only
// a few minutes per label are open at once (records come in time order,
// or nearly), so memory is bounded by labels, not by the run's length.
type minuteWindow struct {
	open  map[minuteKey]*windowAgg
	spare []*windowAgg
	high  int64
}

type minuteKey struct {
	k     LabelKey
	total bool
	min   int64
}

const minuteWindowMinutes = 2

func newMinuteWindow() *minuteWindow { return &minuteWindow{open: map[minuteKey]*windowAgg{}} }

func (w *minuteWindow) add(k LabelKey, total bool, r *rundir.IntervalRecord, p *metrics.Sparse, d *Dataset) {
	m := floorDiv(r.T, 60)
	key := minuteKey{k, total, m}
	a := w.open[key]
	if a == nil {
		if n := len(w.spare); n > 0 {
			a, w.spare = w.spare[n-1], w.spare[:n-1]
		} else {
			a = newWindowAgg()
		}
		w.open[key] = a
	}
	a.add(r, p)
	if m > w.high {
		w.high = m
		for key, a := range w.open {
			if key.min < w.high-minuteWindowMinutes {
				w.finish(key, a, d)
			}
		}
	}
}

func (w *minuteWindow) finish(key minuteKey, a *windowAgg, d *Dataset) {
	t := a.tick(time.Unix(key.min*60, 0))
	if key.total {
		d.TotalMinutes = append(d.TotalMinutes, t)
	} else {
		d.Minutes[key.k] = append(d.Minutes[key.k], t)
	}
	delete(w.open, key)
	a.reset()
	w.spare = append(w.spare, a)
}

// flushAll finishes the open minutes. A minute that arrived after its
// window closed (out-of-order input) yields two figures for one minute;
// they are folded by count, the p95 taking the larger of the two.
func (w *minuteWindow) flushAll(d *Dataset) {
	for key, a := range w.open {
		w.finish(key, a, d)
	}
	byT := func(ts []Tick) []Tick {
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].T.Before(ts[j].T) })
		return mergeSameSecond(ts)
	}
	d.TotalMinutes = byT(d.TotalMinutes)
	for k, ts := range d.Minutes {
		d.Minutes[k] = byT(ts)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Span is the measured duration of the whole run.
func (d *Dataset) Span() time.Duration { return d.End.Sub(d.Start) }

// Labels returns the label keys, transactions first, then requests, each in
// name order.
func (d *Dataset) Labels() []LabelKey {
	ks := make([]LabelKey, 0, len(d.Run))
	for k := range d.Run {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Tx != ks[j].Tx {
			return ks[i].Tx
		}
		if ks[i].Workload != ks[j].Workload {
			return ks[i].Workload < ks[j].Workload
		}
		return ks[i].Label < ks[j].Label
	})
	return ks
}

// LabelName renders a label key for tables: "label", or "workload: label"
// when the run has several workloads.
// Bytes that are not UTF-8 are shown escaped (core.EscapeBytes), never as
// mojibake or U+FFFD.
func (d *Dataset) LabelName(k LabelKey) string {
	if len(d.Info.Workloads) > 1 && k.Workload != "" {
		return core.EscapeBytes(k.Workload) + ": " + core.EscapeBytes(k.Label)
	}
	return core.EscapeBytes(k.Label)
}

// NonUTF8Labels are the printed names (LabelName) of the labels whose
// name or workload held bytes that are not UTF-8 (escaped as \xNN when
// recorded, core.EscapeBytes), in label order.
func (d *Dataset) NonUTF8Labels() []string {
	var out []string
	for _, k := range d.Labels() {
		if n := d.LabelName(k); core.HasEscapedBytes(n) {
			out = append(out, n)
		}
	}
	return out
}

// merge adds a into m[k], creating the entry (never aliasing a).
func merge(m map[LabelKey]*metrics.Agg, k LabelKey, a *metrics.Agg) {
	dst := m[k]
	if dst == nil {
		dst = metrics.NewAgg()
		m[k] = dst
	}
	dst.Merge(a)
}

// windowAgg is the sum of the records of a second or a minute: what its
// Tick needs (tickOf's figures, the same numbers), with the histograms
// added bucket by bucket rather than into a dense HDR histogram.
type windowAgg struct {
	count, errors, sumUs, minUs, maxUs int64
	hist                               metrics.BucketSum
}

func newWindowAgg() *windowAgg { return &windowAgg{minUs: math.MaxInt64} }

// add adds a record as rundir's AddDecoded adds it into a metrics.Agg.
func (w *windowAgg) add(r *rundir.IntervalRecord, p *metrics.Sparse) {
	w.hist.Add(p)
	w.count += r.Count
	w.sumUs += r.SumUs
	if r.Count > 0 {
		w.minUs = min(w.minUs, r.MinUs)
		w.maxUs = max(w.maxUs, r.MaxUs)
	}
	detailed := int64(0)
	for _, e := range r.Errs {
		detailed += e.Count
	}
	w.errors += detailed
	if d := r.Errors - detailed; d > 0 {
		w.errors += d
	}
}

func (w *windowAgg) reset() {
	w.hist.Reset()
	w.count, w.errors, w.sumUs, w.minUs, w.maxUs = 0, 0, 0, math.MaxInt64, 0
}

// tick is tickOf of the metrics.Agg the same records add up to.
func (w *windowAgg) tick(t time.Time) Tick {
	tk := Tick{T: t, Count: w.count, Errors: w.errors, MaxMs: float64(w.maxUs) / 1000}
	if w.count > 0 {
		tk.MeanMs = float64(w.sumUs) / float64(w.count) / 1000
		v := min(max(w.hist.ValueAtPercentile(95), w.minUs), w.maxUs)
		tk.P95Ms = float64(v) / 1000
	}
	return tk
}

// mergeSameSecond folds ticks of one label that fall in the same second (the
// label was recorded in two phases in that second), weighting by count.
func mergeSameSecond(ts []Tick) []Tick {
	out := ts[:0]
	for _, t := range ts {
		if n := len(out); n > 0 && out[n-1].T.Equal(t.T) {
			p := &out[n-1]
			c := p.Count + t.Count
			if c > 0 {
				p.MeanMs = (p.MeanMs*float64(p.Count) + t.MeanMs*float64(t.Count)) / float64(c)
			}
			p.P95Ms = max(p.P95Ms, t.P95Ms)
			p.MaxMs = max(p.MaxMs, t.MaxMs)
			p.Count, p.Errors = c, p.Errors+t.Errors
			continue
		}
		out = append(out, t)
	}
	return out
}
