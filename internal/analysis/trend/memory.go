package trend

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"gonum.org/v1/gonum/stat"
)

// Verdict is the memory trend's one-word answer.
type Verdict string

// Memory verdicts. A verdict is given only when its test passes: growing
// when the slope's interval excludes zero and the growth is large enough,
// stable when the interval excludes a growth that large; Unknown ("not
// enough data to judge") otherwise — too few readings, after-GC points or
// minutes, or an interval too wide to tell — with the numbers in the
// result (Readings, Span, Baseline) and in Why.
const (
	Stable  Verdict = "stable"
	Growing Verdict = "growing"
	Unknown Verdict = "not_enough_data"
)

// MemoryOptions tunes Memory. The zero value selects every default.
type MemoryOptions struct {
	// Limit is the memory limit in the unit of the series (heap max,
	// container limit); 0 means unknown, and TimeToLimit stays nil.
	Limit float64
	// Window is the lower-envelope window, used only when neither a GC
	// counter nor drops in the series mark the collections; 0 (or a window
	// leaving fewer than four per series) means a twelfth of the span.
	Window time.Duration
	// Confidence is the two-sided level of the slope interval; default 0.95.
	Confidence float64
	// MinSpan is the shortest observation that can show a leak; shorter
	// series get the verdict unknown. Default 10 minutes: over a run of a
	// minute or two, warm-up (caches, pools, JIT) looks like growth and a
	// rate per hour extrapolated from it would alarm falsely. Negative
	// disables the rule.
	MinSpan time.Duration
	// MinGrowthPct is the smallest growth over the observed span, in percent
	// of the mean after-GC level, that counts as growing; default 2. A
	// negative value disables it.
	MinGrowthPct float64
}

// MemoryMethod is how the after-GC points were chosen.
type MemoryMethod int

// Methods of choosing the after-GC points (see Memory).
const (
	MethodNone     MemoryMethod = iota // no points chosen (the series was too short to judge)
	MethodAfterGC                      // the lowest reading after each rise of a GC counter
	MethodDrops                        // the lowest reading of each large fall of the series
	MethodEnvelope                     // the lowest reading of each window (the lower envelope)
)

var methodNames = [...]string{"", "after gc", "after drops", "lower envelope"}

func (m MemoryMethod) String() string { return methodNames[max(0, min(int(m), len(methodNames)-1))] }

// MarshalText writes the method as its name.
func (m MemoryMethod) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a method's name.
func (m *MemoryMethod) UnmarshalText(b []byte) error {
	return unmarshalName(methodNames[:], b, (*int)(m), "memory method")
}

// MemoryBasis is how the after-GC points were chosen and how many
// collections, drops or windows there were.
type MemoryBasis struct {
	Method MemoryMethod `json:"method"`
	// N counts the collections (MethodAfterGC), drops (MethodDrops) or
	// windows (MethodEnvelope).
	N int `json:"n"`
	// WindowS is the window's length in seconds (MethodEnvelope).
	WindowS float64 `json:"window_s,omitempty"`
}

// MemoryWhyKind is why a memory trend has its verdict.
type MemoryWhyKind int

// Reasons for a memory verdict.
const (
	MemoryTooFewPoints MemoryWhyKind = iota // fewer than 2 finite readings (Points)
	MemoryShortSpan                         // observed for Span, shorter than MinSpan
	MemoryFewBaseline                       // only Points after-GC points; Need to fit a trend
	MemoryGrowing                           // the slope's interval is above zero and the growth at least MinGrowthPct
	MemorySmallGrowth                       // the slope's interval is above zero, the growth below MinGrowthPct
	MemoryFlat                              // the slope's interval excludes growth of MinGrowthPct
	MemoryUndecided                         // the interval holds both no growth and growth above MinGrowthPct
)

var memoryWhyNames = [...]string{"too few points", "short span", "few after-gc points", "growing", "small growth", "flat", "undecided"}

func (k MemoryWhyKind) String() string {
	return memoryWhyNames[max(0, min(int(k), len(memoryWhyNames)-1))]
}

