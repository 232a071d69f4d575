// Package knee answers "where does it stop scaling?" from a stepped or swept
// run (or several runs at different loads): the knee of the throughput
// curve, a Universal Scalability Law fit with its predicted peak, the
// highest load that met every SLA, and a Little's-law check that the load
// generator delivered the load it was asked for.
//
// It is pure: the caller passes one Point per tested load and gets a plain
// Result. The methods are described in docs/analysis-methods.md.
package knee

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Point is one tested load level.
type Point struct {
	// Load is the offered load: concurrent users (closed model) or the
	// arrival rate in requests per second (open model); see LoadKind.
	Load          float64
	ThroughputRPS float64 // completed requests per second
	MeanMs        float64 // mean response time, milliseconds
	P95Ms         float64 // 95th percentile response time, milliseconds
	SLAMet        bool    // every SLA held at this load
}

// LoadKind says what Point.Load counts.
type LoadKind int

// Load kinds.
const (
	Users LoadKind = iota // concurrent virtual users (closed model)
	Rate                  // arrival rate, requests per second (open model)
)

// Options tunes Analyze. The zero value selects every default.
type Options struct {
	Kind LoadKind
	// MinGainShare is the knee threshold: a step from one load to the next
	// "stops scaling" when throughput gains less than this share of the
	// proportional gain (load +50 % with throughput +10 % is a share of
	// 0.2). Default 0.5, the point where, by Little's law, more than half of
	// the added concurrency turns into waiting instead of work.
	MinGainShare float64
	// MinStep is the smallest load increase a knee is judged over, as a
	// fraction: each load is compared with the first load at least this much
	// higher (default 0.2, i.e. 20 %), so the few-per-cent steps of a fine
	// sweep are not judged against throughput noise.
	MinStep float64
	// MinLatencyRise is how much the mean response time must rise over the
	// same step, as a fraction (default 0.05 = 5 %). A plateau without a
	// latency rise means the system was not the limit.
	MinLatencyRise float64
	// ThinkTime is the pause each user takes after each request (closed
	// model), used by the Little's-law check.
	ThinkTime time.Duration
	// MinDelivered flags a point whose Little's-law concurrency (closed) or
	// throughput (open) is below this fraction of the asked load; default 0.9.
	MinDelivered float64
	// MinR2 is the fit quality below which the USL fit is not reported;
	// default 0.8.
	MinR2 float64
	// PeakRange is how far beyond the highest tested load a predicted USL
	// peak may lie and still be reported, as a multiple; default 2. Further
	// out it is an extrapolation the data cannot support.
	PeakRange float64
}

func (o Options) withDefaults() Options {
	if o.MinGainShare <= 0 || o.MinGainShare >= 1 {
		o.MinGainShare = 0.5
	}
	if o.MinStep <= 0 {
		o.MinStep = 0.2
	}
	if o.MinLatencyRise <= 0 {
		o.MinLatencyRise = 0.05
	}
	if o.MinDelivered <= 0 || o.MinDelivered > 1 {
		o.MinDelivered = 0.9
	}
	if o.MinR2 <= 0 || o.MinR2 >= 1 {
		o.MinR2 = 0.8
	}
	if o.PeakRange < 1 {
		o.PeakRange = 2
	}
	return o
}

// Knee is the last load that still scaled: beyond it throughput gained less
// than MinGainShare of the proportional gain while the mean response time
// rose, and no higher load recovered the lost scaling (see findKnee).
type Knee struct {
	Kind          LoadKind
	Load          float64 // the knee load
	ThroughputRPS float64 // throughput at the knee
	MeanMs        float64 // mean response time at the knee
	NextLoad      float64 // the next tested load
	// GainShare is the share of the proportional throughput gain achieved
	// from Load to NextLoad (negative when throughput fell).
	GainShare float64
	// MaxLoad is the highest tested load and MaxMeanMs its mean response
	// time, for "beyond it average response time rose from … to …".
	MaxLoad, MaxMeanMs float64
}

