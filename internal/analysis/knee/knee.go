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
	"strconv"
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
	// Samples and Seconds are the requests and the time behind the
	// figures; 0 when unknown (then not judged). A scaling verdict needs
	// MinSamples and MinSeconds at every load.
	Samples int64
	Seconds float64
}

// The least data a load level needs for a verdict on scaling: a step of a
// few requests or a few seconds shows neither a knee nor its absence. At
// 100 requests a step's count is known to about ±10 % (Poisson), the size
// of the gains judged; two seconds are two whole per-second records.
const (
	MinSamples = 100
	MinSeconds = 2.0
)

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
	// MinGain is the knee threshold, the stop rule's: throughput has
	// stopped scaling at a load when no higher tested load gives more than
	// this much more throughput, as a fraction (default 0.05 = 5 %, the
	// stop rule's usual threshold; pass the plan's stop_when threshold).
	MinGain float64
	// MinStep is the smallest load increase a knee is judged over, as a
	// fraction: a load is a knee only when a tested load at least this
	// much higher exists (default 0.2, i.e. 20 %), so the few-per-cent
	// steps of a fine sweep are not judged against throughput noise.
	MinStep float64
	// MinLatencyRise is how much the mean response time must rise over the
	// same step, as a fraction (default 0.05 = 5 %). A plateau without a
	// latency rise means the system was not the limit.
	MinLatencyRise float64
	// ServerTimes says the response times were measured at the servers
	// (an access log), not by the load generator: a stall without a rise
	// of those times then points at a queue in front of the servers as
	// much as at the generator.
	ServerTimes bool
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
	if o.MinGain <= 0 || o.MinGain >= 1 {
		o.MinGain = 0.05
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

// Knee is the load at which throughput stopped scaling: no higher tested
// load gave more than MinGain more throughput, while the mean response
// time rose (see findKnee).
type Knee struct {
	Kind          LoadKind
	Load          float64 // the knee load
	ThroughputRPS float64 // throughput at the knee
	MeanMs        float64 // mean response time at the knee
	NextLoad      float64 // the next tested load
	// Gain is the most any higher tested load added to the knee's
	// throughput, as a fraction (negative when all gave less); MinGain is
	// the threshold it stayed below.
	Gain, MinGain float64
	// MaxLoad is the highest tested load and MaxMeanMs its mean response
	// time, for "beyond it average response time rose from … to …".
	MaxLoad, MaxMeanMs float64
}

// Sentence renders the knee in words, e.g. "throughput stopped scaling at
// 15 concurrent users, ~1000 req/s: higher loads added at most +4.7 %
// (threshold 5 %); beyond it average response time rose from 14 ms to
// 190 ms".
func (k *Knee) Sentence() string {
	return fmt.Sprintf("throughput stopped scaling at %s, ~%s req/s: %s", loadWords(k.Kind, k.Load), roughly(k.ThroughputRPS), k.Evidence())
}

// Evidence is the part of Sentence after the knee itself: "higher loads
// added at most +4.7 % (threshold 5 %); beyond it average response time
// rose from 14 ms to 190 ms".
func (k *Knee) Evidence() string {
	gain := "higher loads added at most " + signedPct(100*k.Gain)
	if k.Gain < 0.0005 {
		gain = "no higher load added throughput"
	}
	return fmt.Sprintf("%s (threshold %s); beyond it average response time rose from %s ms to %s ms",
		gain, trimPct(100*k.MinGain), ms(k.MeanMs), ms(k.MaxMeanMs))
}

// signedPct is a signed percentage with one decimal ("+4.7 %", "−2.0 %").
func signedPct(v float64) string {
	if math.Abs(v) < 0.05 {
		return "0 %"
	}
	if v < 0 {
		return fmt.Sprintf("−%.1f %%", -v)
	}
	return fmt.Sprintf("+%.1f %%", v)
}

// trimPct is a threshold percentage without needless decimals ("5 %").
func trimPct(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " %"
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

// Outcome is what a sweep showed about scaling.
type Outcome int

// Outcomes.
const (
	TooFewLoads Outcome = iota // fewer than 2 distinct loads
	Scaling                    // throughput kept growing up to the highest load
	Stopped                    // a knee: throughput stopped growing while latency rose
	Stalled                    // throughput stopped growing but latency did not rise
	ThinData                   // a load level had fewer than MinSamples or MinSeconds: no verdict
)

// Result is everything Analyze finds.
type Result struct {
	Kind LoadKind
	// Points are the input sorted by load, repeats of one load averaged
	// (SLAMet only when every repeat met it).
	Points []Point
	// Outcome says what the sweep showed; Knee is set only for Stopped.
	Outcome Outcome
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
	// MinGain is the knee threshold used (Options.MinGain with its
	// default applied), for sentences that quote it.
	MinGain float64
	// Little has one check per load level, in Points order.
	Little []Little
	// Thin is the first load level (in load order) with too little data
	// when Outcome is ThinData; nil otherwise.
	Thin *Point
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
	r := Result{Kind: o.Kind, Points: merge(points), MinGain: o.MinGain}
	r.Knee, r.KneeReason, r.Outcome = findKnee(r.Points, o)
	if r.Outcome != TooFewLoads {
		for i, p := range r.Points {
			if (p.Samples > 0 && p.Samples < MinSamples) || (p.Seconds > 0 && p.Seconds < MinSeconds) {
				r.Thin = &r.Points[i]
				r.Knee, r.Outcome = nil, ThinData
				r.KneeReason = fmt.Sprintf("not enough data to judge: %s had %d requests over %.3g s; a verdict on scaling needs every load step to last %g s or more and hold %d or more",
					loadWords(o.Kind, p.Load), p.Samples, p.Seconds, MinSeconds, MinSamples)
				break
			}
		}
	}
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
			sum.Samples += ps[j].Samples
			sum.Seconds += ps[j].Seconds
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

// findKnee finds where throughput stopped scaling. The definition is the
// stop rule's, applied to the whole sweep after the fact: the knee is the
// lowest tested load k beyond which throughput never again grows by more
// than MinGain — every higher tested load j has X_j < X_k·(1+MinGain).
// Looking at every higher load, not only the next, keeps a single noisy
// dip from being the knee and names a sharp plateau where it starts. Two
// guards keep noise out: a load at least MinStep above k must have been
// tested (a fine sweep's few-per-cent steps gain no more than noise), and
// the mean response time must have risen by MinLatencyRise from k to the
// highest load (otherwise the system was not the limit).
func findKnee(ps []Point, o Options) (*Knee, string, Outcome) {
	if len(ps) < 2 {
		return nil, fmt.Sprintf("a knee needs at least 2 distinct loads, have %d", len(ps)), TooFewLoads
	}
	last := ps[len(ps)-1]
	flatNoRise := -1
	for k := 0; k+1 < len(ps); k++ {
		a := ps[k]
		if a.ThroughputRPS <= 0 {
			continue
		}
		if last.Load < a.Load*(1+o.MinStep) {
			break // no load far enough above k to judge it
		}
		best := math.Inf(-1)
		for _, c := range ps[k+1:] {
			best = math.Max(best, c.ThroughputRPS)
		}
		gain := best/a.ThroughputRPS - 1
		if gain >= o.MinGain {
			continue
		}
		if last.MeanMs <= a.MeanMs*(1+o.MinLatencyRise) {
			// A stall without a latency rise is not a knee of the system.
			if flatNoRise < 0 {
				flatNoRise = k
			}
			continue
		}
		return &Knee{
			Kind: o.Kind, Load: a.Load, ThroughputRPS: a.ThroughputRPS, MeanMs: a.MeanMs,
			NextLoad: ps[k+1].Load, Gain: gain, MinGain: o.MinGain, MaxLoad: last.Load, MaxMeanMs: last.MeanMs,
		}, "", Stopped
	}
	if flatNoRise >= 0 {
		a := ps[flatNoRise]
		stall := fmt.Sprintf("throughput stopped growing beyond %s (~%s req/s) but average response time did not rise", loadWords(o.Kind, a.Load), roughly(a.ThroughputRPS))
		switch {
		case o.ServerTimes:
			// The servers' own times stay flat while the clients' may
			// not: the wait is in front of the measured servers.
			return nil, stall + ": these times are the servers' own, so the limit is in front of them (a queue in a balancer or proxy) or in the load generator", Stalled
		case littleRatio(ps[len(ps)-1], o) < o.MinDelivered:
			return nil, stall + ": the load generator, not the system, was probably the limit (the Little's-law check shows the asked load was not delivered)", Stalled
		}
		return nil, stall + ", and the Little's-law check shows the load was delivered: taken as noise, not a knee", Stalled
	}
	return nil, fmt.Sprintf("throughput kept scaling up to the highest tested load, %s (~%s req/s)",
		loadWords(o.Kind, last.Load), roughly(last.ThroughputRPS)), Scaling
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
	params := fmt.Sprintf("σ = %s, κ = %s, R² = %s", sig3(u.Sigma), sig3(u.Kappa), r2Text(u.R2, o.MinR2))
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

// sig3 prints a fitted parameter with 3 significant digits in plain
// notation ("0.000831", never "8.31e-04"); a value below 1e-6 — a
// coefficient the bounded fit pinned at zero, "5.68e-16" — is "0".
func sig3(v float64) string {
	if math.Abs(v) < 1e-6 {
		return "0"
	}
	d := max(2-int(math.Floor(math.Log10(math.Abs(v)))), 0)
	return strconv.FormatFloat(v, 'f', d, 64)
}

// r2Text prints R² to 3 decimals, or to as many more as it takes not to
// round a value below the threshold up to it ("R² = 0.7996; below 0.80",
// never "R² = 0.800; below 0.80").
func r2Text(r2, threshold float64) string {
	for d := 3; d < 8; d++ {
		s := strconv.FormatFloat(r2, 'f', d, 64)
		if v, _ := strconv.ParseFloat(s, 64); r2 >= threshold || v < threshold {
			return s
		}
	}
	return strconv.FormatFloat(r2, 'f', -1, 64)
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
