// Package engine runs a test plan: it compiles workloads, drives virtual
// users under each workload's load model, records every sample into the
// sharded recorder, and appends one interval per second to the run directory.
//
// The engine never reads flags, files or the environment: it takes a Config.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/h2"
	"github.com/plateau-perf/plateau/internal/engine/wake"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/plan/expr"
	"github.com/plateau-perf/plateau/internal/rundir"
)

var (
	errDataExhausted = errors.New("data exhausted")
	errSetupFailed   = errors.New("setup failed")
)

// Config is what a run needs.
type Config struct {
	Plan   *plan.Plan
	Writer ResultWriter // interval and sample output (a *rundir.Writer); required
	// StorageFailed, when set, is called once, from the collector, at the
	// first failure to write the results (a full disk): the run stops
	// there (Result.StorageErr), and the CLI says so on the console at
	// once.
	StorageFailed func(error)
	// Info is run.json; the engine adds phases as they start and end and
	// saves it through SaveInfo (atomic write) each time.
	Info     *rundir.Info
	SaveInfo func(*rundir.Info) error
	// Segment i of Segments (0-based) when several generators share the
	// plan; 0 of 1 otherwise.
	Segment, Segments int
	// StartAt, when set, is the wall-clock instant the load starts
	// (distributed generators start together).
	StartAt time.Time
	// Progress, when set, is called once per second from the collector.
	Progress func(*Progress)
	// Trace, when set, receives a readable trace of every request and
	// response (plateau run --trace); secrets are masked.
	Trace io.Writer
	// Judge, when set, is called once per second from the collector with
	// the second's aggregates (valid only during the call) and the time
	// since the start; a non-empty answer stops the run with that reason
	// (the CLI's abort_on_fail requirements).
	Judge func(iv *metrics.Interval, elapsed time.Duration) string
	// Interval, when set, is called once per second from the collector
	// with the second just finished (its start), its aggregates and the
	// active users and dropped iterations per workload. It runs on the
	// collector, never on the request path; iv is reused after it returns,
	// so it copies what it keeps and must not block (internal/output).
	Interval func(sec time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64)
	Seed     uint64
}

// ResultWriter appends each second's results to the run directory
// (*rundir.Writer); tests inject failures through it.
type ResultWriter interface {
	WriteInterval(t time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64) error
}

// Progress is the live view of a run, for the terminal panel.
type Progress struct {
	Elapsed   time.Duration
	Remaining time.Duration // estimate; 0 when unknown
	Phase     string
	Users     int
	Second    LabelProgress   // all requests in the last second
	Run       LabelProgress   // all requests since start
	Labels    []LabelProgress // per label since start
	Dropped   int64
}

// LabelProgress is one label's live numbers.
type LabelProgress struct {
	Label             string
	Count, Errors     int64
	RPS, P50Ms, P95Ms float64
	ErrorPct, MeanMs  float64
}

// Result is what Run returns.
type Result struct {
	Start, End time.Time
	Stopped    string // "" when the load ran to its end
	Samples    int64
	Dropped    map[string]int64
	// Skipped counts, per workload, the iterations on_fail ended early
	// (next_iteration, stop_user, stop_run).
	Skipped map[string]int64
	// SetupFailures counts users whose setup failed (they sent no measured
	// request); SetupError is the first such failure.
	SetupFailures int64
	SetupError    string
	// StorageErr is the first failure to write the results: the run
	// stopped at it, and nothing was written from then on. Labels and
	// Total are the run's results as held in memory (every second,
	// written or not) for the console; the summary is not computed.
	StorageErr error
	Labels     map[string]*metrics.Agg // requests by label (no transactions)
	Total      *metrics.Agg
	// StartPeak is the most users that were in their start at one time
	// (made, not yet at their first wait): the start window bounds it, and
	// StartWindows counts the extra windows opened because every start
	// waited for a slow server while the CPU was free.
	StartPeak, StartWindows int64
}

