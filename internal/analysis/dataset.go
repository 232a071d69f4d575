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
	ByPhase      []map[LabelKey]*metrics.Agg
	PhaseTotal   []*metrics.Agg
	Timeline     map[LabelKey][]Tick
	TotalTicks   []Tick
	Users        []UsersTick
	Errors       []ErrorDetail
	Dropped      map[string]int64 // per workload
	LastInterval time.Time        // completion second of the last record
}

// UsersTick is the number of active users per workload at a second.
type UsersTick struct {
	T     time.Time
	Users map[string]int
	Total int
}

// Load reads run.json and intervals.ndjson from dir.
func Load(dir string) (*Dataset, error) {
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Dir: dir, Info: info, Run: map[LabelKey]*metrics.Agg{}, Total: metrics.NewAgg(),
		Timeline: map[LabelKey][]Tick{}, Dropped: map[string]int64{}}
	d.ByPhase = make([]map[LabelKey]*metrics.Agg, len(info.Phases))
	d.PhaseTotal = make([]*metrics.Agg, len(info.Phases))
	for i := range info.Phases {
		d.ByPhase[i] = map[LabelKey]*metrics.Agg{}
		d.PhaseTotal[i] = metrics.NewAgg()
	}
	type errAcc struct {
		detail ErrorDetail
		phases map[int]bool
	}
	errs := map[string]*errAcc{}
	totalTicks := map[int64]*tickAcc{}
	var first, last int64 = math.MaxInt64, 0
	err = rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
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
		a, err := r.Agg()
		if err != nil {
			return fmt.Errorf("%s: second %d, label %q: %w", rundir.IntervalsFile, r.T, r.Label, err)
		}
		first, last = min(first, r.T), max(last, r.T)
		lk := LabelKey{Workload: r.Workload, Label: r.Label, Tx: r.Tx}
		merge(d.Run, lk, a)
		if !r.Tx {
			d.Total.Merge(a)
			ta := totalTicks[r.T]
			if ta == nil {
				ta = &tickAcc{agg: metrics.NewAgg()}
				totalTicks[r.T] = ta
			}
			ta.agg.Merge(a)
		}
		if r.Phase >= 0 && r.Phase < len(d.ByPhase) {
			merge(d.ByPhase[r.Phase], lk, a)
			if !r.Tx {
				d.PhaseTotal[r.Phase].Merge(a)
			}
		}
		d.Timeline[lk] = append(d.Timeline[lk], tickOf(time.Unix(r.T, 0), a))
		for _, e := range r.Errs {
			k := fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", r.Workload, r.Label, e.Status, e.Class, e.Message)
			acc := errs[k]
			if acc == nil {
				acc = &errAcc{detail: ErrorDetail{Class: e.Class, Status: e.Status, Message: e.Message, Label: r.Label,
					Workload: r.Workload, First: time.Unix(r.T, 0)}, phases: map[int]bool{}}
				errs[k] = acc
			}
			acc.detail.Count += e.Count
			acc.detail.Last = time.Unix(r.T, 0)
			acc.phases[r.Phase] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Timeline of all requests together.
	secs := make([]int64, 0, len(totalTicks))
	for s := range totalTicks {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	for _, s := range secs {
		d.TotalTicks = append(d.TotalTicks, tickOf(time.Unix(s, 0), totalTicks[s].agg))
	}
	for k, ticks := range d.Timeline {
		sort.SliceStable(ticks, func(i, j int) bool { return ticks[i].T.Before(ticks[j].T) })
		d.Timeline[k] = mergeSameSecond(ticks)
	}
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
	for _, acc := range errs {
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
	sort.Slice(d.Errors, func(i, j int) bool {
		if d.Errors[i].Count != d.Errors[j].Count {
			return d.Errors[i].Count > d.Errors[j].Count
		}
		return d.Errors[i].First.Before(d.Errors[j].First)
	})
	return d, nil
}

type tickAcc struct{ agg *metrics.Agg }

func merge(m map[LabelKey]*metrics.Agg, k LabelKey, a *metrics.Agg) {
	dst := m[k]
	if dst == nil {
		dst = metrics.NewAgg()
		m[k] = dst
	}
	dst.Merge(a)
}

func tickOf(t time.Time, a *metrics.Agg) Tick {
	return Tick{T: t, Count: a.Count, Errors: a.Errors, MeanMs: a.MeanMs(), P95Ms: a.QuantileMs(95), MaxMs: float64(a.MaxUs) / 1000}
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
func (d *Dataset) LabelName(k LabelKey) string {
	if len(d.Info.Workloads) > 1 && k.Workload != "" {
		return k.Workload + ": " + k.Label
	}
	return k.Label
}