// Sentence renders the knee in words, e.g. "throughput stopped scaling at
// 15 concurrent users, ~1000 req/s; beyond it average response time rose
// from 14 ms to 190 ms".
func (k *Knee) Sentence() string {
	return fmt.Sprintf("throughput stopped scaling at %s, ~%s req/s; beyond it average response time rose from %s ms to %s ms",
		loadWords(k.Kind, k.Load), roughly(k.ThroughputRPS), ms(k.MeanMs), ms(k.MaxMeanMs))
}

// Little is the Little's-law cross-check of one load level. In a closed
// model the users are always either waiting for a response or thinking, so
// users ≈ throughput × (response time + think time). Fewer means the
// generator did not keep all its users busy (CPU-starved generator,
// connection-pool limit, pacing it could not hold).
type Little struct {
	Load          float64
	ThroughputRPS float64
	// Expected is throughput × (mean response + think time) for a closed
	// model (the concurrency actually sustained), and the throughput itself
	// for an open model.
	Expected float64
	// Ratio is Expected / Load.
	Ratio float64
	// Short is true when Ratio < MinDelivered: the asked load was not
	// delivered.
	Short bool
	// Note explains a flagged or inconsistent point; empty otherwise.
	Note string
}

// Result is everything Analyze finds.
type Result struct {
	Kind LoadKind
	// Points are the input sorted by load, repeats of one load averaged
	// (SLAMet only when every repeat met it).
	Points []Point
	// Knee is nil when no knee was found; KneeReason then says why.
	Knee       *Knee
	KneeReason string
	// USL is nil when the data do not support a fit; USLReason then says
	// why. For an open model the fit is against the concurrency measured by
	// Little's law (throughput × mean response time), so PeakLoad is in
	// concurrent requests, not in requests per second.
	USL       *USL
	USLReason string
	// MaxLoadMeetingSLA is the highest load such that it and every lower
	// tested load met every SLA; nil when the lowest load already failed.
	MaxLoadMeetingSLA *float64
	// Little has one check per load level, in Points order.
	Little []Little
}

// Sentence is the knee's sentence, or the reason there is none.
func (r Result) Sentence() string {
	if r.Knee != nil {
		return r.Knee.Sentence()
	}
	return r.KneeReason
}

// Analyze finds the knee, fits the USL, finds the highest load meeting the
// SLA and runs the Little's-law check. Points may come in any order; a
// non-finite or negative value, or a load that is not positive, is an error
// naming the point.
func Analyze(points []Point, opt Options) (Result, error) {
	o := opt.withDefaults()
	for i, p := range points {
		for _, v := range []struct {
			name string
			v    float64
		}{{"load", p.Load}, {"throughput", p.ThroughputRPS}, {"mean", p.MeanMs}, {"p95", p.P95Ms}} {
			if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 {
				return Result{}, fmt.Errorf("knee: point %d: %s is %v", i, v.name, v.v)
			}
		}
		if p.Load == 0 {
			return Result{}, fmt.Errorf("knee: point %d: load is 0", i)
		}
	}
	r := Result{Kind: o.Kind, Points: merge(points)}
	r.Knee, r.KneeReason = findKnee(r.Points, o)
	r.USL, r.USLReason = fitSupported(points, len(r.Points), o)
	for i, p := range r.Points {
		if !p.SLAMet {
			break
		}
		l := r.Points[i].Load
		r.MaxLoadMeetingSLA = &l
	}
	r.Little = little(r.Points, o)
	return r, nil
}

