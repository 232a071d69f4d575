package compare

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// bucket is one non-empty histogram bucket: a representative value (the
// middle of its equivalent range) and a count.
type bucket struct {
	v float64
	n float64
}

func buckets(h *hdrhistogram.Histogram) []bucket {
	var out []bucket
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, bucket{v: (float64(b.From) + float64(b.To)) / 2, n: float64(b.Count)})
		}
	}
	return out
}

// mwResult is a Mann–Whitney U statistic for "candidate > baseline".
type mwResult struct {
	u    float64 // Σ over candidate samples of (#baseline below + ½ #baseline tied)
	sd   float64 // standard deviation of U under no difference, ties corrected
	cles float64 // u / (n1·n2)
}

// mannWhitney computes U from the two histograms' bucket counts without
// expanding them into samples: walking the merged buckets in value order,
// each candidate bucket of count b at a value where the baseline has a
// samples and A samples below adds b·(A + a/2). Samples in one bucket are
// indistinguishable, so they are ties, and the variance carries the usual
// tie correction n1·n2/12·((N+1) − Σ(t³−t)/(N(N−1))). The cost is one pass
// over the buckets (a few thousand), whatever the sample count.
//
// Histograms with the same geometry (the engine uses one for every label)
// share bucket boundaries exactly; with different geometries buckets are
// ordered by their midpoints, an approximation within the coarser
// histogram's resolution.
func mannWhitney(base, cand *hdrhistogram.Histogram) mwResult {
	a, b := buckets(base), buckets(cand)
	n1, n2 := float64(base.TotalCount()), float64(cand.TotalCount())
	var u, below, ties float64
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var av, bv float64
		switch {
		case j == len(b) || (i < len(a) && a[i].v < b[j].v):
			av = a[i].n
			i++
		case i == len(a) || b[j].v < a[i].v:
			bv = b[j].n
			j++
		default: // same value
			av, bv = a[i].n, b[j].n
			i++
			j++
		}
		u += bv * (below + av/2)
		below += av
		t := av + bv
		ties += t*t*t - t
	}
	n := n1 + n2
	v := n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1)))
	return mwResult{u: u, sd: math.Sqrt(math.Max(v, 0)), cles: u / (n1 * n2)}
}
