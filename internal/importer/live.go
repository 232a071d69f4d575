package importer

import (
	"sync"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// Live collects what a run's aggregators keep, as they keep it, for the
// live outputs of a foreign tool's run (docs/run-foreign.md): the samples
// since the last Rotate, per workload and label, in the form plateau's own
// engine hands its outputs once a second (metrics.Interval), and each
// workload's latest user count. Every sample an aggregator keeps is added
// exactly once, so the counts the live outputs sum up equal the run's.
// Safe for concurrent use.
type Live struct {
	mu    sync.Mutex
	cur   *metrics.Interval
	users map[string]int
	phase int // the phase samples are added to (SetPhase), −1 none
	// last is the aggregate added to last and its key: a tool's samples
	// come in runs of one label, and the map's hashing of the key's
	// strings was most of add's cost beside k6 (docs/performance.md).
	last    metrics.Key
	lastAgg *metrics.Agg
	// The user count last set and its workload: a sample's is most often
	// the one before it, and setting it again hashed the workload.
	usersW  string
	usersN  int
	usersOK bool
}

// NewLive returns an empty collector.
func NewLive() *Live {
	return &Live{cur: &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{}}, users: map[string]int{}, phase: -1}
}

// SetPhase makes the samples added from now on belong to phase i of the
// live outputs' phase list (−1: none, a ramp), as plateau's engine keys
// its own by the phase running.
func (l *Live) SetPhase(i int) {
	l.mu.Lock()
	l.phase = i
	l.mu.Unlock()
}

func (l *Live) agg(workload, label string, tx, derived bool) *metrics.Agg {
	k := metrics.Key{Workload: workload, Phase: l.phase, Label: label, Tx: tx, Derived: derived}
	if l.lastAgg != nil && k == l.last {
		return l.lastAgg
	}
	a := l.cur.Aggs[k]
	if a == nil {
		a = metrics.NewAgg()
		l.cur.Aggs[k] = a
	}
	l.last, l.lastAgg = k, a
	return a
}

// add is one sample (Aggregator.Add); us is its clamped response time.
func (l *Live) add(workload, label string, s *Rec, us int64, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.agg(workload, label, s.Tx, s.Derived)
	a.AddValue(us)
	a.SumServiceUs += us
	a.Sent += s.Sent
	a.Recv += s.Recv
	if s.Class != 0 {
		a.AddError(metrics.ErrKey{Class: s.Class, Status: int(s.Status), Message: msg}, 1)
	}
	if s.Threads >= 0 && !s.Tx {
		l.setUsersLocked(workload, int(s.Threads))
	}
}

// addSecond is one chunk's aggregate of one label and second
// (Aggregator.AddPartial), before it is merged.
func (l *Live) addSecond(workload, label string, k aggKey, g *secAgg) {
	g.hist.fold()
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.agg(workload, label, k.tx, k.derived)
	a.Count += g.count
	a.SumUs += g.sum
	a.SumServiceUs += g.sum
	if g.count > 0 {
		a.MinUs = min(a.MinUs, g.min)
		a.MaxUs = max(a.MaxUs, g.max)
	}
	a.Sent += g.sent
	a.Recv += g.recv
	for _, r := range g.hist.runs {
		_ = a.Hist.RecordValues(bucketValue(r.idx), r.n)
	}
	for _, e := range g.errl {
		a.AddError(e.k, e.n)
	}
}

// setUsers records a workload's user count.
func (l *Live) setUsers(workload string, n int32) {
	l.mu.Lock()
	l.setUsersLocked(workload, int(n))
	l.mu.Unlock()
}

func (l *Live) setUsersLocked(workload string, n int) {
	if l.usersOK && l.usersN == n && l.usersW == workload {
		return
	}
	l.users[workload] = n
	l.usersW, l.usersN, l.usersOK = workload, n, true
}

// Rotate returns the samples added since the last call and the latest user
// count of each workload that reported one; into is reused when not nil
// (its aggregates are reset first).
func (l *Live) Rotate(into *metrics.Interval) (*metrics.Interval, map[string]int) {
	if into == nil {
		into = &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{}}
	}
	for k, a := range into.Aggs {
		if a.Count == 0 && a.Errors == 0 {
			delete(into.Aggs, k)
			continue
		}
		a.Reset()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.cur
	l.cur = into
	l.lastAgg = nil // it is out's
	users := make(map[string]int, len(l.users))
	for w, n := range l.users {
		users[w] = n
	}
	return out, users
}

// bucketValue is the lowest value of HDR counts index idx, the inverse of
// countsIndex.
func bucketValue(idx int32) int64 {
	if idx < 2*subBucketHalfCount {
		return int64(idx)
	}
	bucket := int(idx>>subBucketHalfCountMag) - 1
	sub := int64(idx&(subBucketHalfCount-1)) + subBucketHalfCount
	return sub << uint(bucket)
}

// Knot is a response time at a percentile, for AddCounts.
type Knot struct {
	Pct float64 // 0–100
	Us  int64
}

// AddCounts adds requests known only by their counts and a distribution
// (Locust's history: a second's new requests and failures, its sum of
// response times, and its current percentiles): the count is spread over
// knots, sorted by Pct and ending at 100, each knot taking the requests
// between the one before it and its own percentile.
func (l *Live) AddCounts(workload, label string, count, errors, sumUs int64, knots []Knot) {
	if count <= 0 && errors <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.agg(workload, label, false, false)
	if count > 0 {
		a.Count += count
		a.SumUs += max(sumUs, 0)
		a.SumServiceUs += max(sumUs, 0)
		placed := int64(0)
		for i, k := range knots {
			upTo := int64(float64(count)*k.Pct/100 + 0.5)
			if i == len(knots)-1 {
				upTo = count
			}
			if n := upTo - placed; n > 0 {
				us := max(k.Us, 0)
				_ = a.Hist.RecordValues(min(max(us, metrics.HistLowestUs), metrics.HistHighestUs), n)
				a.MinUs = min(a.MinUs, us)
				a.MaxUs = max(a.MaxUs, us)
				placed = upTo
			}
		}
		if placed < count { // no knots
			_ = a.Hist.RecordValues(metrics.HistLowestUs, count-placed)
			a.MinUs = min(a.MinUs, 0)
			a.MaxUs = max(a.MaxUs, 0)
		}
	}
	if errors > 0 {
		a.Errors += errors
	}
}

// SetUsers records a workload's user count (a source that reports it
// apart from its samples).
func (l *Live) SetUsers(workload string, n int) { l.setUsers(workload, int32(n)) }