// merge sorts by load and averages repeats of one load.
func merge(points []Point) []Point {
	ps := append([]Point(nil), points...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Load < ps[j].Load })
	var out []Point
	for i := 0; i < len(ps); {
		j := i
		sum := Point{Load: ps[i].Load, SLAMet: true}
		for ; j < len(ps) && ps[j].Load == ps[i].Load; j++ {
			sum.ThroughputRPS += ps[j].ThroughputRPS
			sum.MeanMs += ps[j].MeanMs
			sum.P95Ms += ps[j].P95Ms
			sum.SLAMet = sum.SLAMet && ps[j].SLAMet
		}
		n := float64(j - i)
		sum.ThroughputRPS /= n
		sum.MeanMs /= n
		sum.P95Ms /= n
		out = append(out, sum)
		i = j
	}
	return out
}

// gainShare is the throughput gain from a to b as a share of the gain
// proportional scaling would give: (Xb/Xa − 1) / (Lb/La − 1).
func gainShare(a, b Point) float64 {
	return (b.ThroughputRPS/a.ThroughputRPS - 1) / (b.Load/a.Load - 1)
}

// findKnee looks for the first load k at which scaling stops. Each load is
// compared with the first load at least MinStep above it (j), not with its
// neighbour: in a fine sweep (2, 4, 6, … users) a neighbour adds a few per
// cent of load, no more than the measurement noise of throughput, and the
// share would be noise. k is a knee candidate when the gain from k to j is
// below MinGainShare of proportional scaling while mean latency rose by
// MinLatencyRise, and no higher load recovers: every point beyond j must
// also stay below MinGainShare of proportional scaling measured from k (so
// a single noisy dip is not the knee). The knee is then moved up to the
// highest load between k and j that still scaled by MinGainShare from k,
// so a sharp plateau is named where it starts, not a step early.
func findKnee(ps []Point, o Options) (*Knee, string) {
	if len(ps) < 2 {
		return nil, fmt.Sprintf("a knee needs at least 2 distinct loads, have %d", len(ps))
	}
	last := ps[len(ps)-1]
	flatNoRise := -1
	for k := 0; k+1 < len(ps); k++ {
		a := ps[k]
		if a.ThroughputRPS <= 0 {
			continue
		}
		j := k + 1
		for j < len(ps) && ps[j].Load < a.Load*(1+o.MinStep) {
			j++
		}
		if j == len(ps) {
			break // no load far enough above k to judge it
		}
		b := ps[j]
		share := gainShare(a, b)
		if share >= o.MinGainShare {
			continue
		}
		sustained := true
		for _, c := range ps[j+1:] {
			if gainShare(a, c) >= o.MinGainShare {
				sustained = false
				break
			}
		}
		if !sustained {
			continue
		}
		if b.MeanMs <= a.MeanMs*(1+o.MinLatencyRise) {
			// A stall without a latency rise is only blamed on the
			// generator when Little's law confirms that the asked load was
			// not delivered; otherwise it is taken as noise.
			if flatNoRise < 0 && littleRatio(b, o) < o.MinDelivered {
				flatNoRise = k
			}
			continue
		}
		at := k
		for i := k + 1; i < j; i++ {
			if gainShare(a, ps[i]) >= o.MinGainShare {
				at = i
			}
		}
		a = ps[at]
		return &Knee{
			Kind: o.Kind, Load: a.Load, ThroughputRPS: a.ThroughputRPS, MeanMs: a.MeanMs,
			NextLoad: ps[at+1].Load, GainShare: gainShare(a, ps[at+1]), MaxLoad: last.Load, MaxMeanMs: last.MeanMs,
		}, ""
	}
	if flatNoRise >= 0 {
		a := ps[flatNoRise]
		return nil, fmt.Sprintf("throughput stopped growing beyond %s (~%s req/s) but average response time did not rise: the load generator, not the system, was probably the limit (see the Little's-law check)",
			loadWords(o.Kind, a.Load), roughly(a.ThroughputRPS))
	}
	return nil, fmt.Sprintf("throughput kept scaling up to the highest tested load, %s (~%s req/s)",
		loadWords(o.Kind, last.Load), roughly(last.ThroughputRPS))
}

