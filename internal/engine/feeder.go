package engine

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/plateau-perf/plateau/internal/plan"
)

// feeder hands out CSV rows. Sequential and unique feeders share one atomic
// cursor across all users of all workloads; a segmented generator (i of N)
// takes global rows i, i+N, i+2N… so no row is used twice across generators.
type feeder struct {
	name      string
	columns   []string
	data      *plan.Feeder // its rows: in memory, or read through an index (plan.RowIndex)
	n         int64
	order     string
	recycle   bool
	cursor    atomic.Int64
	seg, segN int64
	exhausted atomic.Bool
	used      atomic.Int64 // rows handed out
	onEnd     string       // plan.EndStopUser or EndStopRun when set by on_end
	readErr   atomic.Pointer[error]
}

func newFeeder(f *plan.Feeder, seg, segN int) *feeder {
	order := f.Order
	if order == "" {
		order = "sequential"
	}
	recycle := f.OnExhausted == "recycle" || (f.OnExhausted == "" && order != "unique")
	return &feeder{name: f.Name, columns: f.Columns, data: f, n: f.Len(), order: order, recycle: recycle,
		seg: int64(seg), segN: int64(max(segN, 1)), onEnd: f.OnEnd}
}

// next returns a row, or nil when the feeder is exhausted and must not
// recycle. rng is the calling user's generator (random order).
func (f *feeder) next(rng *rand.Rand) []string {
	n := f.n
	if n == 0 {
		return nil
	}
	if f.order == "random" {
		f.used.Add(1)
		return f.row(rng.Int64N(n))
	}
	k := f.cursor.Add(1) - 1
	g := f.seg + k*f.segN // global row index of this generator's k-th row
	if g >= n {
		if !f.recycle {
			f.exhausted.Store(true)
			return nil
		}
		g %= n
	}
	f.used.Add(1)
	return f.row(g)
}

// own returns the row at a user's own cursor k (order each_user: every
// user reads the file from its first row), or nil past the end when the
// feeder does not recycle. Generators' segments do not apply: each user
// reads the whole file.
func (f *feeder) own(k int64) []string {
	n := f.n
	if n == 0 {
		return nil
	}
	if k >= n {
		if !f.recycle {
			return nil
		}
		k %= n
	}
	f.used.Add(1)
	return f.row(k)
}

// row returns global row g. A large file's row is read from the file,
// which Load checked row by row; should it fail now (the file changed
// during the run), the row's fields are empty rather than stale, and the
// first such error is kept for the run's notes.
func (f *feeder) row(g int64) []string {
	r, err := f.data.Row(g)
	if err != nil {
		f.readErr.CompareAndSwap(nil, &err)
		return make([]string, len(f.columns))
	}
	return r
}