// Engine is one run of a plan.
type Engine struct {
	cfg       Config
	plan      *plan.Plan
	clientCfg httpc.Config
	// h2Cfg configures HTTP/2 requests; h2Pool, with connections: shared,
	// is the run's one HTTP/2 pool (per_user: each user has its own).
	h2Cfg       h2.Config
	h2Pool      *h2.Pool
	grpc        *grpcConns // gRPC connections (shared ones, and the configuration)
	rec         *metrics.Recorder
	seed        uint64
	activeUsers atomic.Int64
	samples     atomic.Int64
	workloads   []*workload
	setupFails  atomic.Int64
	// inStart counts the users in their start now; startPeak is its
	// highest value, startWindows the windows opened for slow servers.
	inStart, startPeak, startWindows atomic.Int64
	setupMsg                         atomic.Pointer[string] // first setup failure
	// paced wakes paced users at their iterations' intended starts; made
	// by the first one (pacedQueue), closed when the run ends.
	paced     *wake.Queue
	pacedOnce sync.Once

	// storageErr is the first failed write of the results (collector);
	// memLabels and memTotal the run's results in memory. The collector
	// alone writes them; Run reads them after it ended.
	storageErr error
	memLabels  map[string]*metrics.Agg
	memTotal   *metrics.Agg

	mu       sync.Mutex // guards info, phaseCPU and phaseSched
	info     *rundir.Info
	phaseCPU map[int]time.Duration // process CPU time when phase i started
	// phaseSched is the threads' run and run-queue time when phase i
	// started (schedStat).
	phaseSched map[int][2]time.Duration
	start      time.Time
	expected   time.Duration
	// anchor is the instant the plan's schedule counts from: StartAt when
	// set — also for a generator that starts late, so that its schedule
	// stays aligned with the others' and past-due iterations are skipped
	// — otherwise the start.
	anchor time.Time
	// lateFrom is when a generator that started late (after StartAt, by
	// more than a sleep's overshoot) could first act: open-model
	// iterations due before it are skipped, none sent in a burst. Zero
	// when on time.
	lateFrom time.Time
	// counters are the plan's counter() values, shared by all users.
	counters *expr.Counters
	// cancelRun ends the run early (on_fail: stop_run, recorded in
	// stoppedBy).
	cancelRun context.CancelFunc
	stoppedBy atomic.Pointer[string]
	// runVars are the variables the run-level setup extracted.
	runVars map[string]string
	// trace, when set, writes every request of a tracing run.
	trace *tracer
	// trs are the transports of the run's TLS settings (http.tls and the
	// requests' and websockets' own).
	trs *transports
}

type workload struct {
	e      *Engine
	spec   *plan.Workload
	prog   *program
	index  int
	phase  atomic.Int32 // current phase index in run.json
	active atomic.Int64 // users currently alive
	// phaseReqs counts the measured requests tagged with phase i in
	// phaseReqs[i%len]: the same tag the recorder files their samples
	// under, so the stop rule's count is the phase table's. startPhase
	// zeroes a slot before any request can carry its phase; a request tagged
	// four phases back does not outlive three phases.
	phaseReqs [4]atomic.Int64
	dropped   atomic.Int64
	skipped   atomic.Int64 // iterations ended early by on_fail
	nextUser  atomic.Int64
	// cut is set when graceful_stop ran out and iterations still running
	// were cut off.
	cut atomic.Bool
}

