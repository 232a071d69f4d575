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

// lean is a histogram of response times in µs: a small open-addressing
// table from HDR bucket index to count, so a label's second costs memory in
// the number of distinct buckets it saw (tens of bytes each), not in the
// range of its values (a dense array up to 2 s is ~100 KB), and merging
// two follows the smaller one's distinct buckets. The zero value is empty.
type lean struct {
	slots []leanSlot // len 0 or a power of two; at most half used
	used  []int32    // positions of used slots, unordered
	shift uint8      // 32 − log2(len(slots))
}

// leanSlot is one bucket: key is the bucket index + 1 (0: free).
type leanSlot struct {
	key int32
	n   int64
}

func (h *lean) record(us int64) {
	us = min(max(us, metrics.HistLowestUs), metrics.HistHighestUs)
	h.add(int32(countsIndex(us)), 1)
}

// add counts n values in bucket i.
func (h *lean) add(i int32, n int64) {
	if 2*(len(h.used)+1) > len(h.slots) {
		h.grow()
	}
	mask := len(h.slots) - 1
	p := int((uint32(i) * 0x9e3779b1) >> h.shift)
	for {
		s := &h.slots[p]
		switch s.key {
		case i + 1:
			s.n += n
			return
		case 0:
			s.key, s.n = i+1, n
			h.used = append(h.used, int32(p))
			return
		}
		p = (p + 1) & mask
	}
}

func (h *lean) grow() {
	old, oldUsed := h.slots, h.used
	size := max(16, 2*len(old))
	h.slots = make([]leanSlot, size)
	h.used = make([]int32, 0, size/2)
	h.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	for _, p := range oldUsed {
		h.add(old[p].key-1, old[p].n)
	}
}

// merge adds o's counts.
func (h *lean) merge(o *lean) {
	for _, p := range o.used {
		h.add(o.slots[p].key-1, o.slots[p].n)
	}
}

func (h *lean) reset() {
	for _, p := range h.used {
		h.slots[p] = leanSlot{}
	}
	h.used = h.used[:0]
}

// histEncoder encodes lean histograms; it reuses its buffers and zlib
// writer. Not safe for concurrent use.
type histEncoder struct {
	sorted  []uint64 // bucket index << 32 | slot position
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
	e.sorted = e.sorted[:0]
	for _, p := range h.used {
		e.sorted = append(e.sorted, uint64(h.slots[p].key-1)<<32|uint64(p))
	}
	slices.Sort(e.sorted)
	counts := e.payload[:0]
	prev := int32(-1)
	for _, v := range e.sorted {
		i, s := int32(v>>32), &h.slots[uint32(v)]
		switch zeros := int64(i - prev - 1); {
		case zeros > 1:
			counts = binary.AppendUvarint(counts, zigzag(-zeros))
		case zeros == 1:
			counts = binary.AppendUvarint(counts, 0)
		}
		counts = binary.AppendUvarint(counts, zigzag(s.n))
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
