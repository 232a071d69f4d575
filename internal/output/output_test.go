package output

import (
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
)

// blocked is an output whose receiver hangs until released; entered is
// closed when its first Add began.
type blocked struct {
	release chan struct{}
	entered chan struct{}
	got     []*Snapshot
}

func (b *blocked) Add(s *Snapshot) error {
	if len(b.got) == 0 {
		close(b.entered)
	}
	<-b.release
	b.got = append(b.got, s)
	return nil
}
func (b *blocked) Close() error { return nil }

// quick is an output that takes every snapshot at once and says so on
// seen (buffered for the whole test).
type quick struct {
	got  []*Snapshot
	seen chan struct{}
}

func (q *quick) Add(s *Snapshot) error { q.got = append(q.got, s); q.seen <- struct{}{}; return nil }
func (q *quick) Close() error          { return nil }

// TestSlowOutputDropsAndCounts: a hanging receiver never blocks Publish
// (if it did, the loop below would never end); its snapshots beyond the
// queue are dropped and counted, while another output gets every one. The
// test waits for what the code does, not for time to pass: the slow
// output holds the first snapshot in Add before the others are published,
// and the fast one has taken each snapshot before the next (a sleep of
// 100 µs did that before, and under load the slow one's final count varied).
func TestSlowOutputDropsAndCounts(t *testing.T) {
	h := NewHub("", []string{"w"})
	slow := &blocked{release: make(chan struct{}), entered: make(chan struct{})}
	const n = queueLen + 40
	fast := &quick{seen: make(chan struct{}, n+1)}
	h.Add("slow", "x", slow)
	h.Add("fast", "y", fast)
	rec := metrics.NewRecorder(1, nil)
	for i := range n {
		rec.Record(0, metrics.Key{Workload: "w", Phase: -1, Label: "get"},
			&core.Sample{Label: "get", Elapsed: time.Duration(i+1) * time.Millisecond})
		iv := rec.Rotate(nil)
		h.Publish(time.Unix(int64(1000+i), 0), iv, map[string]int{"w": 1}, nil)
		<-fast.seen
		if i == 0 {
			<-slow.entered
		}
	}
	close(slow.release)
	stats, err := h.Close()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Stat{}
	for _, s := range stats {
		byName[s.Name] = s
	}
	// Of the n snapshots the slow output took one into Add and queueLen
	// into its queue and dropped the rest. The final marker of Close comes
	// after the release, so it finds room or not as the slow output's
	// goroutine has drained its queue by then: either count is right.
	s := byName["slow"]
	if s.Sent+s.Dropped != n+1 || s.Sent < queueLen+1 || s.Sent > queueLen+2 || s.Dropped < n-queueLen-1 {
		t.Errorf("slow output: %+v (published %d, queue %d)", s, n+1, queueLen)
	}
	if s := byName["fast"]; s.Dropped != 0 || s.Sent != n+1 {
		t.Errorf("fast output: %+v", s)
	}
	var count int64
	for _, s := range fast.got {
		for _, x := range s.Series {
			count += x.Count
		}
	}
	if count != n || !fast.got[len(fast.got)-1].Final {
		t.Errorf("fast output saw %d samples (want %d), last final %v", count, n, fast.got[len(fast.got)-1].Final)
	}
	if note := Note(byName["slow"]); !strings.Contains(note, "dropped") {
		t.Errorf("note %q", note)
	}
}

// TestSeriesCopy: a snapshot owns its data (the engine reuses its interval)
// and its percentiles match the aggregate's.
func TestSeriesCopy(t *testing.T) {
	a := metrics.NewAgg()
	for i := 1; i <= 1000; i++ {
		s := &core.Sample{Elapsed: time.Duration(i) * time.Millisecond}
		if i%10 == 0 {
			s.Class, s.Status = core.ErrHTTP5xx, 503
		}
		a.Add(s)
	}
	x := seriesOf(metrics.Key{Workload: "w", Phase: 0, Label: "l"}, a, nil)
	for _, p := range []float64{50, 90, 95, 99} {
		if got, want := x.Quantile(p), a.QuantileMs(p); got != want {
			t.Errorf("p%g: series %v, agg %v", p, got, want)
		}
	}
	if x.ErrorsByClass[core.ErrHTTP5xx] != 100 || x.Errors != 100 || x.Count != 1000 {
		t.Errorf("series %+v", x.ErrorsByClass)
	}
	a.Reset()
	if x.Hist.Total != 1000 {
		t.Error("the snapshot shares the aggregate's memory")
	}
}