// Run executes the plan until its load ends or ctx is cancelled (then it
// stops gracefully and still writes everything).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Segments < 1 {
		cfg.Segments = 1
	}
	e := &Engine{cfg: cfg, plan: cfg.Plan, info: cfg.Info, seed: cfg.Seed, counters: &expr.Counters{}}
	ctx, e.cancelRun = context.WithCancel(ctx)
	e.trace = newTracer(cfg.Trace)
	defer e.cancelRun()
	defer e.closePaced()
	if e.seed == 0 {
		e.seed = uint64(time.Now().UnixNano())
	}
	e.clientCfg = newClientConfig(cfg.Plan.HTTP)
	tc, err := cfg.Plan.HTTP.TLS.TLSConfig()
	if err != nil {
		return nil, err
	}
	e.clientCfg.TLSConfig = tc
	// Users hold connection buffers only while a request is in flight, so a
	// thinking user costs little memory (see the per-user memory test).
	e.clientCfg.Buffers = httpc.NewBuffers()
	if cfg.Plan.HTTP.Connections == "shared" {
		// One pool for all users: connections to a host are shared, bounded
		// by the largest number of users any workload can have.
		e.clientCfg.Pool = httpc.NewPool(0)
	}
	e.h2Cfg = newH2Config(cfg.Plan.HTTP, e.clientCfg)
	if cfg.Plan.HTTP.Connections == "shared" {
		e.h2Pool = h2.NewPool(e.h2Cfg)
		defer e.h2Pool.Close()
	}
	e.grpc = newGRPCConns(cfg.Plan.HTTP, e.clientCfg)
	defer e.grpc.close()
	e.rec = metrics.NewRecorder(4*runtime.GOMAXPROCS(0), rundir.AppendJTL)
	e.trs = &transports{settings: &tlsSettings{list: []plan.TLS{cfg.Plan.HTTP.TLS}}}
	defer e.trs.close()
	feeders := map[string]*feeder{}
	for name, f := range cfg.Plan.Data {
		feeders[name] = newFeeder(f, cfg.Segment, cfg.Segments)
	}
	for i, w := range cfg.Plan.Workloads {
		prog, err := compile(cfg.Plan, w, i, feeders, e.counters, e.trs.settings)
		if err != nil {
			return nil, err
		}
		wl := &workload{e: e, spec: w, prog: prog, index: i}
		wl.phase.Store(-1)
		e.workloads = append(e.workloads, wl)
		e.expected = max(e.expected, w.Load.StartAfter+expectedDuration(&w.Load))
	}
	runUser, err := e.runSetup(ctx, feeders)
	if err != nil {
		return nil, err
	}
	if runUser != nil {
		defer runUser.close()
	}
	if !cfg.StartAt.IsZero() {
		if err := sleep(ctx, time.Until(cfg.StartAt)); err != nil {
			return nil, fmt.Errorf("waiting for start: %w", err)
		}
	}
	e.start = time.Now()
	e.anchor = e.start
	if !cfg.StartAt.IsZero() {
		e.anchor = cfg.StartAt
		if e.start.Sub(cfg.StartAt) > 250*time.Millisecond {
			e.lateFrom = e.start
		}
	}
	e.mu.Lock()
	e.info.Start = e.start
	e.mu.Unlock()

	collectorDone := make(chan struct{})
	stopCollector := make(chan struct{})
	go func() {
		defer close(collectorDone)
		e.collect(stopCollector)
	}()

	var wg sync.WaitGroup
	stops := make([]string, len(e.workloads))
	for i, wl := range e.workloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sleep(ctx, time.Until(e.anchor.Add(wl.spec.Load.StartAfter))); err != nil {
				stops[i] = "interrupted"
				return
			}
			// The workload's requests run under wctx, which ends at the
			// planned end of its load plus graceful_stop: iterations still
			// running then are cut off (their requests recorded as
			// aborted), so the run never runs on past its plan.
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if d := expectedDuration(&wl.spec.Load); d > 0 {
				end := e.anchor.Add(wl.spec.Load.StartAfter + d + wl.spec.Load.GracefulStop)
				t := time.AfterFunc(time.Until(end), func() {
					wl.cut.Store(true)
					cancel()
				})
				defer t.Stop()
			}
			stops[i] = wl.run(wctx)
		}()
	}
	wg.Wait()
	if runUser != nil && len(runUser.prog.teardown) > 0 && e.stoppedBy.Load() == nil {
		if err := runUser.runTeardown(context.WithoutCancel(ctx)); err != nil {
			e.setupFailed(fmt.Errorf("run teardown: %w", err))
		}
	}
	close(stopCollector)
	<-collectorDone
	res := &Result{Start: e.start, End: time.Now(), Samples: e.samples.Load(), Dropped: map[string]int64{},
		StartPeak: e.startPeak.Load(), StartWindows: e.startWindows.Load()}
	for i, wl := range e.workloads {
		if stops[i] != "" && res.Stopped == "" {
			res.Stopped = stops[i]
		}
		if n := wl.dropped.Load(); n > 0 {
			res.Dropped[wl.spec.Name] = n
		}
		if n := wl.skipped.Load(); n > 0 {
			if res.Skipped == nil {
				res.Skipped = map[string]int64{}
			}
			res.Skipped[wl.spec.Name] = n
		}
	}
	checks := map[string]rundir.CheckCount{}
	for _, wl := range e.workloads {
		for _, c := range wl.prog.checks {
			n := checks[c.name]
			n.Passed += c.passed.Load()
			n.Failed += c.failed.Load()
			checks[c.name] = n
		}
	}
	for name, n := range checks {
		if n.Passed+n.Failed == 0 {
			delete(checks, name)
		}
	}
	if len(res.Skipped) > 0 || len(checks) > 0 {
		e.mu.Lock()
		e.info.Skipped = res.Skipped
		if len(checks) > 0 {
			e.info.Checks = checks
			// Final per-phase counts: with the requests that were in
			// flight when their phase ended.
			for i := range e.info.Phases {
				e.info.Phases[i].Checks = e.phaseCheckCounts(i)
			}
		}
		e.saveLocked()
		e.mu.Unlock()
	}
	for _, name := range slices.Sorted(maps.Keys(feeders)) {
		if err := feeders[name].readErr.Load(); err != nil {
			// A large data file read row by row changed under the run.
			e.mu.Lock()
			e.info.Notes = appendOnce(e.info.Notes, fmt.Sprintf("data %q: %v; such rows were given empty", name, *err))
			e.saveLocked()
			e.mu.Unlock()
		}
	}
	if why := e.stoppedBy.Load(); why != nil {
		res.Stopped = *why
		// The phases saw their context end: say why.
		e.mu.Lock()
		for i := range e.info.Phases {
			if e.info.Phases[i].Stopped == "interrupted" {
				e.info.Phases[i].Stopped = *why
			}
		}
		e.saveLocked()
		e.mu.Unlock()
	} else if ctx.Err() != nil {
		res.Stopped = "interrupted"
	}
	if res.SetupFailures = e.setupFails.Load(); res.SetupFailures > 0 {
		res.SetupError = *e.setupMsg.Load()
	}
	res.StorageErr, res.Labels, res.Total = e.storageErr, e.memLabels, e.memTotal
	return res, nil
}

