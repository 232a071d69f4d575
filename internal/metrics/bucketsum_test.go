package metrics

import (
	"math/rand/v2"
	"testing"
)

// TestHistCountsLen: the geometry constant is hdrhistogram's.
func TestHistCountsLen(t *testing.T) {
	if n := len(NewHist().Export().Counts); n != histCountsLen {
		t.Fatalf("NewHist has %d buckets, histCountsLen says %d", n, histCountsLen)
	}
	for _, v := range []int64{0, 1, 2047, 2048, 4095, 4096, 123456, HistHighestUs} {
		h := NewHist()
		_ = h.RecordValue(v)
		var sp Sparse
		SparseOf(h, &sp)
		idx := histIndex(sp.Values[0])
		if lo, _, _ := bucketRange(int64(idx), 10, 0); lo != sp.Values[0] || idx >= histCountsLen {
			t.Fatalf("value %d: index %d", v, idx)
		}
	}
}

// TestBucketSumIsHDR adds random histograms (and resets) into a BucketSum
// and into hdrhistogram, and compares percentiles and the histogram
// AddTo gives.
func TestBucketSumIsHDR(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	var b BucketSum
	var sp Sparse
	for round := range 40 {
		ref := NewHist()
		b.Reset()
		for range 1 + r.IntN(30) {
			h := NewHist()
			scale := []float64{50, 5000, 500000, 5e7, 3e9}[r.IntN(5)]
			for range r.IntN(400) {
				recordUs(h, int64(r.ExpFloat64()*scale))
			}
			if r.IntN(8) == 0 {
				_ = h.RecordValues(HistHighestUs, 3)
			}
			SparseOf(h, &sp)
			b.Add(&sp)
			sp.AddTo(ref)
		}
		if b.Total != ref.TotalCount() {
			t.Fatalf("round %d: total %d, want %d", round, b.Total, ref.TotalCount())
		}
		for _, p := range []float64{-1, 0, 1e-9, 1, 25, 50, 90, 95, 99, 99.9, 100, 120} {
			if got, want := b.ValueAtPercentile(p), ref.ValueAtPercentile(p); got != want {
				t.Fatalf("round %d p%v: %d, want %d", round, p, got, want)
			}
		}
		back := NewHist()
		b.AddTo(back)
		if !back.Equals(ref) {
			t.Fatalf("round %d: AddTo gives a different histogram", round)
		}
	}
}

// TestBucketSumAboveRange: values beyond the geometry (a decoded foreign
// histogram) are refused as hdrhistogram refuses them.
func TestBucketSumAboveRange(t *testing.T) {
	sp := Sparse{Values: []int64{10, HistHighestUs * 4}, High: []int64{10, HistHighestUs * 4}, Counts: []int64{2, 5}, Total: 7}
	var b BucketSum
	b.Add(&sp)
	ref := NewHist()
	sp.AddTo(ref)
	if b.Total != ref.TotalCount() || b.Total != 2 || b.ValueAtPercentile(100) != ref.ValueAtPercentile(100) {
		t.Fatalf("total %d (hdr %d), max %d (hdr %d)", b.Total, ref.TotalCount(), b.ValueAtPercentile(100), ref.ValueAtPercentile(100))
	}
}
