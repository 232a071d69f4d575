package importer

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// The import records response times into lean per-second histograms with
// exactly the bucket layout of metrics.NewHist (HDR, 1 µs … 1 h, 3
// significant digits) and encodes them in HdrHistogram's V2 compressed
// format itself. Going through hdrhistogram-go would allocate and clear a
// 188 KB counts array and a fresh best-compression zlib writer for every
// label and second, which made that encoding, not parsing, the import's
// bottleneck. The zlib stream is stored, not compressed: deflate cost more
// than everything else per record, for a few hundred bytes saved.
// metrics.DecodeHist reads the result; a test checks that it
// decodes to the same histogram hdrhistogram-go records.
const (
	subBucketHalfCountMag = 10 // 3 significant digits: 2048 sub-buckets
	subBucketHalfCount    = 1 << subBucketHalfCountMag
	subBucketMask         = 2*subBucketHalfCount - 1
	v2EncodingCookie      = 0x1c849303 | 0x10
	v2CompressedCookie    = 0x1c849304 | 0x10
)

// countsIndex is hdrhistogram-go's countsIndexFor for plateau's geometry
// (lowest discernible value 1, so unit magnitude 0).
func countsIndex(v int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(v|subBucketMask)) - (subBucketHalfCountMag + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<subBucketHalfCountMag + sub - subBucketHalfCount
}

// lean is a histogram of response times in µs: the HDR bucket indices of
// recorded values are appended as they come and, now and then, sorted and
// folded into runs of (bucket, count). Appending touches memory in order,
// so recording costs no cache miss per value (a table indexed by bucket
// does: ~100 KB per histogram up to 2 s), memory follows the number of
// distinct buckets, and merging is a merge of sorted runs. The zero value
// is empty.
type lean struct {
	runs  []leanRun // sorted by bucket, one per bucket
	vals  []int32   // buckets recorded since the last fold, unsorted
	spare []leanRun // scratch: the folded values
	alt   []leanRun // scratch: the merge's output, then the old runs
	tmp   []int32   // scratch for sorting
}

// leanRun is the count of one bucket.
type leanRun struct {
	idx int32
	n   int64
}

// leanFold is how many values are appended before they are folded.
const leanFold = 4096

func (h *lean) record(us int64) {
	us = min(max(us, metrics.HistLowestUs), metrics.HistHighestUs)
	h.vals = append(h.vals, int32(countsIndex(us)))
	if len(h.vals) >= leanFold {
		h.fold()
	}
}

// fold sorts the pending values into the runs.
func (h *lean) fold() {
	if len(h.vals) == 0 {
		return
	}
	h.tmp = sortBuckets(h.vals, h.tmp)
	add := h.spare[:0]
	for i := 0; i < len(h.vals); {
		j := i + 1
		for j < len(h.vals) && h.vals[j] == h.vals[i] {
			j++
		}
		add = append(add, leanRun{h.vals[i], int64(j - i)})
		i = j
	}
	h.vals = h.vals[:0]
	if len(h.runs) == 0 {
		h.runs, h.spare = add, h.runs[:0]
		return
	}
	h.spare = add
	h.mergeRuns(add)
}