// expectedDuration estimates a load's length for the progress panel.
func expectedDuration(l *plan.Load) time.Duration {
	switch {
	case len(l.Steps) > 0:
		var d time.Duration
		for _, s := range l.Steps {
			d += s.Duration
		}
		return d
	case len(l.Stages) > 0:
		var d time.Duration
		for _, s := range l.Stages {
			d += s.Duration
		}
		return d + l.RampDown
	}
	return l.Duration + l.RampDown
}

// runSetup runs the plan's run-level setup once, by one unmeasured user,
// and keeps the variables it extracted for every user of every workload.
// The returned user runs the run-level teardown at the end.
func (e *Engine) runSetup(ctx context.Context, feeders map[string]*feeder) (*vu, error) {
	p := e.plan
	if len(p.Setup) == 0 && len(p.Teardown) == 0 {
		return nil, nil
	}
	spec := &plan.Workload{Name: "setup", Setup: p.Setup, Teardown: p.Teardown}
	prog, err := compile(p, spec, -1, feeders, e.counters, e.trs.settings)
	if err != nil {
		return nil, err
	}
	wl := &workload{e: e, spec: spec, prog: prog, index: -1}
	v := newVU(0, wl, e)
	v.stopCtx = ctx
	if err := v.runSetup(ctx); err != nil {
		v.close()
		return nil, fmt.Errorf("run setup: %w", err)
	}
	e.runVars = map[string]string{}
	for name, slot := range prog.slots.index {
		if _, isVar := p.Vars[name]; !isVar && slot > 3 && v.vars[slot] != "" {
			e.runVars[name] = v.vars[slot]
		}
	}
	return v, nil
}

