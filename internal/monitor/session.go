package monitor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// openTimeout bounds how long one target may take to start (connect to a
// database, first scrape).
const openTimeout = 10 * time.Second

// finalTimeout bounds the final sample and Finish work at Stop.
const finalTimeout = 10 * time.Second

// Session runs the monitors of one run. Its methods are safe for concurrent
// use.
type Session struct {
	now     func() time.Time
	logf    func(string, ...any)
	dir     string
	events  *eventLog
	evMu    sync.Mutex // serialises event writes
	targets []*target
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	stopOnce sync.Once
	stopErr  error
}

// target is one monitored target and its sampling state. Fields below mu are
// shared with Status; the rest belong to the sampling goroutine.
type target struct {
	cfg      TargetConfig
	interval time.Duration
	coll     Collector
	out      *seriesFile
	batch    Batch
	lost     bool
	last     []Reading // metric and unit of the last good sample, for NaN rows
	werr     error     // first write error; writing stops after it
	// lastSample is when the last sample was taken (real clock).
	lastSample time.Time
	cpu0       float64

	mu     sync.Mutex
	st     TargetStatus
	latest Latest
}

// Latest is a target's most recent good sample, for a live panel.
type Latest struct {
	Name, Kind string
	Time       time.Time
	Lost       bool
	Readings   []Reading
}

// Start opens every target that can be opened and starts sampling each at
// its interval, all aligned on the same start time. Targets that cannot
// start are recorded in Status and events.jsonl; only a failure to create
// Dir/monitor is an error. Cancelling ctx stops sampling like Stop does.
func Start(ctx context.Context, opt Options) (*Session, error) {
	if opt.Dir == "" {
		return nil, errors.New("monitor: no run directory")
	}
	mdir := filepath.Join(opt.Dir, SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return nil, fmt.Errorf("creating monitor directory: %w", err)
	}
	events, err := openEventLog(filepath.Join(mdir, EventsFile))
	if err != nil {
		return nil, err
	}
	s := &Session{now: opt.Now, logf: opt.Logf, dir: mdir, events: events}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	defInterval := opt.Interval
	if defInterval <= 0 {
		defInterval = DefaultInterval
	}

	// Resolve names, stems and intervals; reject invalid targets.
	names := map[string]bool{}
	stems := map[string]bool{}
	var stemsOf []string
	for _, cfg := range opt.Targets {
		cfg.Name = TargetName(cfg)
		t := &target{cfg: cfg, interval: cfg.Interval}
		if t.interval <= 0 {
			t.interval = defInterval
		}
		t.st = TargetStatus{Name: cfg.Name, Kind: cfg.Kind, IntervalS: t.interval.Seconds()}
		s.targets = append(s.targets, t)
		stem := uniqueStem(Stem(cfg.Name), stems)
		stemsOf = append(stemsOf, stem)
		if names[cfg.Name] {
			// Keep it apart in the status and events.jsonl, which are
			// keyed by name; the plan validator rejects this earlier.
			dup := cfg.Name
			for i := 2; names[cfg.Name]; i++ {
				cfg.Name = dup + "#" + strconv.Itoa(i)
			}
			t.cfg.Name, t.st.Name = cfg.Name, cfg.Name
			t.st.Error = fmt.Sprintf("duplicate target name %q", dup)
		} else if err := ValidateTarget(cfg, opt.Kinds); err != nil {
			t.st.Error = err.Error()
		}
		names[cfg.Name] = true
	}

	getenv := opt.Getenv
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	// Open concurrently: a database that takes seconds to refuse must not
	// delay the host monitor.
	var wg sync.WaitGroup
	for i, t := range s.targets {
		if t.st.Error != "" {
			continue
		}
		env := Env{Dir: mdir, Stem: stemsOf[i], Interval: t.interval, Now: s.now, Getenv: getenv}
		wg.Add(1)
		go func() {
			defer wg.Done()
			octx, cancel := context.WithTimeout(ctx, openTimeout)
			defer cancel()
			c, err := opt.Kinds[t.cfg.Kind].Open(octx, t.cfg, env)
			if err != nil {
				t.st.Error = err.Error()
				return
			}
			t.coll = c
		}()
	}
	wg.Wait()

	for i, t := range s.targets {
		if t.coll == nil {
			s.event(event{Time: s.now(), Target: t.cfg.Name, Kind: t.cfg.Kind, Role: DefaultRole(t.cfg), Event: EventFailed, Error: t.st.Error})
			s.logf("monitor %s (%s): not started: %s", t.cfg.Name, t.cfg.Kind, t.st.Error)
			continue
		}
		file := stemsOf[i] + ".csv"
		out, err := createSeriesFile(filepath.Join(mdir, file), t.cfg.Name, t.cfg.Kind)
		if err != nil {
			_ = t.coll.Close()
			t.coll = nil
			t.st.Error = err.Error()
			s.event(event{Time: s.now(), Target: t.cfg.Name, Kind: t.cfg.Kind, Role: DefaultRole(t.cfg), Event: EventFailed, Error: t.st.Error})
			continue
		}
		t.out = out
		t.st.Started = true
		if m, ok := t.coll.(MethodReporter); ok {
			t.st.Method = m.Method()
		}
		s.event(event{Time: s.now(), Target: t.cfg.Name, Kind: t.cfg.Kind, Role: DefaultRole(t.cfg), Event: EventStarted,
			Method: t.st.Method, File: file, IntervalS: t.interval.Seconds()})
	}

	lctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	start := time.Now()
	for _, t := range s.targets {
		if t.coll == nil {
			continue
		}
		s.wg.Add(1)
		go s.loop(lctx, t, start)
	}
	return s, nil
}

