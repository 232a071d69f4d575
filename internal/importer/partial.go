package importer

import (
	"math"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
)

// Partial is the aggregate of one chunk of a source's samples, built on the
// goroutine that decodes the chunk, so that the per-sample work of an
// Aggregator (per-second histograms, counts, failures, thread counts, the
// source tool's figures, the raw sample copy) runs on every core instead of
// on the one goroutine that merges chunks in file order.
// Aggregator.AddPartial merges it and leaves the aggregator exactly as Add
// would have left it, sample by sample in the same order, whenever no sample
// of the chunk arrives later than the aggregator's window (aggLag) — the
// usual case for files written as samples complete. Otherwise AddPartial
// declines and the caller feeds the chunk's samples to Add, so the records
// written never depend on how the file was cut. Not safe for concurrent
// use; its Aggregator's configuration is read, never written.
type Partial struct {
	a        *Aggregator
	from, to int64 // the run's window (Options.From, To), Unix ns
	open     map[aggKey]*secAgg
	cache    [partialCache]partialSlot

	users  map[int64]int32
	uSec   int64 // the second whose thread count is in uN, not yet in users
	uN     int32
	uSet   bool
	n      int64 // samples aggregated (inside From/To)
	minSec int64
	maxSec int64
	late   bool // a sample more than aggLag seconds behind the chunk's newest

	count, errors, outside int64
	implausible            implausible
	first, last            int64
	raw                    []byte

	fig      []*figPart // by label id × 2 + tx
	figTotal figPart
	mask     *masker
}

// partialCache is the number of direct-mapped slots in front of the open
// map: a second's labels and its neighbours' hit without hashing.
const partialCache = 64

type partialSlot struct {
	k  aggKey
	ag *secAgg
}

// figPart is one label's response times of a chunk, in file order.
type figPart struct {
	vals             []float64
	count            int64
	minStart, maxEnd int64
}

// errCount is one kind of failure of a chunk's second and label, in the
// order its first sample came, with the samples' raw message (AddError
// normalises it when the partial is merged).
type errCount struct {
	k metrics.ErrKey
	n int64
}

// NewPartial returns an empty partial for a's samples.
func (a *Aggregator) NewPartial() *Partial {
	p := &Partial{a: a, open: map[aggKey]*secAgg{}, users: map[int64]int32{}, from: math.MinInt64, to: math.MaxInt64, mask: newMasker(a.run.rule)}
	if o := &a.run.opt; !o.From.IsZero() {
		p.from = o.From.UnixNano()
	}
	if o := &a.run.opt; !o.To.IsZero() {
		p.to = o.To.UnixNano()
	}
	p.clear()
	return p
}

func (p *Partial) clear() {
	p.cache = [partialCache]partialSlot{}
	clear(p.open)
	clear(p.users)
	p.uSet = false
	p.n, p.late = 0, false
	p.minSec, p.maxSec = math.MaxInt64, math.MinInt64
	p.count, p.errors, p.outside = 0, 0, 0
	p.implausible = newImplausible()
	p.first, p.last = math.MaxInt64, math.MinInt64
	p.raw = p.raw[:0]
	for _, f := range p.fig {
		if f == nil {
			continue
		}
		f.vals = f.vals[:0]
		f.count, f.minStart, f.maxEnd = 0, math.MaxInt64, math.MinInt64
	}
	p.figTotal = figPart{vals: p.figTotal.vals[:0], minStart: math.MaxInt64, maxEnd: math.MinInt64}
}

// Seal does what of the merge can be done before it, on the goroutine
// that built p: it sorts each second's response times into histogram runs.
func (p *Partial) Seal() {
	for _, ag := range p.open {
		ag.hist.fold()
	}
}

// Discard empties p without merging it (after AddPartial declined it).
func (p *Partial) Discard() {
	for _, ag := range p.open {
		ag.reset()
		p.a.run.histPool.Put(ag)
	}
	p.clear()
}

