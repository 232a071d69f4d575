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
	// Flag says what a flagged or inconsistent point shows; LittleOK
	// otherwise. The report words it.
	Flag LittleFlag
}

// LittleFlag is what the Little's-law check of one load level shows.
type LittleFlag int

// Little's-law flags.
const (
	LittleOK LittleFlag = iota
	// LittleShortRate: an open model's throughput fell below MinDelivered
	// of the asked rate (the system saturated or the generator dropped
	// starts).
	LittleShortRate
	// LittleShortUsers: fewer users were busy by Little's law than asked
	// (the generator did not deliver the load).
	LittleShortUsers
	// LittleOver: more users were busy by Little's law than there were
	// (think or response time overstated, or requests issued in
	// parallel).
	LittleOver
)

var littleNames = [...]string{"", "short of the asked rate", "short of the asked users", "more busy than asked"}

func (f LittleFlag) String() string { return littleNames[max(0, min(int(f), len(littleNames)-1))] }

// MarshalText writes the flag as its name.
func (f LittleFlag) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads a flag's name.
func (f *LittleFlag) UnmarshalText(b []byte) error {
	return unmarshalName(littleNames[:], b, (*int)(f), "little's-law flag")
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

var outcomeNames = [...]string{"too few loads", "scaling", "stopped", "stalled", "thin data"}

func (o Outcome) String() string { return outcomeNames[max(0, min(int(o), len(outcomeNames)-1))] }

// MarshalText writes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error {
	return unmarshalName(outcomeNames[:], b, (*int)(o), "knee outcome")
}

// Stall says what a stall without a latency rise points at.
type Stall int

// Stall causes.
const (
	StallNone Stall = iota
	// StallServerTimes: the times are the servers' own (an access log),
	// so the wait is in front of them (a balancer's or proxy's queue) or
	// in the load generator.
	StallServerTimes
	// StallGenerator: the Little's-law check shows the asked load was not
	// delivered: the generator, not the system, was probably the limit.
	StallGenerator
	// StallNoise: the load was delivered; the flat throughput is taken
	// for noise, not a knee.
	StallNoise
)

var stallNames = [...]string{"", "server times", "generator", "noise"}

func (s Stall) String() string { return stallNames[max(0, min(int(s), len(stallNames)-1))] }

// MarshalText writes the cause as its name.
func (s Stall) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a cause's name.
func (s *Stall) UnmarshalText(b []byte) error {
	return unmarshalName(stallNames[:], b, (*int)(s), "stall cause")
}

// NoKnee says why a sweep has no knee: its outcome and the numbers the
// report's sentence quotes. summary.json's capacity.no_knee.
type NoKnee struct {
	Outcome Outcome `json:"outcome"`
	// Stall is the cause when Outcome is Stalled.
	Stall Stall `json:"stall,omitempty"`
	// Loads is the number of distinct loads tested.
	Loads int `json:"loads"`
	// Load and ThroughputRPS are the level the outcome is about: the
	// highest tested (Scaling), the one beyond which throughput stopped
	// growing (Stalled), the one with too little data (ThinData); 0 for
	// TooFewLoads. Samples and Seconds are that level's data.
	Load          float64 `json:"load,omitempty"`
	ThroughputRPS float64 `json:"throughput_rps,omitempty"`
	Samples       int64   `json:"samples,omitempty"`
	Seconds       float64 `json:"seconds,omitempty"`
}

// USLSkip is why a USL fit is not reported.
type USLSkip int

// Reasons for no USL fit. The last four are a capacity search's
// (analysis.FinishSearch), over its probes.
const (
	USLFitted       USLSkip = iota
	USLTooFewLoads          // fewer than Need distinct loads (Loads)
	USLNoFit                // the data cannot be fitted at all (FitUSL failed)
	USLPoorFit              // R² below MinR2
	USLNoSaturation         // throughput grew in proportion to load: the peak lies far beyond the tested range
	USLPeakBeyond           // no coherency penalty found: the peak lies beyond the tested range
	USLNoProbe              // no probe of a search measured the system
	USLTooFewProbes         // fewer than Need distinct probe loads measured the system
	USLPoorAdjFit           // adjusted R² (AdjR2) below MinR2
	USLContradicted         // the fit's peak is above every throughput measured around it
)

var uslNames = [...]string{"", "too few loads", "no fit", "poor fit", "no saturation", "peak beyond range", "no probe", "too few probes", "poor adjusted fit", "contradicted"}

func (k USLSkip) String() string { return uslNames[max(0, min(int(k), len(uslNames)-1))] }

// MarshalText writes the reason as its name.
func (k USLSkip) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a reason's name.
func (k *USLSkip) UnmarshalText(b []byte) error {
	return unmarshalName(uslNames[:], b, (*int)(k), "usl skip")
}