// TargetName is the name a target gets in files and reports: its Name, or
// its kind when unnamed.
func TargetName(cfg TargetConfig) string {
	if cfg.Name != "" {
		return cfg.Name
	}
	return cfg.Kind
}

// Stem makes a target name safe as a file name: letters, digits, '.', '_'
// and '-' are kept, anything else becomes '_'.
func Stem(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte("t"), b...)
	}
	return string(b)
}

func uniqueStem(stem string, used map[string]bool) string {
	s := stem
	for i := 2; used[s]; i++ {
		s = stem + "-" + strconv.Itoa(i)
	}
	used[s] = true
	return s
}

// loop samples t at start, start+interval, … until ctx ends, then takes a
// final sample and closes the collector. Deadlines are absolute so samples
// do not drift; a sample that overruns skips the ticks it missed.
func (s *Session) loop(ctx context.Context, t *target, start time.Time) {
	defer s.wg.Done()
	// Own the OS thread so that its CPU clock measures this monitor alone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t.cpu0 = threadCPUSeconds()

	s.sample(ctx, t)
	timer := time.NewTimer(time.Until(start.Add(t.interval)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			s.finish(ctx, t)
			return
		case <-timer.C:
		}
		s.sample(ctx, t)
		k := time.Since(start)/t.interval + 1
		timer.Reset(time.Until(start.Add(k * t.interval)))
	}
}

