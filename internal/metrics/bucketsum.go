package metrics

import (
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// histCountsLen is the number of buckets of NewHist's geometry (23 buckets
// of 1,024 sub-buckets): a value whose index is beyond it is refused by
// hdrhistogram, and by BucketSum.
const histCountsLen = 23 * 1024

// histIndex is hdrhistogram's counts index of v ≥ 0 in NewHist's geometry
// (lowest discernible value 1: unit magnitude 0, 2,048 sub-buckets).
func histIndex(v int64) int {
	const halfMag, mask = 10, 1<<11 - 1
	bucket := 64 - bits.LeadingZeros64(uint64(v|mask)) - (halfMag + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<halfMag + sub - 1<<halfMag
}

// BucketSum adds decoded histograms bucket by bucket in NewHist's geometry:
// what a sum of many seconds' histograms needs when only its percentiles
// (or one final histogram) are read. Adding a Sparse costs an array add per
// populated bucket, where hdrhistogram's RecordValues recomputes the
// bucket and the extremes for each; its storage covers only the range of
// buckets used, and Reset clears only that. The percentiles are
// hdrhistogram's, bucket for bucket. The zero value is empty.
type BucketSum struct {
	counts []int64 // counts[i] is bucket lo+i
	lo     int
	// used is the range of counts that may be non-zero: [from, to).
	from, to int
	Total    int64
}

// Add adds the buckets of s.
func (b *BucketSum) Add(s *Sparse) {
	if len(s.Values) == 0 {
		return
	}
	first, last := histIndex(s.Values[0]), histIndex(s.Values[len(s.Values)-1])
	last = min(last, histCountsLen-1)
	if first > last {
		return // every value above the range: hdrhistogram refuses them
	}
	b.grow(first, last)
	if b.from == b.to {
		b.from, b.to = first-b.lo, first-b.lo
	}
	b.from = min(b.from, first-b.lo)
	b.to = max(b.to, last-b.lo+1)
	for i, v := range s.Values {
		idx := histIndex(v)
		if idx >= histCountsLen {
			break // values ascend: the rest are above the range too
		}
		b.counts[idx-b.lo] += s.Counts[i]
		b.Total += s.Counts[i]
	}
}

// grow makes counts cover buckets first…last, with room on either side
// (half the range again) so that a sum of similar histograms settles after
// a few additions.
func (b *BucketSum) grow(first, last int) {
	if len(b.counts) > 0 {
		if first >= b.lo && last < b.lo+len(b.counts) {
			return
		}
		first, last = min(first, b.lo), max(last, b.lo+len(b.counts)-1)
	}
	pad := (last - first + 1) / 2
	lo, hi := max(0, first-pad), min(histCountsLen-1, last+pad)
	c := make([]int64, hi-lo+1)
	if len(b.counts) > 0 {
		copy(c[b.lo-lo:], b.counts)
	}
	b.from, b.to = b.from+b.lo-lo, b.to+b.lo-lo
	b.counts, b.lo = c, lo
}

// Reset empties b, keeping its storage.
func (b *BucketSum) Reset() {
	clear(b.counts[b.from:b.to])
	b.from, b.to, b.Total = 0, 0, 0
}

// ValueAtPercentile is hdrhistogram's ValueAtPercentile of the sum: the
// highest value equivalent to the bucket holding the percentile (0–100);
// 0 when empty; at 0 and below, the lowest value of the first bucket.
func (b *BucketSum) ValueAtPercentile(pct float64) int64 {
	if b.Total == 0 {
		return 0
	}
	want := percentileRank(max(pct, 0), b.Total)
	var seen int64
	for i := b.from; i < b.to; i++ {
		seen += b.counts[i]
		if seen >= want {
			lo, hi, _ := bucketRange(int64(b.lo+i), 10, 0)
			if pct <= 0 {
				return lo
			}
			return hi
		}
	}
	_, hi, _ := bucketRange(int64(b.lo+b.to-1), 10, 0)
	return hi
}

// AddTo records the sum into h, a histogram of NewHist's geometry: one
// RecordValues per populated bucket.
func (b *BucketSum) AddTo(h *hdr.Histogram) {
	for i := b.from; i < b.to; i++ {
		if c := b.counts[i]; c != 0 {
			lo, _, _ := bucketRange(int64(b.lo+i), 10, 0)
			_ = h.RecordValues(lo, c)
		}
	}
}

// percentileRank is hdrhistogram's rank of a percentile among total > 0
// values: round half up, within [1, total].
func percentileRank(pct float64, total int64) int64 {
	rank := min(pct, 100)/100*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}
