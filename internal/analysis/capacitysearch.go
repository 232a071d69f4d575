package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
)

// SearchFile is the capacity search's answer in the search's directory:
// {"name": …, "capacity": {"search": capacity.Search}}.
const SearchFile = "capacity.json"

// SearchFileContent is SearchFile's content.
type SearchFileContent struct {
	Name     string `json:"name"`
	Capacity struct {
		Search *capacity.Search `json:"search"`
	} `json:"capacity"`
}

// LoadSearch reads a run directory's capacity search (SearchFile); nil
// without error when the directory holds none.
func LoadSearch(dir string) (*capacity.Search, error) {
	b, err := os.ReadFile(filepath.Join(dir, SearchFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the capacity search: %w", err)
	}
	var f SearchFileContent
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("reading the capacity search: %s: %w", SearchFile, err)
	}
	return f.Capacity.Search, nil
}

// MonitorTargets groups monitor series by target, as the capacity
// analysis reads them (the last series of a metric wins, as in the
// report's resource tables). The load generator's own targets (role
// generator) are left out: their health is validity's, and a generator
// host at its CPU ceiling is not the system's bottleneck (the generator's
// own CPU enters the readings as resources.Generator).
func MonitorTargets(targets []mondata.TargetStatus, series []core.Series) []resources.Target {
	gen := map[string]bool{}
	for _, t := range targets {
		if t.Role == mondata.RoleGenerator {
			gen[t.Name] = true
		}
	}
	var out []resources.Target
	idx := map[string]int{}
	seen := map[[2]string]int{}
	add := func(name, kind string) int {
		if i, ok := idx[name]; ok {
			if out[i].Kind == "" {
				out[i].Kind = kind
			}
			return i
		}
		idx[name] = len(out)
		out = append(out, resources.Target{Name: name, Kind: kind})
		return len(out) - 1
	}
	for _, t := range targets {
		if !gen[t.Name] {
			add(t.Name, t.Kind)
		}
	}
	for i := range series {
		s := &series[i]
		if gen[s.Target] {
			continue
		}
		t := add(s.Target, s.Kind)
		k := [2]string{s.Target, s.Metric}
		if j, dup := seen[k]; dup {
			out[t].Series[j] = s
			continue
		}
		seen[k] = len(out[t].Series)
		out[t].Series = append(out[t].Series, s)
	}
	return out
}

// ProbeReadings reads every monitored component of a probe's run over its
// phase named phase, with the generator's own CPU there (from the
// summary's validity): one step of the search's bottleneck analysis. Nil
// when the run has no such phase or nothing with a capacity was read.
func ProbeReadings(d *Dataset, s *Summary, targets []resources.Target, phase string) []resources.Reading {
	for _, p := range d.Phases {
		if p.Name != phase {
			continue
		}
		gen := 0.0
		if s != nil && s.Validity != nil {
			for _, pv := range s.Validity.Phases {
				if pv.Phase == phase {
					gen = pv.CPUPct
				}
			}
		}
		rs := resources.Readings(resources.Uses(targets, d.Info.Host.CPUs), p, gen)
		for i := range rs {
			r := &rs[i]
			r.Used, r.Capacity, r.Utilisation = round3(r.Used), round3(r.Capacity), round6(r.Utilisation)
		}
		return rs
	}
	return nil
}

