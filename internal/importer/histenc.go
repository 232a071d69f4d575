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

// lean is a histogram of response times in µs: counts up to the highest
// index used, so a second whose times are all below a few ms costs a few KB.
type lean struct {
	counts  []int64
	touched []int32 // indices with a non-zero count, unordered
}

func (h *lean) record(us int64) {
	us = min(max(us, metrics.HistLowestUs), metrics.HistHighestUs)
	i := countsIndex(us)
	if i >= len(h.counts) {
		if i < cap(h.counts) {
			h.counts = h.counts[:i+1]
		} else {
			n := make([]int64, i+1, max(i+1, 2*cap(h.counts)))
			copy(n, h.counts)
			h.counts = n
		}
	}
	if h.counts[i] == 0 {
		h.touched = append(h.touched, int32(i))
	}
	h.counts[i]++
}

func (h *lean) reset() {
	for _, i := range h.touched {
		h.counts[i] = 0
	}
	h.counts = h.counts[:0]
	h.touched = h.touched[:0]
}

// histEncoder encodes lean histograms; it reuses its buffers and zlib
// writer. Not safe for concurrent use.
type histEncoder struct {
	payload []byte
	zbuf    bytes.Buffer
	zw      *zlib.Writer
	out     []byte
}

// encode returns the base64 V2 compressed encoding ("HISTFAAA…").
func (e *histEncoder) encode(h *lean) (string, error) {
	// Counts: ZigZag LEB128; a run of zeros is one negative count. Only
	// the touched indices are visited, so the cost follows the number of
	// distinct values, not the range of the histogram.
	slices.Sort(h.touched)
	counts := e.payload[:0]
	prev := int32(-1)
	for _, i := range h.touched {
		switch zeros := int64(i - prev - 1); {
		case zeros > 1:
			counts = binary.AppendUvarint(counts, zigzag(-zeros))
		case zeros == 1:
			counts = binary.AppendUvarint(counts, 0)
		}
		counts = binary.AppendUvarint(counts, zigzag(h.counts[i]))
		prev = i
	}
	hdrLen := 40
	body := make([]byte, hdrLen, hdrLen+len(counts))
	binary.BigEndian.PutUint32(body[0:], v2EncodingCookie)
	binary.BigEndian.PutUint32(body[4:], uint32(len(counts)))
	binary.BigEndian.PutUint32(body[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(body[12:], metrics.HistDigits)
	binary.BigEndian.PutUint64(body[16:], metrics.HistLowestUs)
	binary.BigEndian.PutUint64(body[24:], uint64(metrics.HistHighestUs))
	binary.BigEndian.PutUint64(body[32:], math.Float64bits(1))
	body = append(body, counts...)
	e.payload = counts[:0]

	e.zbuf.Reset()
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.NoCompression)
	} else {
		e.zw.Reset(&e.zbuf)
	}
	if _, err := e.zw.Write(body); err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	raw := make([]byte, 8, 8+e.zbuf.Len())
	binary.BigEndian.PutUint32(raw[0:], v2CompressedCookie)
	binary.BigEndian.PutUint32(raw[4:], uint32(e.zbuf.Len()))
	raw = append(raw, e.zbuf.Bytes()...)
	return base64.StdEncoding.EncodeToString(raw), nil
}

func zigzag(v int64) uint64 { return uint64((v << 1) ^ (v >> 63)) }
