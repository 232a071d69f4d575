package importer

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// DeclaredPhase is a hold a foreign tool's script declares (a k6 stage
// that keeps its target, a Gatling injection step at a constant rate, a
// JMeter thread group's hold), as offsets from the tool's start.
type DeclaredPhase struct {
	Name     string
	From, To time.Duration // from the tool's start
	// Users is the declared user count of a closed-model hold; Rate the
	// declared rate per second of an open-model one (one of them is set).
	Users int
	Rate  float64
	// Unit is what Rate counts, as the tool says it: "iterations/s",
	// "users/s", "samples/s".
	Unit string
	// Arrivals says Rate counts arrivals (k6 iterations, Gatling users
	// started: Aggregator.AddArrivals) rather than request samples.
	Arrivals bool
}

// PlaceDeclared puts declared phases on the run's clock: start is the
// tool's own start. Bounds are rounded inwards to whole seconds — the
// run's per-second records are assigned to phases by their second, so a
// phase holds only seconds that lie wholly within the declared hold (its
// ramps stay out). A hold shorter than a whole second is left out.
func PlaceDeclared(ds []DeclaredPhase, start time.Time) []core.Phase {
	out := make([]core.Phase, 0, len(ds))
	for _, d := range ds {
		from := ceilSecond(start.Add(d.From))
		to := start.Add(d.To).Truncate(time.Second)
		if !to.After(from) {
			continue
		}
		out = append(out, core.Phase{Name: d.Name, Start: from.UTC(), End: to.UTC(), Users: d.Users, Rate: d.Rate})
	}
	return out
}

func ceilSecond(t time.Time) time.Time {
	if f := t.Truncate(time.Second); !f.Equal(t) {
		return f.Add(time.Second)
	}
	return t
}

// declared is what SetDeclared was given.
type declared struct {
	tool   string
	phases []DeclaredPhase
	start  time.Time
}

// SetDeclared makes the run's phases those the tool's script declares
// (ds, offsets from start, the tool's own start), instead of phases
// derived from the user count: Close places them on the clock, assigns
// the per-second records to them and checks each against what ran — the
// user count or the rate measured within it — naming in the notes a
// phase whose measured figure is far from its declared target.
func (r *Run) SetDeclared(tool string, ds []DeclaredPhase, start time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decl = &declared{tool: tool, phases: append([]DeclaredPhase(nil), ds...), start: start}
}

// farOff is how far a measured figure may lie from a declared one before
// the phase is named in the notes: 10 %, and at least one user, or two
// arrivals or samples over the phase (one at each end).
const farOff = 0.10

// checkDeclared compares each placed phase with what the run measured in
// it. Called with r.mu held.
func (r *Run) checkDeclared(tool string, ds []DeclaredPhase, placed []core.Phase) []string {
	byName := map[string]DeclaredPhase{}
	for _, d := range ds {
		byName[d.Name] = d
	}
	var notes, each []string
	for _, p := range placed {
		d := byName[p.Name]
		from, to := p.Start.Unix(), p.End.Unix()
		switch {
		case d.Users > 0:
			var seen []int
			for s := from; s < to; s++ {
				if n, ok := r.threads[s]; ok {
					seen = append(seen, int(n))
				}
			}
			if len(seen) == 0 {
				notes = append(notes, fmt.Sprintf("phase %q: declared %d users; %s reported no user count in it", p.Name, d.Users, tool))
				each = append(each, fmt.Sprintf("%q %d users → no count", p.Name, d.Users))
				continue
			}
			sort.Ints(seen)
			med := seen[len(seen)/2]
			each = append(each, fmt.Sprintf("%q %d → %d users", p.Name, d.Users, med))
			if math.Abs(float64(med-d.Users)) > math.Max(1, farOff*float64(d.Users)) {
				why := "fewer than declared"
				if med > d.Users {
					why = "more than declared"
				}
				notes = append(notes, fmt.Sprintf("phase %q: declared %d users, %d ran (the median of %s's per-second count) — %s", p.Name, d.Users, med, tool, why))
			}
		case d.Rate > 0:
			src, what := r.reqSecs, "request samples"
			if d.Arrivals {
				src, what = r.arrivals, strings.TrimSuffix(d.Unit, "/s")
			}
			var n int64
			for s := from; s < to; s++ {
				n += src[s]
			}
			got := float64(n) / float64(to-from)
			each = append(each, fmt.Sprintf("%q %s → %s %s", p.Name, fmtRate(d.Rate), fmtRate(got), d.Unit))
			// Counted in whole seconds, a phase's count can be one off at
			// each end: that is not far.
			if math.Abs(got-d.Rate) > math.Max(farOff*d.Rate, 2/float64(to-from)) {
				why := fmt.Sprintf("%s could not keep up", tool)
				if got > d.Rate {
					why = "above the declared rate"
				}
				notes = append(notes, fmt.Sprintf("phase %q: declared %s %s, %s %s reached (%s counted in it) — %s",
					p.Name, fmtRate(d.Rate), d.Unit, fmtRate(got), d.Unit, what, why))
			}
		}
	}
	if len(each) > 0 {
		// Every phase's declared target beside what ran, off or not.
		notes = append(notes, fmt.Sprintf("declared → reached in each phase (%s's own counts over its whole seconds; users: the median per second): %s",
			tool, strings.Join(each, "; ")))
	}
	return notes
}

func fmtRate(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// AddArrivals counts n arrivals at t (Unix ns): an open-model tool's
// new iterations or users (k6's iterations points, Gatling's USER START
// records), against which a declared arrival rate is checked.
func (a *Aggregator) AddArrivals(t int64, n int64) {
	if w := a.run.plausible; n <= 0 || t < w.from || t > w.to {
		return
	}
	a.run.mu.Lock()
	a.run.arrivals[floorDiv(t, 1e9)] += n
	a.run.mu.Unlock()
}