// stopRun ends the run early: a request's on_fail or a feeder's on_end
// said stop_run. why becomes the run's Stopped.
func (e *Engine) stopRun(why string) {
	if e.stoppedBy.CompareAndSwap(nil, &why) {
		e.cancelRun()
	}
}

// setupFailed notes a user whose setup failed.
func (e *Engine) setupFailed(err error) {
	e.setupFails.Add(1)
	msg := err.Error()
	e.setupMsg.CompareAndSwap(nil, &msg)
}

// recordDerived records a sample computed from a request (a gRPC stream's
// time to its first message, or one of its messages): a label of its own,
// never counted as a request nor in the totals.
func (e *Engine) recordDerived(v *vu, label string, s *core.Sample) {
	e.rec.Record(v.shard, metrics.Key{Workload: v.w.spec.Name, Phase: int(v.w.phase.Load()), Label: label, Derived: true}, s)
}

func (e *Engine) record(v *vu, label string, tx bool, s *core.Sample) {
	ph := v.w.phase.Load()
	if !tx && ph >= 0 {
		v.w.phaseReqs[ph%int32(len(v.w.phaseReqs))].Add(1)
	}
	k := metrics.Key{Workload: v.w.spec.Name, Phase: int(ph), Label: label, Tx: tx}
	e.rec.Record(v.shard, k, s)
	if !tx {
		e.samples.Add(1)
	}
}

// startPhase appends a phase to run.json and makes it current for wl.
func (e *Engine) startPhase(wl *workload, name string, users int, rate float64, ramp time.Duration) int {
	e.mu.Lock()
	idx := len(e.info.Phases)
	e.info.Phases = append(e.info.Phases, rundir.PhaseInfo{Name: name, Workload: wl.spec.Name, Start: time.Now(),
		Users: users, Rate: rate, RampUpS: ramp.Seconds()})
	if e.phaseCPU == nil {
		e.phaseCPU = map[int]time.Duration{}
	}
	e.phaseCPU[idx] = processCPU()
	if run, wait, ok := schedStat(); ok {
		if e.phaseSched == nil {
			e.phaseSched = map[int][2]time.Duration{}
		}
		e.phaseSched[idx] = [2]time.Duration{run, wait}
	}
	e.saveLocked()
	e.mu.Unlock()
	wl.phaseReqs[idx%len(wl.phaseReqs)].Store(0)
	wl.phase.Store(int32(idx))
	return idx
}

// phaseCheckCounts is phase idx's check outcomes by check name (nil when
// none): those of the requests its samples count (checkStat.count).
func (e *Engine) phaseCheckCounts(idx int) map[string]rundir.CheckCount {
	var out map[string]rundir.CheckCount
	for _, wl := range e.workloads {
		for _, c := range wl.prog.checks {
			pc := c.phase(idx, false)
			if pc == nil {
				continue
			}
			d := rundir.CheckCount{Passed: pc.passed.Load(), Failed: pc.failed.Load()}
			if d.Passed+d.Failed == 0 {
				continue
			}
			if out == nil {
				out = map[string]rundir.CheckCount{}
			}
			n := out[c.name]
			n.Passed += d.Passed
			n.Failed += d.Failed
			out[c.name] = n
		}
	}
	return out
}

// minCPUSpan is the shortest phase whose generator CPU share is recorded.
const minCPUSpan = time.Second

