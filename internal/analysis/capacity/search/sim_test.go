package search

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
)

// system is a simulated server: W workers serving FIFO from one queue with
// service time S, as a discrete-event simulation in simulated seconds (no
// real time passes). Its capacity is W/S requests per second; in the
// closed model, with think time Z, the users it serves without queueing
// number W·(S+Z)/S.
type system struct {
	workers int
	service float64 // mean service time, seconds
	jitter  float64 // service time uniform in S·[1−jitter, 1+jitter]
	// spikeFrac of the requests take spike seconds longer (a network or
	// GC hiccup: latency, not server time).
	spikeFrac, spike float64
	think            float64 // closed model think time, seconds
	// pace (closed model): each user starts an iteration at most once per
	// pace seconds — the next when the pace has elapsed since the last
	// started, or when the last ended if it took longer.
	pace    float64
	timeout float64 // a response slower than this is an error (0: none)
	// genMax is what the load generator can do: the highest arrival rate
	// (open) or the most users (closed); 0 is unlimited.
	genMax float64
	// collapseAt: once the system has been offered this rate (open) or
	// this many users (closed), a quarter of its responses fail from then
	// on, at any load (a system that does not recover). 0: never.
	collapseAt float64
	collapsed  bool
	p95Limit   float64 // the requirement: p95 ≤ this, seconds
	rng        *rand.Rand
}

func (s *system) svc() float64 {
	return s.service * (1 + s.jitter*(2*s.rng.Float64()-1))
}

func (s *system) extra() float64 {
	if s.spikeFrac > 0 && s.rng.Float64() < s.spikeFrac {
		return s.spike
	}
	return 0
}

// run runs one probe as d asks and measures it as plateau would.
func (s *system) run(m Model, d Decision) Probe {
	warm, dur := d.Warmup.Seconds(), d.Duration.Seconds()
	p := Probe{Load: d.Load, Held: true, Duration: d.Duration, Elapsed: d.Warmup + d.Duration + d.Cooldown}
	load := float64(d.Load)
	if s.genMax > 0 && load > s.genMax {
		load, p.Held, p.GeneratorSaturated = s.genMax, false, true
	}
	if s.collapseAt > 0 && load >= s.collapseAt {
		s.collapsed = true
	}
	var lat []float64 // in completion order (near enough: arrival order)
	var done, errs int
	record := func(start, end float64, l float64) {
		if end >= warm && end < warm+dur {
			done++
			if (s.timeout > 0 && l > s.timeout) || (s.collapsed && s.rng.IntN(4) == 0) {
				errs++
			} else {
				lat = append(lat, l)
			}
		}
	}
	free := make([]float64, s.workers) // when each worker is next free
	serve := func(t float64) (end float64) {
		k := 0
		for i, f := range free {
			if f < free[k] {
				k = i
			}
		}
		end = max(t, free[k]) + s.svc()
		free[k] = end
		return end
	}
	switch m {
	case Open: // constant arrival rate, as plateau's open model
		gap := 1 / load
		for t := 0.0; t < warm+dur; t += gap {
			end := serve(t)
			l := end - t + s.extra()
			record(t, t+l, l)
		}
	case Closed:
		users := int(load)
		h := &events{}
		for u := range users {
			heap.Push(h, s.rng.Float64()*max(s.service+s.think, s.pace)*float64(u+1)/float64(users))
		}
		for h.Len() > 0 {
			t := heap.Pop(h).(float64)
			if t >= warm+dur {
				continue
			}
			end := serve(t)
			l := end - t + s.extra()
			record(t, t+l, l)
			heap.Push(h, max(t+l+s.think, t+s.pace))
		}
	}
	p.Throughput = float64(done) / dur
	if done > 0 {
		p.ErrorPct = 100 * float64(errs) / float64(done)
	}
	p.Requirements = []Requirement{p95Requirement(lat, s.p95Limit)}
	return p
}

// p95Requirement is "p95 ≤ limit" in milliseconds. Its 95 % interval
// comes from batch means: the probe's samples in completion order are cut
// into 10 batches and the interval is the mean of their p95s ± t·s/√10.
// Successive latencies in a queue are correlated, so an interval that
// treats them as independent (order statistics) is far too narrow: it
// would call a difference between two runs of the same load significant.
func p95Requirement(lat []float64, limit float64) Requirement {
	r := Requirement{Name: "p95 < limit", Limit: limit * 1000, Better: Lower}
	const batches = 10
	n := len(lat)
	if n < batches*20 {
		r.Value, r.Low, r.High = 1e12, 1e12, 1e12 // (almost) nothing completed: broken
		return r
	}
	var ps []float64
	for b := range batches {
		part := slices.Clone(lat[b*n/batches : (b+1)*n/batches])
		ps = append(ps, p95(part))
	}
	var mean, ss float64
	for _, v := range ps {
		mean += v
	}
	mean /= batches
	for _, v := range ps {
		ss += (v - mean) * (v - mean)
	}
	half := 2.262 * math.Sqrt(ss/(batches-1)) / math.Sqrt(batches) // t(0.975, 9)
	r.Value = p95(slices.Clone(lat))
	r.Low, r.High = min(r.Value, mean-half), max(r.Value, mean+half)
	return r
}

// p95 of xs in milliseconds (sorts xs).
func p95(xs []float64) float64 {
	slices.Sort(xs)
	return xs[int(math.Ceil(float64(len(xs))*0.95))-1] * 1000
}

type events []float64

func (e events) Len() int           { return len(e) }
func (e events) Less(i, j int) bool { return e[i] < e[j] }
func (e events) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)        { *e = append(*e, x.(float64)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// drive runs a search to its end against probe, returning the answer, the
// probes and the decisions. It fails the search (returns ok false) if it
// does not stop within limit decisions.
func drive(s Settings, probe func(Decision) Probe, limit int) (ans *Answer, probes []Probe, decisions []Decision, err error) {
	for range limit {
		d, err := Next(s, probes)
		if err != nil {
			return nil, probes, decisions, err
		}
		decisions = append(decisions, d)
		if d.Action == Stop {
			return d.Answer, probes, decisions, nil
		}
		probes = append(probes, probe(d))
	}
	return nil, probes, decisions, nil
}