// MarshalText writes the reason as its name.
func (k MemoryWhyKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a reason's name.
func (k *MemoryWhyKind) UnmarshalText(b []byte) error {
	return unmarshalName(memoryWhyNames[:], b, (*int)(k), "memory reason")
}

// MemoryWhy is why a memory trend has its verdict, with the numbers its
// sentence quotes (the slope and its interval are the result's own).
type MemoryWhy struct {
	Kind MemoryWhyKind `json:"kind"`
	// SpanS is the observed span and MinSpanS the shortest judged, in
	// seconds (MemoryShortSpan).
	SpanS    float64 `json:"span_s,omitempty"`
	MinSpanS float64 `json:"min_span_s,omitempty"`
	// Points are the finite readings (MemoryTooFewPoints) or the after-GC
	// points (the others), Need the fewest a line is fitted to.
	Points int `json:"points,omitempty"`
	Need   int `json:"need,omitempty"`
	// GrowthPct is the fitted growth over Hours in percent of the mean
	// after-GC level, MinGrowthPct the threshold; Confidence is the
	// slope interval's two-sided level (0.95).
	GrowthPct    float64 `json:"growth_pct,omitempty"`
	MinGrowthPct float64 `json:"min_growth_pct,omitempty"`
	// GrowthLowPct and GrowthHighPct are the growth's interval, in
	// percent of the mean.
	GrowthLowPct  float64 `json:"growth_low_pct,omitempty"`
	GrowthHighPct float64 `json:"growth_high_pct,omitempty"`
	Hours         float64 `json:"hours,omitempty"`
	Confidence    float64 `json:"confidence,omitempty"`
}

// unmarshalName sets *v to the index of b in names.
func unmarshalName(names []string, b []byte, v *int, what string) error {
	for i, n := range names {
		if n == string(b) {
			*v = i
			return nil
		}
	}
	return fmt.Errorf("unknown %s %q", what, b)
}

// MemoryResult is the trend of memory after garbage collection.
type MemoryResult struct {
	// Basis says how the after-GC points were chosen: after each
	// collection a GC counter marks, after each detected drop, or the
	// lower envelope of windows.
	Basis MemoryBasis
	// Baseline holds the after-GC points the line was fitted to.
	Baseline []core.Point
	// Mean is the mean of Baseline.
	Mean float64
	// SlopePerHour is the growth of Baseline in series units per hour, with
	// its interval (widened for autocorrelation).
	SlopePerHour, CILow, CIHigh float64
	Verdict                     Verdict
	// TimeToLimit is how long, at SlopePerHour, the fitted line takes from
	// the last point to Limit; nil unless growing with a known limit.
	TimeToLimit *time.Duration
	// Why is why the verdict is what it is, with its numbers; the report
	// words it.
	Why MemoryWhy
	// Readings are the finite memory readings and Span the time they
	// cover: with len(Baseline), the numbers a verdict rests on.
	Readings int
	Span     time.Duration
	// GrowthPct is the fitted growth over Span in percent of Mean, and
	// GrowthHighPct the upper end of its interval; MinGrowthPct is the
	// threshold they were judged against.
	GrowthPct, GrowthHighPct, MinGrowthPct float64
}

// MinBaseline is the fewest after-GC points a memory trend is judged on,
// and MinMemorySpan the default shortest observation (MemoryOptions.MinSpan).
const (
	MinBaseline   = minBaseline
	MinMemorySpan = 10 * time.Minute
)

// minBaseline is the fewest after-GC points a line is fitted to.
const minBaseline = 4

// Memory judges whether memory grows once garbage is collected. A JVM heap
// (or any collected memory) is a sawtooth: used memory climbs until a
// collection drops it. Its peaks say how busy the allocator is; only its
// troughs say whether live data accumulates. Memory therefore fits a line to
// the troughs:
//
//   - with a GC counter series (cumulative collections, e.g. jstat FGC for
//     old-gen, or YGC+FGC for the whole heap), each point where the counter
//     rose marks a collection, and the lowest memory reading between the
//     previous counter reading and this one (or the first reading after it)
//     is an after-GC point;
//   - without one, large falls in the series itself mark the collections
//     (see afterDrops) and the lowest reading of each fall is an after-GC
//     point;
//   - with neither, the series is cut into windows and each window's
//     minimum is an after-GC point (the lower envelope). For non-collected
//     memory such as a process's RSS this is just a smoothed floor.
//
// The verdict is growing when the slope's lower bound is above zero and the
// fitted growth over the span is at least MinGrowthPct of the mean.
func Memory(mem, gc []core.Point, opt MemoryOptions) (MemoryResult, error) {
	ps := clean(mem)
	if len(ps) < 2 {
		return MemoryResult{Verdict: Unknown, Readings: len(ps), Why: MemoryWhy{Kind: MemoryTooFewPoints, Points: len(ps), Need: 2}}, fmt.Errorf("memory trend: %d finite points: %w", len(ps), ErrTooFewPoints)
	}
	if opt.Confidence <= 0 || opt.Confidence >= 1 {
		opt.Confidence = 0.95
	}
	if opt.MinGrowthPct == 0 {
		opt.MinGrowthPct = 2
	}
	if opt.MinGrowthPct < 0 {
		opt.MinGrowthPct = 0
	}
	if opt.MinSpan == 0 {
		opt.MinSpan = MinMemorySpan
	}
	span := ps[len(ps)-1].T.Sub(ps[0].T)
	if opt.MinSpan > 0 && span < opt.MinSpan {
		return MemoryResult{Verdict: Unknown, Readings: len(ps), Span: span, MinGrowthPct: opt.MinGrowthPct,
			Why: MemoryWhy{Kind: MemoryShortSpan, SpanS: span.Seconds(), MinSpanS: opt.MinSpan.Seconds()}}, nil
	}
	r := MemoryResult{Readings: len(ps), Span: span, MinGrowthPct: opt.MinGrowthPct}
	if base, n := afterGC(ps, clean(gc)); n >= minBaseline {
		r.Baseline = base
		r.Basis = MemoryBasis{Method: MethodAfterGC, N: n}
	} else if base := afterDrops(ps); len(base) >= minBaseline {
		r.Baseline = base
		r.Basis = MemoryBasis{Method: MethodDrops, N: len(base)}
	} else {
		span := ps[len(ps)-1].T.Sub(ps[0].T)
		w := opt.Window
		if w <= 0 || span/w < minBaseline {
			w = span / 12
		}
		r.Baseline = envelope(ps, w)
		r.Basis = MemoryBasis{Method: MethodEnvelope, N: len(r.Baseline), WindowS: w.Round(time.Second).Seconds()}
	}
	if len(r.Baseline) < minBaseline {
		r.Verdict = Unknown
		r.Why = MemoryWhy{Kind: MemoryFewBaseline, Points: len(r.Baseline), Need: minBaseline}
		return r, nil
	}
	t0 := ps[0].T
	x := hours(r.Baseline, t0)
	y := values(r.Baseline)
	f := fitSlope(x, y)
	r.Mean = stat.Mean(y, nil)
	r.SlopePerHour = f.slope
	r.CILow, r.CIHigh = f.ci(opt.Confidence)
	spanH := ps[len(ps)-1].T.Sub(t0).Hours()
	growth := f.slope * spanH
	minGrowth := opt.MinGrowthPct / 100 * math.Abs(r.Mean)
	if r.Mean != 0 {
		r.GrowthPct = 100 * growth / math.Abs(r.Mean)
		r.GrowthHighPct = 100 * r.CIHigh * spanH / math.Abs(r.Mean)
	}
	r.Why = MemoryWhy{GrowthPct: r.GrowthPct, GrowthHighPct: r.GrowthHighPct, MinGrowthPct: opt.MinGrowthPct, Hours: spanH, Confidence: opt.Confidence, Points: len(r.Baseline)}
	if r.Mean != 0 {
		r.Why.GrowthLowPct = 100 * r.CILow * spanH / math.Abs(r.Mean)
	}
	switch {
	case r.CILow > 0 && growth >= minGrowth:
		r.Verdict, r.Why.Kind = Growing, MemoryGrowing
		if opt.Limit > 0 {
			end := f.intercept + f.slope*spanH
			d := time.Duration(math.Max(0, (opt.Limit-end)/f.slope) * float64(time.Hour))
			r.TimeToLimit = &d
		}
	case r.CIHigh*spanH < minGrowth || r.CIHigh <= 0:
		// The interval excludes a growth of the threshold's size.
		r.Verdict, r.Why.Kind = Stable, MemoryFlat
		if r.CILow > 0 {
			r.Why.Kind = MemorySmallGrowth
		}
	default:
		// Neither growth nor its absence is shown: the interval holds
		// both no growth (or growth below the threshold) and growth above it.
		r.Verdict, r.Why.Kind = Unknown, MemoryUndecided
	}
	return r, nil
}

// afterGC returns one after-GC point per rise of the GC counter and the
// number of rises. A counter that falls (process restart) starts over
// without counting a collection.
func afterGC(mem, gc []core.Point) ([]core.Point, int) {
	var out []core.Point
	n := 0
	for j := 1; j < len(gc); j++ {
		if gc[j].V <= gc[j-1].V {
			continue
		}
		n++
		lo, hi := gc[j-1].T, gc[j].T
		// Lowest reading in (lo, hi]; memory sampled together with the
		// counter lands exactly on hi.
		i := sort.Search(len(mem), func(i int) bool { return mem[i].T.After(lo) })
		best := -1
		for ; i < len(mem) && !mem[i].T.After(hi); i++ {
			if best < 0 || mem[i].V < mem[best].V {
				best = i
			}
		}
		if best < 0 && i < len(mem) {
			best = i // first reading after the collection
		}
		if best >= 0 && (len(out) == 0 || out[len(out)-1].T.Before(mem[best].T)) {
			out = append(out, mem[best])
		}
	}
	return out, n
}

// afterDrops finds collections in the series itself, for when no GC
// counter is available. A fall between consecutive readings is a collection
// when it is larger than a quarter of the series' robust range (p99 − p1)
// and larger than five robust standard deviations of the step-to-step
// changes (1.4826·MAD), so reading noise on a flat series is never taken for
// a sawtooth. The lowest reading of the fall (it may span several samples)
// is an after-GC point. A leak so fast that it dwarfs the sawtooth hides the
// drops; the lower envelope then takes over and still sees the rise.
func afterDrops(ps []core.Point) []core.Point {
	if len(ps) < 3 {
		return nil
	}
	v := values(ps)
	sort.Float64s(v)
	rng := stat.Quantile(0.99, stat.Empirical, v, nil) - stat.Quantile(0.01, stat.Empirical, v, nil)
	d := make([]float64, len(ps)-1)
	for i := 1; i < len(ps); i++ {
		d[i-1] = ps[i].V - ps[i-1].V
	}
	sort.Float64s(d)
	med := stat.Quantile(0.5, stat.Empirical, d, nil)
	for i := range d {
		d[i] = math.Abs(d[i] - med)
	}
	sort.Float64s(d)
	minFall := math.Max(rng/4, 5*1.4826*stat.Quantile(0.5, stat.Empirical, d, nil))
	if minFall <= 0 {
		return nil
	}
	var out []core.Point
	for i := 1; i < len(ps); i++ {
		if ps[i-1].V-ps[i].V <= minFall {
			continue
		}
		for i+1 < len(ps) && ps[i+1].V < ps[i].V {
			i++
		}
		out = append(out, ps[i])
	}
	return out
}

// envelope returns the minimum of each window [t0+k·w, t0+(k+1)·w).
func envelope(ps []core.Point, w time.Duration) []core.Point {
	if w <= 0 {
		return nil
	}
	t0 := ps[0].T
	var out []core.Point
	cur := -1
	for _, p := range ps {
		k := int(p.T.Sub(t0) / w)
		if k != cur {
			out = append(out, p)
			cur = k
			continue
		}
		if p.V < out[len(out)-1].V {
			out[len(out)-1] = p
		}
	}
	return out
}
