package metrics

import (
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/plateau-perf/plateau/internal/core"
)

// Key identifies one aggregation stream: a label of a workload in a phase.
// Phase is the phase's index in run.json (−1 when unknown, e.g. an import
// without phases).
type Key struct {
	Workload string
	Phase    int
	Label    string
	Tx       bool // transaction (parent) label
	// Derived marks a label computed from other samples (a gRPC stream's
	// time to first message, its messages): never counted as requests.
	Derived bool
}

// ErrKey groups failures for the errors table.
type ErrKey struct {
	Class   core.ErrorClass
	Status  int
	Message string
}

// maxErrMessages bounds distinct failure messages kept per Agg so a service
// that puts ids in its error text cannot grow memory without bound; further
// distinct messages are folded into one "(other messages)" entry per class.
const maxErrMessages = 32

// otherMessages is the message of folded failure entries.
const otherMessages = "(other messages)"

// Agg is the exact aggregate of a set of samples: counts, sums, extremes and a
// histogram of response times. The zero value is not ready; use NewAgg. Not
// safe for concurrent use.
type Agg struct {
	Count, Errors int64
	SumUs         int64 // exact sum of response times in µs (exact mean)
	MinUs, MaxUs  int64
	SumServiceUs  int64 // sum of service times (from actual send), µs
	Sent, Recv    int64
	Hist          *hdr.Histogram
	Errs          map[ErrKey]int64
}

// NewAgg returns an empty aggregate.
func NewAgg() *Agg {
	return &Agg{MinUs: math.MaxInt64, Hist: NewHist()}
}

// Add records one sample.
func (a *Agg) Add(s *core.Sample) {
	us := int64(s.Elapsed / time.Microsecond)
	a.AddValue(us)
	a.SumServiceUs += int64(s.Service / time.Microsecond)
	a.Sent += s.BytesSent
	a.Recv += s.BytesRecv
	if s.Class != core.ErrNone {
		a.AddError(ErrKey{Class: s.Class, Status: s.Status, Message: s.Message}, 1)
	}
}

// AddValue records a response time in µs without byte counts or failure (used by
// importers that only know the elapsed time).
func (a *Agg) AddValue(us int64) {
	a.Count++
	a.SumUs += us
	if us < a.MinUs {
		a.MinUs = us
	}
	if us > a.MaxUs {
		a.MaxUs = us
	}
	recordUs(a.Hist, us)
}

// AddError counts n failures of one kind. The message is normalised
// (NormalizeMessage) so failures that differ only by an address or port
// group together.
func (a *Agg) AddError(k ErrKey, n int64) {
	k.Message = NormalizeMessage(k.Message)
	a.Errors += n
	if a.Errs == nil {
		a.Errs = make(map[ErrKey]int64)
	}
	if _, ok := a.Errs[k]; !ok && len(a.Errs) >= maxErrMessages {
		k.Message = otherMessages
	}
	a.Errs[k] += n
}

// Merge adds b into a (lossless).
func (a *Agg) Merge(b *Agg) {
	if b.Count == 0 && b.Errors == 0 {
		return
	}
	a.Count += b.Count
	a.SumUs += b.SumUs
	a.SumServiceUs += b.SumServiceUs
	if b.Count > 0 {
		a.MinUs = min(a.MinUs, b.MinUs)
		a.MaxUs = max(a.MaxUs, b.MaxUs)
	}
	a.Sent += b.Sent
	a.Recv += b.Recv
	a.Hist.Merge(b.Hist)
	for k, n := range b.Errs {
		a.AddError(k, n)
	}
	// AddError counted b's errors again via Errs; keep Errors exact when b
	// carries errors without detail (imports).
	detailed := int64(0)
	for _, n := range b.Errs {
		detailed += n
	}
	a.Errors += b.Errors - detailed
}

// MeanMs is the exact mean response time in ms (0 without samples).
func (a *Agg) MeanMs() float64 {
	if a.Count == 0 {
		return 0
	}
	return float64(a.SumUs) / float64(a.Count) / 1000
}

// QuantileMs returns the percentile (0–100) of response time in ms.
func (a *Agg) QuantileMs(pct float64) float64 {
	if a.Count == 0 {
		return 0
	}
	v := a.Hist.ValueAtPercentile(pct)
	// HDR reports the highest value equivalent to the bucket; never exceed
	// the exact maximum nor go below the exact minimum.
	v = min(max(v, a.MinUs), a.MaxUs)
	return float64(v) / 1000
}

// Stats renders the aggregate as a table row; span is the wall time the row
// covers, for throughput.
func (a *Agg) Stats(label string, tx bool, span time.Duration) core.LabelStats {
	st := core.LabelStats{Label: label, Transaction: tx, Samples: a.Count, Errors: a.Errors,
		BytesRecv: a.Recv, BytesSent: a.Sent}
	if a.Count == 0 {
		return st
	}
	st.ErrorPct = 100 * float64(a.Errors) / float64(a.Count)
	st.MeanMs = round3(a.MeanMs())
	st.MinMs = round3(float64(a.MinUs) / 1000)
	st.MaxMs = round3(float64(a.MaxUs) / 1000)
	st.P50Ms = round3(a.QuantileMs(50))
	st.P90Ms = round3(a.QuantileMs(90))
	st.P95Ms = round3(a.QuantileMs(95))
	st.P99Ms = round3(a.QuantileMs(99))
	if span > 0 {
		st.ThroughputRPS = round3(float64(a.Count) / span.Seconds())
	}
	st.ErrorPct = round3(st.ErrorPct)
	return st
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// ErrEntry is one row of an error breakdown.
type ErrEntry struct {
	ErrKey
	Count int64
}

// SortedErrors returns the failure breakdown, most frequent first.
func (a *Agg) SortedErrors() []ErrEntry {
	out := make([]ErrEntry, 0, len(a.Errs))
	for k, n := range a.Errs {
		out = append(out, ErrEntry{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Class != out[j].Class {
			return out[i].Class < out[j].Class
		}
		if out[i].Status != out[j].Status {
			return out[i].Status < out[j].Status
		}
		return out[i].Message < out[j].Message
	})
	return out
}
