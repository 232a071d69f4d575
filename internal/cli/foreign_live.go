package cli

import (
	"fmt"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// foreignLive hands a foreign tool's results, as the import reads them
// (importer.Live), to the live outputs and the terminal panel once a
// second, as plateau's engine hands its own (docs/run-foreign.md).
type foreignLive struct {
	live  *importer.Live
	outs  *liveOutputs
	prog  *progressPrinter
	start time.Time

	stop chan struct{}
	wg   sync.WaitGroup
	iv   *metrics.Interval
	run  map[string]*metrics.Agg
	tot  *metrics.Agg

	phases livePhases
	decl   *liveDeclared // the script's declared phases, when read
}

// liveDeclared are a foreign run's phases as its script declares them
// (executor.Declarer): placed on the clock once the tool's start is read
// from its files, then the current one labels the samples read, as
// derived phases do.
type liveDeclared struct {
	phases  []importer.DeclaredPhase
	started func() (time.Time, bool)
	placed  []core.Phase
	current int
}

// livePhases are the phases of a foreign run as far as they are known while
// it runs: by the rule the report derives them with when the run is over
// (importer.DerivePhases) — a stretch of one user count, as the tool
// reports it (JMeter's thread counts, k6's vus, Gatling's users, Locust's
// user count), steady for at least min, named "N threads" — a phase
// begins once its count has held for min, from the second the count was
// first read; a change of count ends it. The samples read meanwhile are
// the phase's in the live outputs; before that (a ramp, or a count not yet
// steady long enough) they belong to no phase, as in the report.
type livePhases struct {
	min     time.Duration
	n       int       // the user count now
	since   time.Time // the second it was first read
	in      bool      // its stretch has become a phase (the list's last)
	list    []rundir.PhaseInfo
	seen    map[int]int
	current string
}

// track takes the user count read by the end of second sec; it reports
// whether the phase list changed and which phase the samples from now on
// belong to (−1: none).
func (lp *livePhases) track(sec time.Time, n int) (changed bool, phase int) {
	if n != lp.n {
		if lp.in {
			end := sec
			lp.list[len(lp.list)-1].End = &end
			lp.in, lp.current, changed = false, "", true
		}
		lp.n, lp.since = n, sec
	}
	if !lp.in && n > 0 && sec.Add(time.Second).Sub(lp.since) >= lp.min {
		if lp.seen == nil {
			lp.seen = map[int]int{}
		}
		lp.seen[n]++
		name := fmt.Sprintf("%d threads", n)
		if lp.seen[n] > 1 {
			name = fmt.Sprintf("%d threads (%d)", n, lp.seen[n])
		}
		lp.list = append(lp.list, rundir.PhaseInfo{Name: name, Start: lp.since, Users: n})
		lp.in, lp.current, changed = true, name, true
	}
	if lp.in {
		return changed, len(lp.list) - 1
	}
	return changed, -1
}

func startForeignLive(live *importer.Live, outs *liveOutputs, prog *progressPrinter, start time.Time, minPhase time.Duration, decl *liveDeclared) *foreignLive {
	fl := &foreignLive{live: live, outs: outs, prog: prog, start: start, stop: make(chan struct{}), decl: decl,
		run: map[string]*metrics.Agg{}, tot: metrics.NewAgg(), phases: livePhases{min: minPhase}}
	outs.hub.SetStart(start)
	fl.wg.Add(1)
	go func() {
		defer fl.wg.Done()
		for {
			now := time.Now()
			next := now.Truncate(time.Second).Add(time.Second)
			t := time.NewTimer(next.Sub(now))
			select {
			case <-t.C:
				fl.second(next.Add(-time.Second))
			case <-fl.stop:
				t.Stop()
				return
			}
		}
	}()
	return fl
}

// second publishes what was read since the last second.
func (fl *foreignLive) second(sec time.Time) {
	var users map[string]int
	fl.iv, users = fl.live.Rotate(fl.iv)
	fl.outs.hub.Publish(sec, fl.iv, users, nil)
	engine.Accumulate(fl.iv, fl.run, fl.tot)
	p := engine.ProgressOf(time.Since(fl.start), fl.iv, fl.run, fl.tot)
	for _, n := range users {
		p.Users += n
	}
	if d := fl.decl; d != nil {
		if d.placed == nil {
			if t0, ok := d.started(); ok {
				d.placed = importer.PlaceDeclared(d.phases, t0)
				list := make([]rundir.PhaseInfo, len(d.placed))
				for i, ph := range d.placed {
					end := ph.End
					list[i] = rundir.PhaseInfo{Name: ph.Name, Start: ph.Start, End: &end, Users: ph.Users, Rate: ph.Rate}
				}
				fl.outs.hub.SetPhases(list)
			}
		}
		// The samples read from now on are the phase of the second just
		// ended, by the script's timeline.
		if ph := core.PhaseOf(d.placed, "", sec); ph != d.current {
			d.current = ph
			fl.live.SetPhase(ph)
		}
		if d.current >= 0 {
			p.Phase = d.placed[d.current].Name
		}
		fl.prog.update(p)
		return
	}
	// The phase the next second's samples belong to, by the users read
	// until now.
	if changed, ph := fl.phases.track(sec, p.Users); changed {
		fl.live.SetPhase(ph)
		fl.outs.hub.SetPhases(fl.phases.list)
	}
	p.Phase = fl.phases.current
	fl.prog.update(p)
}

// finish publishes what was read last (after the tool ended and the
// import read its files to the end) and stops the ticker; the hub's
// Close, after it, marks the end.
func (fl *foreignLive) finish() {
	close(fl.stop)
	fl.wg.Wait()
	fl.second(time.Now().Truncate(time.Second))
}

// newLiveDeclared makes the live phases the script's declared ones,
// placed once started reports the tool's start; nil without phases.
func newLiveDeclared(ps []importer.DeclaredPhase, started func() (time.Time, bool)) *liveDeclared {
	if len(ps) == 0 {
		return nil
	}
	return &liveDeclared{phases: ps, started: started, current: -1}
}