// Add aggregates one sample, as Aggregator.Add does.
func (p *Partial) Add(s *Rec) {
	a := p.a
	if s.End < p.from || s.End > p.to { // Options.From and To
		if !s.Derived {
			p.outside++
		}
		return
	}
	if s.Derived {
		c := newImplausible()
		if !c.sample(a.run.plausible, s.End, s.Elapsed) {
			return
		}
	} else if !p.implausible.sample(a.run.plausible, s.End, s.Elapsed) {
		return
	}
	sec := floorDiv(s.End, 1e9)
	if p.n > 0 && sec < p.maxSec-aggLag {
		p.late = true
	}
	p.n++
	p.minSec, p.maxSec = min(p.minSec, sec), max(p.maxSec, sec)
	ph := int32(-1)
	if len(a.phases) > 0 {
		ph = int32(phaseOf(a.phases, s.End))
		if ph < 0 && a.resolution > 0 {
			ph = int32(core.PhaseOfCoarse(a.phases, "", time.Unix(0, s.End), a.resolution))
		}
	}
	k := aggKey{sec: sec, label: s.Label, phase: ph, tx: s.Tx, derived: s.Derived}
	c := &p.cache[(uint64(sec)*31+uint64(s.Label))%partialCache]
	ag := c.ag
	if ag == nil || c.k != k {
		ag = p.open[k]
		if ag == nil {
			ag = a.run.histPool.Get().(*secAgg)
			ag.min = math.MaxInt64
			p.open[k] = ag
		}
		c.k, c.ag = k, ag
	}
	us := ag.addTimes(s)
	if s.Message != "" {
		s.Message = p.mask.message(s.Message)
	}
	if s.Class != core.ErrNone {
		ag.addErr(metrics.ErrKey{Class: s.Class, Status: int(s.Status), Message: s.Message})
		p.errors++
	}
	p.count++
	start := s.End - us*1e3
	p.first = min(p.first, start)
	p.last = max(p.last, s.End)
	if s.Threads >= 0 && !s.Tx {
		if !p.uSet || sec != p.uSec {
			p.flushUsers()
			p.uSec, p.uSet = sec, true
			if n, ok := p.users[sec]; ok {
				p.uN = max(n, s.Threads)
			} else {
				p.uN = s.Threads
			}
		} else {
			p.uN = max(p.uN, s.Threads)
		}
	}
	if a.run.opt.KeepSamples && !s.Derived {
		p.raw = a.appendRawTo(p.raw, s, us)
	}
	if a.fig != nil && !s.Derived {
		p.addFig(s, us)
	}
}

func (p *Partial) flushUsers() {
	if p.uSet {
		p.users[p.uSec] = p.uN
	}
}

func (p *Partial) addFig(s *Rec, us int64) {
	start, end := s.End-us*1e3, s.End
	v := float64(us) / 1000
	i := int(s.Label) * 2
	if s.Tx {
		i++
	}
	if i >= len(p.fig) {
		p.fig = append(p.fig, make([]*figPart, i+1-len(p.fig))...)
	}
	f := p.fig[i]
	if f == nil {
		f = &figPart{minStart: math.MaxInt64, maxEnd: math.MinInt64}
		p.fig[i] = f
	}
	f.add(v, start, end)
	if !s.Tx {
		p.figTotal.add(v, start, end)
	}
}

func (f *figPart) add(v float64, start, end int64) {
	f.count++
	f.minStart, f.maxEnd = min(f.minStart, start), max(f.maxEnd, end)
	f.vals = append(f.vals, v)
}

// addAll appends a chunk's values as add would one by one: into the ring
// of the last window values, by copying runs of them.
func (f *figLabel) addAll(p *figPart, window int) {
	vals := p.vals
	if len(vals) == 0 {
		return
	}
	f.count += int64(len(vals))
	f.minStart, f.maxEnd = min(f.minStart, p.minStart), max(f.maxEnd, p.maxEnd)
	for len(vals) > 0 {
		if window <= 0 || len(f.vals) < window {
			n := len(vals)
			if window > 0 {
				n = min(n, window-len(f.vals))
			}
			f.grow(n, window)
			f.vals = append(f.vals, vals[:n]...)
			vals = vals[n:]
			continue
		}
		n := copy(f.vals[f.next:], vals)
		f.next = (f.next + n) % window
		vals = vals[n:]
	}
}

