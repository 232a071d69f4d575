package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"math"
	"math/bits"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Sparse is a decoded histogram as its populated buckets, in ascending
// value order: Values[i] is the lowest value of a bucket, High[i] its highest
// equivalent value, Counts[i] its count.
type Sparse struct {
	Values, High, Counts []int64
	Total                int64
}

// AddTo records the buckets into a dense histogram (work proportional to the
// populated buckets).
func (s *Sparse) AddTo(h *hdr.Histogram) {
	for i, v := range s.Values {
		_ = h.RecordValues(v, s.Counts[i])
	}
}

// ValueAtPercentile returns the highest value equivalent to the bucket
// holding the given percentile (0–100), as hdrhistogram does.
func (s *Sparse) ValueAtPercentile(pct float64) int64 {
	if s.Total == 0 {
		return 0
	}
	// hdrhistogram's rank: round half up, within [1, total].
	rank := min(pct, 100)/100*float64(s.Total) + 0.5
	want := int64(1)
	if rank >= float64(s.Total) {
		want = s.Total
	} else if rank >= 1 {
		want = int64(rank)
	}
	var seen int64
	for i, c := range s.Counts {
		seen += c
		if seen >= want {
			return s.High[i]
		}
	}
	return s.High[len(s.High)-1]
}

// HistDecoder decodes V2-compressed HdrHistogram strings ("HISTFAAA…"),
// reusing its buffers and inflater between calls. Decoding a second's
// histogram is most of the cost of reading a long run, and
// hdrhistogram-go allocates a fresh 40 KiB inflater per histogram. Not safe
// for concurrent use; use one per goroutine.
type HistDecoder struct {
	raw     []byte
	payload []byte
	stored  []byte
	zr      io.ReadCloser
	br      bytes.Reader
	// Stored counts the histograms read without inflating (their zlib
	// stream held stored blocks only, as plateau writes them).
	Stored int
}

const (
	v2CompressedCookie = 0x1c849304
	v2Cookie           = 0x1c849303
	encHeaderSize      = 40
	// maxPayload bounds the inflated payload (a valid one holds at most
	// one ≤ 9-byte varint per bucket; plateau's geometry has 23,552).
	maxPayload = 1 << 22
)

// Decode decodes s into dst (reusing its slices).
func (d *HistDecoder) Decode(s string, dst *Sparse) error {
	return d.DecodeBytes(unsafe.Slice(unsafe.StringData(s), len(s)), dst) // read only
}

// DecodeBytes is Decode of the text in b (which it does not keep).
func (d *HistDecoder) DecodeBytes(s []byte, dst *Sparse) error {
	dst.Values, dst.High, dst.Counts, dst.Total = dst.Values[:0], dst.High[:0], dst.Counts[:0], 0
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(d.raw) < n {
		d.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:n], s)
	if err != nil {
		return fmt.Errorf("decoding histogram: %w", err)
	}
	raw := d.raw[:n]
	if len(raw) < 8 {
		return errors.New("decoding histogram: too short")
	}
	if c := int32(binary.BigEndian.Uint32(raw[0:4])) &^ 0xf0; c != v2CompressedCookie {
		return fmt.Errorf("decoding histogram: not a V2 compressed histogram (cookie %#x)", c)
	}
	clen := int(binary.BigEndian.Uint32(raw[4:8]))
	if clen < 0 || clen > len(raw)-8 {
		return errors.New("decoding histogram: bad compressed length")
	}
	head, p, err := d.body(raw[8 : 8+clen])
	if err != nil {
		return err
	}
	if c := int32(binary.BigEndian.Uint32(head[0:4])) &^ 0xf0; c != v2Cookie {
		return fmt.Errorf("decoding histogram: unsupported encoding (cookie %#x)", c)
	}
	sig := int32(binary.BigEndian.Uint32(head[12:16]))
	lowest := int64(binary.BigEndian.Uint64(head[16:24]))
	if sig < 0 || sig > 5 {
		return errors.New("decoding histogram: corrupt header")
	}
	lowest = max(lowest, 1)
	// Geometry as hdrhistogram computes it.
	largestSingleUnit := 2 * int64(math.Pow10(int(sig)))
	subBucketCountMag := int32(math.Ceil(math.Log2(float64(largestSingleUnit))))
	halfMag := max(subBucketCountMag, 1) - 1
	unitMag := int32(63 - bits.LeadingZeros64(uint64(lowest)))
	var idx int64
	for pos := 0; pos < len(p); {
		v, n := binary.Uvarint(p[pos:])
		if n <= 0 || n > 9 {
			return errors.New("decoding histogram: corrupt payload")
		}
		pos += n
		c := int64(v>>1) ^ -int64(v&1) // zig-zag
		if c < 0 {
			if -c > 1<<30 {
				return errors.New("decoding histogram: corrupt zero run")
			}
			idx -= c
			continue
		}
		if c > 0 {
			lo, hi, ok := bucketRange(idx, halfMag, unitMag)
			if !ok {
				return errors.New("decoding histogram: value out of range")
			}
			dst.Values = append(dst.Values, lo)
			dst.High = append(dst.High, hi)
			dst.Counts = append(dst.Counts, c)
			dst.Total += c
		}
		idx++
	}
	return nil
}