// fitSupported fits the USL to every observation and decides whether the
// data support it.
func fitSupported(points []Point, distinct int, o Options) (*USL, string) {
	if distinct < 4 {
		return nil, fmt.Sprintf("a USL fit needs at least 4 distinct loads, have %d", distinct)
	}
	loads := make([]float64, 0, len(points))
	xs := make([]float64, 0, len(points))
	for _, p := range points {
		n := p.Load
		if o.Kind == Rate {
			n = p.ThroughputRPS * p.MeanMs / 1000
		}
		if n > 0 {
			loads = append(loads, n)
			xs = append(xs, p.ThroughputRPS)
		}
	}
	u, err := FitUSL(loads, xs)
	if err != nil {
		return nil, err.Error()
	}
	var nmax float64
	for _, n := range loads {
		nmax = math.Max(nmax, n)
	}
	params := fmt.Sprintf("σ = %.3g, κ = %.3g, R² = %.3f", u.Sigma, u.Kappa, u.R2)
	switch {
	case u.R2 < o.MinR2:
		return nil, fmt.Sprintf("the USL does not describe these data (%s; R² below %.2f)", params, o.MinR2)
	case u.Sigma < 0.01 && u.PeakLoad > o.PeakRange*nmax:
		return nil, fmt.Sprintf("no saturation: throughput grew in proportion to load (%s)", params)
	case u.PeakLoad > o.PeakRange*nmax:
		return nil, fmt.Sprintf("no coherency penalty found: peak beyond tested range (%s; throughput would approach ~%s req/s)",
			params, roughly(u.PeakThroughputRPS))
	}
	return &u, ""
}

// little runs the Little's-law check on each load level.
func little(ps []Point, o Options) []Little {
	out := make([]Little, len(ps))
	for i, p := range ps {
		c := Little{Load: p.Load, ThroughputRPS: p.ThroughputRPS}
		c.Ratio = littleRatio(p, o)
		c.Expected = c.Ratio * p.Load
		c.Short = c.Ratio < o.MinDelivered
		switch {
		case c.Short && o.Kind == Rate:
			c.Note = fmt.Sprintf("throughput reached only %.0f%% of the asked rate: the system saturated or the generator dropped starts", 100*c.Ratio)
		case c.Short:
			c.Note = fmt.Sprintf("only %.3g of %s were busy by Little's law (%.0f%%): the generator did not deliver the load", c.Expected, loadWords(Users, p.Load), 100*c.Ratio)
		case o.Kind == Users && c.Ratio > 1/o.MinDelivered:
			c.Note = fmt.Sprintf("Little's law gives %.3g busy users for %s: think time or response time overstated, or requests issued in parallel", c.Expected, loadWords(Users, p.Load))
		}
		out[i] = c
	}
	return out
}

// littleRatio is the delivered share of the asked load: throughput × (mean
// response + think time) / users for a closed model, throughput / rate for
// an open one.
func littleRatio(p Point, o Options) float64 {
	if o.Kind == Rate {
		return p.ThroughputRPS / p.Load
	}
	return p.ThroughputRPS * (p.MeanMs/1000 + o.ThinkTime.Seconds()) / p.Load
}

// loadWords renders a load with its unit: "15 concurrent users", "800 req/s offered".
func loadWords(k LoadKind, l float64) string {
	if k == Rate {
		return roughlyExact(l) + " req/s offered"
	}
	if l == 1 {
		return "1 concurrent user"
	}
	return roughlyExact(l) + " concurrent users"
}

// roughlyExact prints whole numbers without decimals and others with up to 3
// significant digits.
func roughlyExact(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// roughly rounds to two significant digits for the "~1000 req/s" style.
func roughly(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	mag := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-1)
	r := math.Round(v/mag) * mag
	if math.Abs(r) >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.2g", r)
}

// ms formats milliseconds: whole numbers from 10 ms up, one decimal below.
func ms(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