// addErr counts one failure of kind k in a partial's second.
func (g *secAgg) addErr(k metrics.ErrKey) {
	if g.errIdx == nil {
		for i := range g.errl {
			if g.errl[i].k == k {
				g.errl[i].n++
				return
			}
		}
		if len(g.errl) == 16 { // many kinds: index them
			g.errIdx = make(map[metrics.ErrKey]int, 32)
			for i, e := range g.errl {
				g.errIdx[e.k] = i
			}
		}
	}
	if g.errIdx != nil {
		if i, ok := g.errIdx[k]; ok {
			g.errl[i].n++
			return
		}
		g.errIdx[k] = len(g.errl)
	}
	g.errl = append(g.errl, errCount{k, 1})
}

// AddPartial merges p, which must hold the samples that follow those added
// so far, and empties it for reuse. It reports false, changing nothing but
// emptying p, when a sample of p came too late for the merge to equal adding
// p's samples one by one; the caller then adds them with Add.
func (a *Aggregator) AddPartial(p *Partial) (bool, error) {
	if p.n > 0 && (p.late || p.minSec < a.water-aggLag) {
		p.Discard()
		return false, nil
	}
	defer p.clear()
	a.outside += p.outside
	a.implausible.merge(&p.implausible)
	if p.n == 0 {
		return true, nil
	}
	live := a.run.opt.Live
	for k, ag := range p.open {
		if live != nil {
			live.addSecond(a.workload, a.labels.Name(k.label), k, ag)
		}
		g := a.open[k]
		if g == nil {
			a.open[k] = ag
			a.oldest = min(a.oldest, k.sec)
			g = ag
		} else {
			g.count += ag.count
			g.sum += ag.sum
			g.min = min(g.min, ag.min)
			g.max = max(g.max, ag.max)
			g.hist.merge(&ag.hist)
			g.sent += ag.sent
			g.recv += ag.recv
		}
		// The chunk's failures, in the order they came, as AddError would
		// have counted them one by one (the kinds beyond the bound fold
		// the same way).
		for _, e := range ag.errl {
			if g.errs == nil {
				g.errs = &metrics.Agg{}
			}
			g.errs.AddError(e.k, e.n)
		}
		clear(ag.errl)
		ag.errl, ag.errIdx = ag.errl[:0], nil
		if g != ag { // only now: the pool hands it to decoding goroutines
			ag.reset()
			a.run.histPool.Put(ag)
		}
	}
	p.flushUsers()
	newest := int64(math.MinInt64)
	for sec, n := range p.users {
		if cur, ok := a.users[sec]; !ok || n > cur {
			a.users[sec] = n
		}
		newest = max(newest, sec)
	}
	if live != nil && newest != math.MinInt64 {
		live.setUsers(a.workload, p.users[newest])
	}
	a.count += p.count
	a.errors += p.errors
	a.first = min(a.first, p.first)
	a.last = max(a.last, p.last)
	a.raw = append(a.raw, p.raw...)
	if a.fig != nil {
		for i, f := range p.fig {
			if f == nil || f.count == 0 {
				continue
			}
			k := figKey{int32(i / 2), i%2 == 1}
			l := a.fig.labels[k]
			if l == nil {
				l = &figLabel{workload: a.workload, name: a.labels.Name(k.label), tx: k.tx, minStart: math.MaxInt64, maxEnd: math.MinInt64}
				a.fig.labels[k] = l
			}
			l.addAll(f, a.fig.spec.Window)
		}
		a.fig.total.addAll(&p.figTotal, a.fig.spec.Window)
	}
	if p.maxSec > a.water {
		a.water = p.maxSec
		if a.water-a.oldest > aggLag {
			return true, a.flush(a.water - aggLag)
		}
	}
	return true, nil
}