// body returns the V2 header and payload of a histogram's zlib stream z.
// A stream of stored blocks (what plateau writes: HistEncoder.EncodeStored
// and the importers) is read in place, its Adler-32 checked; any other is
// inflated.
func (d *HistDecoder) body(z []byte) (head, payload []byte, err error) {
	if b, ok := d.unstore(z); ok {
		if len(b) < encHeaderSize {
			return nil, nil, errors.New("decoding histogram header: too short")
		}
		plen := int(int32(binary.BigEndian.Uint32(b[4:8])))
		if plen < 0 || plen > maxPayload || plen > len(b)-encHeaderSize {
			return nil, nil, errors.New("decoding histogram: corrupt header")
		}
		d.Stored++
		return b[:encHeaderSize], b[encHeaderSize : encHeaderSize+plen], nil
	}
	d.br.Reset(z)
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.br); err != nil {
			return nil, nil, fmt.Errorf("decoding histogram: %w", err)
		}
	} else if err := d.zr.(zlib.Resetter).Reset(&d.br, nil); err != nil {
		return nil, nil, fmt.Errorf("decoding histogram: %w", err)
	}
	var hd [encHeaderSize]byte
	if _, err := io.ReadFull(d.zr, hd[:]); err != nil {
		return nil, nil, fmt.Errorf("decoding histogram header: %w", err)
	}
	plen := int(int32(binary.BigEndian.Uint32(hd[4:8])))
	if plen < 0 || plen > maxPayload {
		return nil, nil, errors.New("decoding histogram: corrupt header")
	}
	if cap(d.payload) < encHeaderSize+plen {
		d.payload = make([]byte, encHeaderSize+plen)
	}
	b := d.payload[:encHeaderSize+plen]
	copy(b, hd[:])
	if _, err := io.ReadFull(d.zr, b[encHeaderSize:]); err != nil {
		return nil, nil, fmt.Errorf("decoding histogram payload: %w", err)
	}
	// Read to the stream's end, where zlib checks the Adler-32.
	var one [1]byte
	if n, err := io.ReadAtLeast(d.zr, one[:], 1); n > 0 {
		return nil, nil, errors.New("decoding histogram: data after the payload")
	} else if err != io.EOF {
		return nil, nil, fmt.Errorf("decoding histogram payload: %w", err)
	}
	return b[:encHeaderSize], b[encHeaderSize:], nil
}

// unstore returns the data of a zlib stream made of stored (uncompressed)
// deflate blocks only, with a valid Adler-32; ok is false for any other
// stream, which the inflater then reads (and reports, if it is corrupt).
// A single block is returned in place.
func (d *HistDecoder) unstore(z []byte) (out []byte, ok bool) {
	if len(z) < 2 {
		return nil, false
	}
	cmf, flg := z[0], z[1]
	if cmf&0x0f != 8 || (uint16(cmf)<<8|uint16(flg))%31 != 0 || flg&0x20 != 0 {
		return nil, false
	}
	pos, blocks := 2, 0
	out = d.stored[:0]
	for {
		// Every block starts on a byte: the first after the header, the
		// others after a stored block's data.
		if pos+5 > len(z) || z[pos]>>1&3 != 0 {
			return nil, false
		}
		final := z[pos]&1 == 1
		n := int(binary.LittleEndian.Uint16(z[pos+1:]))
		if uint16(n) != ^binary.LittleEndian.Uint16(z[pos+3:]) || pos+5+n > len(z) {
			return nil, false
		}
		data := z[pos+5 : pos+5+n]
		pos += 5 + n
		blocks++
		if final && blocks == 1 {
			out = data
		} else {
			out = append(out, data...)
			d.stored = out
		}
		if final {
			break
		}
	}
	if pos+4 > len(z) || binary.BigEndian.Uint32(z[pos:]) != adler32.Checksum(out) {
		return nil, false
	}
	return out, true
}

// bucketRange is the value range [lo, hi] of counts index idx in an
// hdrhistogram with the given half sub-bucket count magnitude and unit
// magnitude, as hdrhistogram computes it.
func bucketRange(idx int64, halfMag, unitMag int32) (lo, hi int64, ok bool) {
	half := int64(1) << halfMag
	bucket := (idx >> halfMag) - 1
	sub := (idx & (half - 1)) + half
	if bucket < 0 {
		sub -= half
		bucket = 0
	}
	shift := bucket + int64(unitMag)
	if shift > 62 {
		return 0, 0, false
	}
	lo = sub << shift
	return lo, lo + (int64(1)<<shift - 1), true
}

// SparseOf fills dst (reusing its slices) with the populated buckets of a
// histogram of plateau's geometry (NewHist). It is much cheaper than
// hdrhistogram's Distribution, which allocates a bar per bucket up to the
// largest value.
func SparseOf(h *hdr.Histogram, dst *Sparse) {
	dst.Values, dst.High, dst.Counts, dst.Total = dst.Values[:0], dst.High[:0], dst.Counts[:0], 0
	if h.TotalCount() == 0 {
		return
	}
	// Geometry of NewHist: 3 significant digits from 1 µs.
	const halfMag, unitMag = 10, 0
	for i, c := range h.Export().Counts {
		if c == 0 {
			continue
		}
		lo, hi, ok := bucketRange(int64(i), halfMag, unitMag)
		if !ok {
			continue
		}
		dst.Values = append(dst.Values, lo)
		dst.High = append(dst.High, hi)
		dst.Counts = append(dst.Counts, c)
		dst.Total += c
	}
}