// FinishSearch completes a capacity search's result from its probes: the
// component that saturated first as the load rose (readings[i] are probe
// i's, ProbeReadings) and the Universal Scalability Law fit over the
// probes that measured the system. The fit is the knee package's, with
// its own tests of soundness (at least 4 distinct loads, R² ≥ 0.8, a peak
// within twice the highest load probed); without them USL stays nil and
// USLReason says why.
func FinishSearch(cs *capacity.Search, readings [][]resources.Reading) {
	kind := knee.Users
	if cs.Unit == "req/s" {
		kind = knee.Rate
	}
	// A probe measured the system when it was judged and its generator
	// kept up; the latest probe at a load stands for it.
	latest := map[float64]int{}
	for i, p := range cs.Probes {
		if p.Verdict == capacity.NotJudged || p.Verdict == capacity.GeneratorLimited || p.ThroughputRPS <= 0 {
			continue
		}
		latest[p.Load] = i
	}
	// The USL describes a steady state. A closed system reaches one at
	// every load (its users wait for their answers); an open one offered
	// more than it serves does not — its queue, and so the concurrency
	// Little's law reads, grows for as long as the probe lasts — so the
	// open model's fit leaves out probes that fell behind their rate.
	steady := func(p capacity.SearchProbe) bool {
		if kind == knee.Users {
			return true
		}
		return p.Held && p.ErrorPct <= search.DefaultMaxErrorPct &&
			p.ThroughputRPS >= p.Load*(1-search.DefaultMaxShortfall/100)
	}
	idx := make([]int, 0, len(latest))
	for _, i := range latest {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return cs.Probes[idx[a]].Load < cs.Probes[idx[b]].Load })
	var pts []knee.Point
	var steps []resources.PhaseReadings
	upTo := -1 // the step of the lowest bad load above the capacity
	for _, i := range idx {
		p := cs.Probes[i]
		if steady(p) {
			pts = append(pts, knee.Point{Load: p.Load, ThroughputRPS: p.ThroughputRPS, MeanMs: p.MeanMs, P95Ms: p.P95Ms, SLAMet: p.Verdict == capacity.Good})
		}
		var rs []resources.Reading
		if i < len(readings) {
			rs = readings[i]
		}
		steps = append(steps, resources.PhaseReadings{Phase: p.Dir, Load: p.Load, Readings: rs})
		if upTo < 0 && cs.UpperBound > 0 && p.Load >= cs.UpperBound {
			upTo = len(steps) - 1
		}
	}
	if len(steps) > 0 {
		// FirstSaturated looks up to the step after its knee: here the
		// capacity, so up to the lowest bad load above it.
		k := -1
		if upTo > 0 {
			k = upTo - 1
		}
		cs.Bottleneck = resources.FirstSaturated(steps, k)
	}
	cs.USL, cs.USLReason = nil, ""
	if len(pts) == 0 {
		cs.USLReason = "no probe measured the system"
		return
	}
	if len(pts) < MinUSLProbes {
		// Three parameters fit four points with one degree of freedom
		// left: any smooth curve "fits" them.
		cs.USLReason = fmt.Sprintf("a USL fit over the probes needs at least %d distinct loads that measured the system, have %d", MinUSLProbes, len(pts))
		return
	}
	res, err := knee.Analyze(pts, knee.Options{Kind: kind})
	switch {
	case err != nil:
		cs.USLReason = err.Error()
	case res.USL == nil:
		cs.USLReason = res.USLReason
	case adjustedR2(res.USL.R2, len(pts), 3) < MinUSLAdjR2:
		cs.USLReason = fmt.Sprintf("the USL does not describe these probes well enough (R² = %.3f over %d loads, adjusted for its 3 parameters %.3f, below %.2f)",
			res.USL.R2, len(pts), adjustedR2(res.USL.R2, len(pts), 3), MinUSLAdjR2)
	case contradicted(*res.USL, pts, kind):
		cs.USLReason = fmt.Sprintf("the fit's peak (%.4g req/s) is above every throughput measured around it (at most %.4g req/s): the probes contradict it", res.USL.PeakThroughputRPS, maxThroughput(pts))
	default:
		u := *res.USL
		cs.USL = &capacity.USL{Sigma: round6(u.Sigma), Kappa: round6(u.Kappa), Lambda: round6(u.Lambda),
			PeakLoad: finitePtr(u.PeakLoad), PeakThroughputRPS: finitePtr(u.PeakThroughputRPS), R2: round6(u.R2)}
	}
}

// contradicted says a fitted peak lies within the probed concurrency yet
// promises more than MaxPeakOverMeasured times the highest throughput any
// probe measured: a curve threaded between sparse points, not the
// system.
func contradicted(u knee.USL, pts []knee.Point, kind knee.LoadKind) bool {
	if math.IsInf(u.PeakLoad, 0) || math.IsNaN(u.PeakLoad) {
		return false
	}
	top := 0.0
	for _, p := range pts {
		n := p.Load
		if kind == knee.Rate {
			n = p.ThroughputRPS * p.MeanMs / 1000
		}
		top = math.Max(top, n)
	}
	return u.PeakLoad <= top && u.PeakThroughputRPS > MaxPeakOverMeasured*maxThroughput(pts)
}

func maxThroughput(pts []knee.Point) float64 {
	m := 0.0
	for _, p := range pts {
		m = math.Max(m, p.ThroughputRPS)
	}
	return m
}

// MaxPeakOverMeasured bounds a USL peak inside the probed range against
// the highest throughput measured (see contradicted).
const MaxPeakOverMeasured = 1.2

// MinUSLProbes is the fewest distinct probe loads a USL fit over a search
// is shown for, and MinUSLAdjR2 the adjusted R² it must reach: a search
// probes few loads, and a three-parameter curve through four of them
// leaves one degree of freedom (R² near 1 whatever the system).
const (
	MinUSLProbes = 5
	MinUSLAdjR2  = 0.8
)

// adjustedR2 is R² adjusted for p fitted parameters over n points.
func adjustedR2(r2 float64, n, p int) float64 {
	if n <= p {
		return math.Inf(-1)
	}
	return 1 - (1-r2)*float64(n-1)/float64(n-p)
}

// ProbeFigures are the figures of one probe's measured phase that the
// search records besides its verdict.
type ProbeFigures struct {
	ThroughputRPS, MeanMs, P95Ms, ErrorPct float64
}

// PhaseFigures reads the all-requests row of the summary's phase named
// phase; false when there is none.
func PhaseFigures(s *Summary, phase string) (ProbeFigures, bool) {
	for _, ph := range s.Phases {
		if ph.Name != phase {
			continue
		}
		for _, l := range ph.Labels {
			if l.Label == core.TotalLabel {
				return ProbeFigures{ThroughputRPS: l.ThroughputRPS, MeanMs: l.MeanMs, P95Ms: l.P95Ms, ErrorPct: l.ErrorPct}, true
			}
		}
	}
	return ProbeFigures{}, false
}