// sortBuckets sorts bucket indices (0 ≤ v < 1<<16: countsIndex of an hour
// in µs is below 1<<15) by counting passes over their two bytes (LSD
// radix), which for the hundreds of values of a label's second costs a few
// ns per value where a comparison sort costs tens. tmp is scratch space,
// returned grown if need be.
func sortBuckets(v, tmp []int32) []int32 {
	if len(v) < 64 {
		slices.Sort(v)
		return tmp
	}
	var c [2][256]int32
	for _, x := range v {
		c[0][x&0xff]++
		c[1][x>>8&0xff]++
	}
	if cap(tmp) < len(v) {
		tmp = make([]int32, len(v), 2*len(v))
	}
	tmp = tmp[:len(v)]
	src, dst := v, tmp
	for pass := range 2 {
		shift, cnt := 8*pass, &c[pass]
		if cnt[src[0]>>shift&0xff] == int32(len(v)) {
			continue // every value has the same byte here
		}
		var sum int32
		for i := range cnt {
			cnt[i], sum = sum, sum+cnt[i]
		}
		for _, x := range src {
			b := x >> shift & 0xff
			dst[cnt[b]] = x
			cnt[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
	return tmp
}

// mergeRuns merges sorted runs into h.runs.
func (h *lean) mergeRuns(add []leanRun) {
	out := h.alt[:0]
	if cap(out) < len(h.runs)+len(add) {
		out = make([]leanRun, 0, 2*(len(h.runs)+len(add)))
	}
	a := h.runs
	for len(a) > 0 && len(add) > 0 {
		switch {
		case a[0].idx < add[0].idx:
			out, a = append(out, a[0]), a[1:]
		case a[0].idx > add[0].idx:
			out, add = append(out, add[0]), add[1:]
		default:
			out = append(out, leanRun{a[0].idx, a[0].n + add[0].n})
			a, add = a[1:], add[1:]
		}
	}
	out = append(append(out, a...), add...)
	h.runs, h.alt = out, h.runs[:0]
}

// merge adds o's counts; o is folded.
func (h *lean) merge(o *lean) {
	o.fold()
	h.fold()
	if len(h.runs) == 0 {
		h.runs = append(h.runs, o.runs...)
		return
	}
	h.mergeRuns(o.runs)
}

func (h *lean) reset() {
	h.runs, h.vals = h.runs[:0], h.vals[:0]
}

// histEncoder encodes lean histograms; it reuses its buffers and zlib
// writer. Not safe for concurrent use.
type histEncoder struct {
	body []byte
	raw  []byte
	zbuf bytes.Buffer
	zw   *zlib.Writer
}

// encode returns the base64 V2 compressed encoding ("HISTFAAA…").
func (e *histEncoder) encode(h *lean) (string, error) {
	b, err := e.appendEncoded(nil, h)
	return string(b), err
}

// appendEncoded appends encode's text to dst: the aggregator puts a flush's
// histograms in one buffer and makes one string of it, not one per record.
func (e *histEncoder) appendEncoded(dst []byte, h *lean) ([]byte, error) {
	// Counts: ZigZag LEB128; a run of zeros is one negative count. Only
	// the recorded buckets are visited, so the cost follows the number of
	// distinct values, not the range of the histogram.
	h.fold()
	const hdrLen = 40
	body := append(e.body[:0], make([]byte, hdrLen)...)
	prev := int32(-1)
	for _, s := range h.runs {
		i := s.idx
		switch zeros := int64(i - prev - 1); {
		case zeros > 1:
			body = binary.AppendUvarint(body, zigzag(-zeros))
		case zeros == 1:
			body = binary.AppendUvarint(body, 0)
		}
		body = binary.AppendUvarint(body, zigzag(s.n))
		prev = i
	}
	binary.BigEndian.PutUint32(body[0:], v2EncodingCookie)
	binary.BigEndian.PutUint32(body[4:], uint32(len(body)-hdrLen))
	binary.BigEndian.PutUint32(body[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(body[12:], metrics.HistDigits)
	binary.BigEndian.PutUint64(body[16:], metrics.HistLowestUs)
	binary.BigEndian.PutUint64(body[24:], uint64(metrics.HistHighestUs))
	binary.BigEndian.PutUint64(body[32:], math.Float64bits(1))
	e.body = body

	e.zbuf.Reset()
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.NoCompression)
	} else {
		e.zw.Reset(&e.zbuf)
	}
	if _, err := e.zw.Write(body); err != nil {
		return dst, fmt.Errorf("encoding histogram: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return dst, fmt.Errorf("encoding histogram: %w", err)
	}
	raw := binary.BigEndian.AppendUint32(e.raw[:0], v2CompressedCookie)
	raw = binary.BigEndian.AppendUint32(raw, uint32(e.zbuf.Len()))
	raw = append(raw, e.zbuf.Bytes()...)
	e.raw = raw
	return base64.StdEncoding.AppendEncode(dst, raw), nil
}

func zigzag(v int64) uint64 { return uint64((v << 1) ^ (v >> 63)) }
