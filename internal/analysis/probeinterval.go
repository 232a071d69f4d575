package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// A requirement's confidence interval over one phase, for the capacity
// search's marginal verdicts: is the statistic clearly on one side of its
// limit, or could a repeat of the same load land on the other?
//
// Successive requests under load are correlated (a queue that is long now
// is long a second later), so an interval that treats the samples as
// independent — order statistics for a percentile, s/√n for a mean — is
// far too narrow. The interval is the method of batch means instead: the
// phase is cut into IntervalBatches batches of consecutive seconds, the
// statistic is computed in each, and the interval is their mean ± t·s/√b
// (95 %, Student's t with b−1 degrees of freedom), widened to hold the
// statistic over the whole phase.

// IntervalBatches is how many batches a phase is cut into;
// MinIntervalBatches the fewest batches with samples an interval needs
// (fewer seconds or batches: no interval, the statistic stands alone).
const (
	IntervalBatches    = 10
	MinIntervalBatches = 5
)

// Interval is a requirement's statistic over a phase with its 95 %
// confidence interval [Low, High]; OK is false when the phase is too short
// (fewer than MinIntervalBatches seconds with samples) or the requirement
// has no interval (checks, min, max).
type Interval struct {
	Value, Low, High float64
	Batches          int
	OK               bool
}

// t975 is Student's t at 0.975 for 1 … 9 degrees of freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262}

// PhaseIntervals returns the 95 % interval of each requirement over the
// named phase of the run d (read again from its intervals.ndjson, one
// aggregate per batch and label: memory is bounded by IntervalBatches ×
// labels). exprs[i] and the result's [i] correspond.
func PhaseIntervals(d *Dataset, phase string, exprs []*sla.Expr) ([]Interval, error) {
	out := make([]Interval, len(exprs))
	idx := d.phaseIndex(phase)
	if idx < 0 {
		return out, fmt.Errorf("no phase %q", phase)
	}
	p := d.Phases[idx]
	start := p.Start.Unix()
	secs := int64(math.Ceil(p.End.Sub(time.Unix(start, 0)).Seconds()))
	if secs < MinIntervalBatches {
		return out, nil
	}
	nb := int64(min(IntervalBatches, secs))
	type batch struct {
		labels map[LabelKey]*metrics.Agg
		total  *metrics.Agg
		first  int64
		last   int64
	}
	bs := make([]batch, nb)
	for i := range bs {
		bs[i] = batch{labels: map[LabelKey]*metrics.Agg{}, total: metrics.NewAgg(), first: math.MaxInt64}
	}
	err := rundir.ReadIntervalsDecoded(d.Dir, func(dr *rundir.DecodedRecord) error {
		r := &dr.IntervalRecord
		if r.Users != nil || r.Dropped != nil || r.Phase != idx || r.T < start || r.T >= start+secs {
			return nil
		}
		b := &bs[(r.T-start)*nb/secs]
		b.first, b.last = min(b.first, r.T), max(b.last, r.T)
		k := LabelKey{Workload: r.Workload, Label: r.Label, Tx: r.Tx, Derived: r.Derived}
		a := b.labels[k]
		if a == nil {
			a = metrics.NewAgg()
			b.labels[k] = a
		}
		r.AddDecoded(a, &dr.Hist)
		if !r.Tx && !r.Derived {
			r.AddDecoded(b.total, &dr.Hist)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	whole, wholeTotal := d.ByPhase[idx], d.PhaseTotal[idx]
	for i, e := range exprs {
		if e.Metric == sla.Checks || e.IsServer() || e.Stat == "min" || e.Stat == "max" {
			continue
		}
		v, ok := Observe(e, whole, wholeTotal, p.Duration(), d.LabelName)
		if !ok {
			continue
		}
		var vals []float64
		for _, b := range bs {
			if b.first > b.last {
				continue
			}
			// A batch's span is its seconds: the throughput of a batch is
			// its requests over the seconds it covers.
			span := time.Duration(b.last-b.first+1) * time.Second
			if x, ok := Observe(e, b.labels, b.total, span, d.LabelName); ok {
				vals = append(vals, x)
			}
		}
		if len(vals) < MinIntervalBatches {
			continue
		}
		var mean, ss float64
		for _, x := range vals {
			mean += x
		}
		mean /= float64(len(vals))
		for _, x := range vals {
			ss += (x - mean) * (x - mean)
		}
		n := len(vals)
		half := t975[min(n-1, len(t975))-1] * math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
		out[i] = Interval{Value: v, Low: math.Min(v, mean-half), High: math.Max(v, mean+half), Batches: n, OK: true}
		if e.Metric == sla.ErrorRate {
			out[i].Low, out[i].High = math.Max(0, out[i].Low), math.Min(100, out[i].High)
		}
	}
	return out, nil
}