// USLWhy says why no USL fit is reported, with the numbers its sentence
// quotes: the rejected fit's parameters (Sigma, Kappa, R2, its peak
// throughput) and the threshold it missed. summary.json's
// capacity.usl_skip.
type USLWhy struct {
	Kind USLSkip `json:"kind"`
	// Loads are the distinct loads (or probes) fitted, Need the fewest a
	// fit needs.
	Loads int     `json:"loads"`
	Need  int     `json:"need,omitempty"`
	Sigma float64 `json:"sigma,omitempty"`
	Kappa float64 `json:"kappa,omitempty"`
	R2    float64 `json:"r2,omitempty"`
	// AdjR2 is R² adjusted for the fit's 3 parameters (USLPoorAdjFit).
	AdjR2 float64 `json:"adj_r2,omitempty"`
	// MinR2 is the threshold R2 (or AdjR2) stayed below.
	MinR2             float64 `json:"min_r2,omitempty"`
	PeakThroughputRPS float64 `json:"peak_throughput_rps,omitempty"`
	// MaxThroughputRPS is the highest throughput measured (USLContradicted).
	MaxThroughputRPS float64 `json:"max_throughput_rps,omitempty"`
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

// Result is everything Analyze finds.
type Result struct {
	Kind LoadKind
	// Points are the input sorted by load, repeats of one load averaged
	// (SLAMet only when every repeat met it).
	Points []Point
	// Outcome says what the sweep showed; Knee is set only for Stopped.
	Outcome Outcome
	// Knee is nil when no knee was found; NoKnee then says why.
	Knee   *Knee
	NoKnee *NoKnee
	// USL is nil when the data do not support a fit; USLSkip then says
	// why. For an open model the fit is against the concurrency measured by
	// Little's law (throughput × mean response time), so PeakLoad is in
	// concurrent requests, not in requests per second.
	USL     *USL
	USLSkip *USLWhy
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
	r.Knee, r.NoKnee = findKnee(r.Points, o)
	r.Outcome = Stopped
	if r.NoKnee != nil {
		r.Outcome = r.NoKnee.Outcome
	}
	if r.Outcome != TooFewLoads {
		for i, p := range r.Points {
			if (p.Samples > 0 && p.Samples < MinSamples) || (p.Seconds > 0 && p.Seconds < MinSeconds) {
				r.Thin = &r.Points[i]
				r.Knee, r.Outcome = nil, ThinData
				r.NoKnee = &NoKnee{Outcome: ThinData, Loads: len(r.Points), Load: p.Load, ThroughputRPS: p.ThroughputRPS, Samples: p.Samples, Seconds: p.Seconds}
				break
			}
		}
	}
	r.USL, r.USLSkip = fitSupported(points, len(r.Points), o)
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
func findKnee(ps []Point, o Options) (*Knee, *NoKnee) {
	if len(ps) < 2 {
		return nil, &NoKnee{Outcome: TooFewLoads, Loads: len(ps)}
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
		}, nil
	}
	if flatNoRise >= 0 {
		a := ps[flatNoRise]
		nk := &NoKnee{Outcome: Stalled, Loads: len(ps), Load: a.Load, ThroughputRPS: a.ThroughputRPS, Samples: a.Samples, Seconds: a.Seconds, Stall: StallNoise}
		switch {
		case o.ServerTimes:
			// The servers' own times stay flat while the clients' may
			// not: the wait is in front of the measured servers.
			nk.Stall = StallServerTimes
		case littleRatio(ps[len(ps)-1], o) < o.MinDelivered:
			nk.Stall = StallGenerator
		}
		return nil, nk
	}
	return nil, &NoKnee{Outcome: Scaling, Loads: len(ps), Load: last.Load, ThroughputRPS: last.ThroughputRPS, Samples: last.Samples, Seconds: last.Seconds}
}

// fitSupported fits the USL to every observation and decides whether the
// data support it.
func fitSupported(points []Point, distinct int, o Options) (*USL, *USLWhy) {
	if distinct < 4 {
		return nil, &USLWhy{Kind: USLTooFewLoads, Loads: distinct, Need: 4}
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
		return nil, &USLWhy{Kind: USLNoFit, Loads: distinct}
	}
	var nmax float64
	for _, n := range loads {
		nmax = math.Max(nmax, n)
	}
	why := &USLWhy{Loads: distinct, Sigma: u.Sigma, Kappa: u.Kappa, R2: u.R2, MinR2: o.MinR2}
	switch {
	case u.R2 < o.MinR2:
		why.Kind = USLPoorFit
	case u.Sigma < 0.01 && u.PeakLoad > o.PeakRange*nmax:
		why.Kind = USLNoSaturation
	case u.PeakLoad > o.PeakRange*nmax:
		why.Kind, why.PeakThroughputRPS = USLPeakBeyond, u.PeakThroughputRPS
	default:
		return &u, nil
	}
	return nil, why
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
			c.Flag = LittleShortRate
		case c.Short:
			c.Flag = LittleShortUsers
		case o.Kind == Users && c.Ratio > 1/o.MinDelivered:
			c.Flag = LittleOver
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