// sample takes one reading of t and records it, or records a loss.
func (s *Session) sample(ctx context.Context, t *target) {
	timeout := t.interval
	if timeout < time.Second {
		timeout = time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t.lastSample = time.Now()
	t.batch.Reset(s.now(), t.lastSample)
	err := t.coll.Collect(cctx, &t.batch)
	wall := t.batch.Time
	if err != nil && ctx.Err() != nil {
		// The session is stopping: a reading cut short by that is not a
		// lost target.
		s.account(t)
		return
	}
	if err != nil {
		if !t.lost {
			t.lost = true
			// NaN rows break the lines in charts and make the gap visible
			// to anyone reading the CSV without events.jsonl.
			for i := range t.last {
				t.last[i].Value = math.NaN()
			}
			s.write(t, wall, t.last)
			t.mu.Lock()
			t.st.Gaps = append(t.st.Gaps, Gap{Start: wall, Error: err.Error()})
			t.mu.Unlock()
			s.event(event{Time: wall, Target: t.cfg.Name, Kind: t.cfg.Kind, Event: EventLost, Error: err.Error()})
			s.logf("monitor %s (%s): lost: %v", t.cfg.Name, t.cfg.Kind, err)
		}
		s.account(t)
		return
	}
	if t.lost {
		t.lost = false
		t.mu.Lock()
		if n := len(t.st.Gaps); n > 0 {
			end := wall
			t.st.Gaps[n-1].End = &end
		}
		t.mu.Unlock()
		s.event(event{Time: wall, Target: t.cfg.Name, Kind: t.cfg.Kind, Event: EventResumed})
		s.logf("monitor %s (%s): resumed", t.cfg.Name, t.cfg.Kind)
	}
	rs := t.batch.Readings()
	s.write(t, wall, rs)
	t.last = append(t.last[:0], rs...)
	var method string
	if m, ok := t.coll.(MethodReporter); ok {
		method = m.Method()
	}
	t.mu.Lock()
	t.latest = Latest{Name: t.cfg.Name, Kind: t.cfg.Kind, Time: wall, Readings: append(t.latest.Readings[:0], rs...)}
	t.st.Samples++
	changed := method != "" && method != t.st.Method
	if changed {
		t.st.Method = method
	}
	t.mu.Unlock()
	if changed {
		s.event(event{Time: wall, Target: t.cfg.Name, Kind: t.cfg.Kind, Event: EventMethod, Method: method})
		s.logf("monitor %s (%s): now read with %s", t.cfg.Name, t.cfg.Kind, method)
	}
	s.account(t)
}

// account refreshes the target's own CPU cost.
func (s *Session) account(t *target) {
	cpu := threadCPUSeconds() - t.cpu0
	if c, ok := t.coll.(ChildCPUReporter); ok {
		cpu += c.ChildCPUSeconds()
	}
	t.mu.Lock()
	t.st.CPUSeconds = cpu
	t.mu.Unlock()
}

func (s *Session) write(t *target, wall time.Time, rs []Reading) {
	if t.werr != nil {
		return
	}
	if err := t.out.write(wall, rs); err != nil {
		t.werr = err
		s.logf("monitor %s (%s): %v; no more samples are written", t.cfg.Name, t.cfg.Kind, err)
	}
}

// finish takes the final sample, runs Finish and closes everything.
func (s *Session) finish(ctx context.Context, t *target) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
	defer cancel()
	// The final sample records the state at the end of the run; right
	// after a regular one its rates would span a sliver of time and be
	// noise, so it is skipped then.
	if time.Since(t.lastSample) >= t.interval/2 {
		s.sample(fctx, t)
	}
	var errs []error
	if f, ok := t.coll.(Finisher); ok {
		if err := f.Finish(fctx); err != nil {
			errs = append(errs, fmt.Errorf("monitor %s: %w", t.cfg.Name, err))
		}
	}
	s.account(t)
	if err := t.coll.Close(); err != nil {
		errs = append(errs, fmt.Errorf("monitor %s: %w", t.cfg.Name, err))
	}
	if err := t.out.close(); err != nil {
		errs = append(errs, fmt.Errorf("monitor %s: %w", t.cfg.Name, err))
	}
	if t.werr != nil {
		errs = append(errs, fmt.Errorf("monitor %s: %w", t.cfg.Name, t.werr))
	}
	stop := s.now()
	t.mu.Lock()
	if n := len(t.st.Gaps); n > 0 && t.st.Gaps[n-1].End == nil {
		t.st.Gaps[n-1].End = &stop
	}
	samples, cpu := t.st.Samples, t.st.CPUSeconds
	t.mu.Unlock()
	s.event(event{Time: stop, Target: t.cfg.Name, Kind: t.cfg.Kind, Event: EventStopped, Samples: samples, CPUSeconds: cpu})
	if len(errs) > 0 {
		t.werr = errors.Join(errs...)
	}
}

func (s *Session) event(e event) {
	s.evMu.Lock()
	defer s.evMu.Unlock()
	if err := s.events.write(e); err != nil {
		s.logf("monitor: %v", err)
	}
}

// Stop takes a final sample of every started target (unless its last one
// is less than half an interval old), runs end-of-session
// work (top statements), flushes and closes all files. It is idempotent and
// returns the write or close errors met during the session.
func (s *Session) Stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
		var errs []error
		for _, t := range s.targets {
			if t.werr != nil {
				errs = append(errs, t.werr)
			}
		}
		if err := s.events.close(); err != nil {
			errs = append(errs, err)
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// Latest returns the last good sample of every started target that has
// one, in configuration order; Lost marks a target lost since.
func (s *Session) Latest() []Latest {
	var out []Latest
	for _, t := range s.targets {
		t.mu.Lock()
		if len(t.latest.Readings) > 0 {
			l := t.latest
			l.Readings = append([]Reading(nil), l.Readings...)
			l.Lost = len(t.st.Gaps) > 0 && t.st.Gaps[len(t.st.Gaps)-1].End == nil
			out = append(out, l)
		}
		t.mu.Unlock()
	}
	return out
}

// Status returns a snapshot of every target's state, in configuration order.
func (s *Session) Status() []TargetStatus {
	out := make([]TargetStatus, len(s.targets))
	for i, t := range s.targets {
		t.mu.Lock()
		out[i] = t.st
		out[i].Gaps = make([]Gap, len(t.st.Gaps))
		for j, g := range t.st.Gaps {
			out[i].Gaps[j] = g
			if g.End != nil {
				end := *g.End
				out[i].Gaps[j].End = &end
			}
		}
		t.mu.Unlock()
	}
	return out
}
