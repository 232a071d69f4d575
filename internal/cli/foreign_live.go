package cli

import (
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/metrics"
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
}

func startForeignLive(live *importer.Live, outs *liveOutputs, prog *progressPrinter, start time.Time) *foreignLive {
	fl := &foreignLive{live: live, outs: outs, prog: prog, start: start, stop: make(chan struct{}),
		run: map[string]*metrics.Agg{}, tot: metrics.NewAgg()}
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