func (e *Engine) endPhase(idx int, stopped string) {
	e.mu.Lock()
	now := time.Now()
	p := &e.info.Phases[idx]
	p.End = &now
	p.Stopped = stopped
	if c0, ok := e.phaseCPU[idx]; ok {
		// Over a second at least: the process's CPU time advances in
		// clock ticks, and one tick over a phase of 20 ms (a --trace run,
		// a few iterations) read as 115% on 2 cores, an invalid run.
		if wall := now.Sub(p.Start); wall >= minCPUSpan && c0 >= 0 {
			pct := 100 * float64(processCPU()-c0) / (float64(wall) * float64(runtime.NumCPU()))
			p.CPUPct = math.Round(pct*10) / 10
		}
	}
	if s0, ok := e.phaseSched[idx]; ok {
		if run, wait, ok := schedStat(); ok && now.Sub(p.Start) >= minCPUSpan {
			// Threads that ended took their times with them: a
			// negative difference is no wait.
			run, wait = max(run-s0[0], 0), max(wait-s0[1], 0)
			p.RunQueueMs = math.Round(float64(wait.Microseconds())/100) / 10
			if run+wait > 0 {
				p.RunQueuePct = math.Round(1000*float64(wait)/float64(run+wait)) / 10
			}
		}
	}
	// So far: a request in flight now may still count here (its sample
	// is tagged with this phase); the run's end writes the final counts.
	p.Checks = e.phaseCheckCounts(idx)
	e.saveLocked()
	e.mu.Unlock()
	// Samples completing from now on, until the workload's next phase
	// starts, belong to no phase (core.PhaseOf): requests in flight when
	// the last step ends finish during the graceful stop.
	for _, wl := range e.workloads {
		wl.phase.CompareAndSwap(int32(idx), -1)
	}
}

// cutNote is the phase's stop note when graceful_stop ran out.
func (wl *workload) cutNote(stopped string) string {
	if stopped != "" || !wl.cut.Load() {
		return stopped
	}
	return fmt.Sprintf("graceful_stop (%v) ran out: iterations still running were cut off", wl.spec.Load.GracefulStop)
}

func (e *Engine) saveLocked() {
	if e.cfg.SaveInfo != nil {
		_ = e.cfg.SaveInfo(e.info) // best effort: the interval log is the record of truth
	}
}

func (e *Engine) phaseName(wl *workload, step string) string {
	return phaseName(len(e.workloads), wl.spec.Name, step)
}

// collect rotates the recorder on every wall-clock second and appends the
// finished interval to the run directory.
func (e *Engine) collect(stop <-chan struct{}) {
	var iv *metrics.Interval
	run := map[string]*metrics.Agg{}
	total := metrics.NewAgg()
	e.memLabels, e.memTotal = run, total
	var droppedTotal int64
	lastDropped := make([]int64, len(e.workloads))
	flush := func(sec time.Time) {
		iv = e.rec.Rotate(iv)
		if e.cfg.Judge != nil && e.stoppedBy.Load() == nil {
			if why := e.cfg.Judge(iv, time.Since(e.start)); why != "" && e.stoppedBy.CompareAndSwap(nil, &why) {
				e.cancelRun()
			}
		}
		users := map[string]int{}
		dropped := map[string]int64{}
		for i, wl := range e.workloads {
			users[wl.spec.Name] = int(wl.active.Load())
			cur := wl.dropped.Load() // cumulative; the record holds this second's
			d := cur - lastDropped[i]
			lastDropped[i] = cur
			if d > 0 {
				dropped[wl.spec.Name] = d
				droppedTotal += d
			}
		}
		Accumulate(iv, run, total)
		if e.storageErr == nil {
			if err := e.cfg.Writer.WriteInterval(sec, iv, users, dropped); err != nil {
				// A full disk: results from now on would be lost, so
				// the load stops now rather than after the whole plan
				// (issue 31); nothing more is written.
				e.storageErr = err
				why := "writing results failed: " + err.Error()
				if e.stoppedBy.CompareAndSwap(nil, &why) {
					e.cancelRun()
				}
				if e.cfg.StorageFailed != nil {
					e.cfg.StorageFailed(err)
				}
			}
		}
		if e.cfg.Interval != nil {
			e.cfg.Interval(sec, iv, users, dropped)
		}
		if e.cfg.Progress != nil {
			e.progress(sec, iv, run, total, users, droppedTotal)
		}
	}
	for {
		now := time.Now()
		next := now.Truncate(time.Second).Add(time.Second)
		t := time.NewTimer(next.Sub(now))
		select {
		case <-t.C:
			flush(next.Add(-time.Second))
		case <-stop:
			t.Stop()
			flush(time.Now().Truncate(time.Second))
			return
		}
	}
}

// Accumulate adds a second's requests to the run's results in memory, by
// label and in total (transactions and derived labels left out); with
// ProgressOf it makes the terminal panel of any source of seconds (a
// foreign tool's results as they are read).
func Accumulate(iv *metrics.Interval, run map[string]*metrics.Agg, total *metrics.Agg) {
	for k, a := range iv.Aggs {
		if k.Tx || k.Derived {
			continue
		}
		total.Merge(a)
		r := run[k.Label]
		if r == nil {
			r = metrics.NewAgg()
			run[k.Label] = r
		}
		r.Merge(a)
	}
}

func (e *Engine) progress(sec time.Time, iv *metrics.Interval, run map[string]*metrics.Agg, total *metrics.Agg, users map[string]int, dropped int64) {
	el := time.Since(e.start)
	p := ProgressOf(el, iv, run, total)
	p.Dropped = dropped
	if e.expected > el {
		p.Remaining = e.expected - el
	}
	for _, n := range users {
		p.Users += n
	}
	e.mu.Lock()
	for i := len(e.info.Phases) - 1; i >= 0; i-- {
		if e.info.Phases[i].End == nil {
			p.Phase = e.info.Phases[i].Name
			break
		}
	}
	e.mu.Unlock()
	e.cfg.Progress(p)
}

// ProgressOf is the panel's figures after el: the last second's (iv)
// requests, and the run's so far by label (run) and in total, as
// Accumulate keeps them.
func ProgressOf(el time.Duration, iv *metrics.Interval, run map[string]*metrics.Agg, total *metrics.Agg) *Progress {
	second := metrics.NewAgg()
	for k, a := range iv.Aggs {
		if k.Tx || k.Derived {
			continue
		}
		second.Merge(a)
	}
	p := &Progress{Elapsed: el}
	p.Second = labelProgress("last second", second, time.Second)
	p.Run = labelProgress("all", total, el)
	names := make([]string, 0, len(run))
	for n := range run {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p.Labels = append(p.Labels, labelProgress(n, run[n], el))
	}
	return p
}

func labelProgress(name string, a *metrics.Agg, span time.Duration) LabelProgress {
	lp := LabelProgress{Label: name, Count: a.Count, Errors: a.Errors, P50Ms: a.QuantileMs(50), P95Ms: a.QuantileMs(95),
		MeanMs: a.MeanMs()}
	if span > 0 {
		lp.RPS = float64(a.Count) / span.Seconds()
	}
	if a.Count > 0 {
		lp.ErrorPct = 100 * float64(a.Errors) / float64(a.Count)
	}
	return lp
}

var zeroTime time.Time

func newRecorderForBench() *metrics.Recorder {
	return metrics.NewRecorder(4*runtime.GOMAXPROCS(0), rundir.AppendJTL)
}

// pacedQueue is the run's queue for paced users' waits.
func (e *Engine) pacedQueue() *wake.Queue {
	e.pacedOnce.Do(func() { e.paced = wake.NewQueue() })
	return e.paced
}

// closePaced stops the paced users' queue, if one was made.
func (e *Engine) closePaced() {
	e.pacedOnce.Do(func() {}) // none made from now on
	if e.paced != nil {
		e.paced.Close()
	}
}

func appendOnce(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}
