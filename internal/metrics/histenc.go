package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// HistEncoder writes histograms in the form of EncodeHist, byte for byte,
// reusing its buffers and its zlib compressor between calls. The library's
// Encode builds a new zlib writer at the best compression for each
// histogram (about 1 MB of compressor state) and allocates per bucket; the
// engine encodes every label's histogram every second, and those
// allocations were a tenth of the generator's CPU at 5,000 requests/s
// (through the garbage collector). The zero value is ready; not safe for
// concurrent use.
type HistEncoder struct {
	raw bytes.Buffer // the uncompressed V2 encoding
	z   bytes.Buffer // cookie, length, zlib stream
	zw  *zlib.Writer
	zs  []byte // cookie, length, stored zlib stream
	out []byte
}

// Encode returns h's compressed base64 V2 encoding, byte for byte the
// library's (best compression).
func (e *HistEncoder) Encode(h *hdr.Histogram) (string, error) {
	b := e.encodeRaw(h)
	e.z.Reset()
	e.z.Write(b[:8]) // room for the outer cookie and length
	if e.zw == nil {
		zw, err := zlib.NewWriterLevel(&e.z, zlib.BestCompression)
		if err != nil {
			return "", err
		}
		e.zw = zw
	} else {
		e.zw.Reset(&e.z)
	}
	if _, err := e.zw.Write(b); err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	zb := e.z.Bytes()
	binary.BigEndian.PutUint32(zb[0:], uint32(v2CompressedCookie|0x10))
	binary.BigEndian.PutUint32(zb[4:], uint32(len(zb)-8))
	e.out = base64.StdEncoding.AppendEncode(e.out[:0], zb)
	return string(e.out), nil
}

// EncodeStored returns h's V2 encoding in the same "HISTFAAA…" form, its
// zlib stream made of stored (uncompressed) deflate blocks: any HdrHistogram
// library reads it, and HistDecoder reads it without inflating — building
// the Huffman tables of a stream per histogram was most of the cost of
// reading a long run. This is the form run directories hold (importers
// wrote it before the engine did); it costs about a third more bytes.
func (e *HistEncoder) EncodeStored(h *hdr.Histogram) (string, error) {
	b := e.encodeRaw(h)
	z := binary.BigEndian.AppendUint32(e.zs[:0], uint32(v2CompressedCookie|0x10))
	z = append(z, 0, 0, 0, 0) // the zlib stream's length, below
	z = AppendStoredZlib(z, b)
	binary.BigEndian.PutUint32(z[4:], uint32(len(z)-8))
	e.zs = z
	e.out = base64.StdEncoding.AppendEncode(e.out[:0], z)
	return string(e.out), nil
}

// AppendStoredZlib appends data as a zlib stream of stored deflate blocks
// (RFC 1950/1951: header 0x78 0x01, blocks of at most 65,535 bytes, Adler-32).
func AppendStoredZlib(dst, data []byte) []byte {
	dst = append(dst, 0x78, 0x01)
	sum := adler32.Checksum(data)
	for {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		dst = append(dst, final)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n))
		dst = binary.LittleEndian.AppendUint16(dst, ^uint16(n))
		dst = append(dst, data[:n]...)
		data = data[n:]
		if final == 1 {
			break
		}
	}
	return binary.BigEndian.AppendUint32(dst, sum)
}

// encodeRaw writes h's uncompressed V2 encoding into e.raw and returns it.
func (e *HistEncoder) encodeRaw(h *hdr.Histogram) []byte {
	counts := h.Export().Counts
	limit := len(counts)
	for limit > 0 && counts[limit-1] == 0 {
		limit--
	}
	if h.TotalCount() == 0 {
		limit = 1 // the library writes the bucket of Max() = 0
	}
	e.raw.Reset()
	var hd [40]byte
	binary.BigEndian.PutUint32(hd[0:], uint32(v2Cookie|0x10)) // as hdrhistogram-go and Java write it
	// hd[4:8], the payload length, is filled in below.
	binary.BigEndian.PutUint32(hd[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(hd[12:], uint32(h.SignificantFigures()))
	binary.BigEndian.PutUint64(hd[16:], uint64(h.LowestTrackableValue()))
	binary.BigEndian.PutUint64(hd[24:], uint64(h.HighestTrackableValue()))
	binary.BigEndian.PutUint64(hd[32:], math.Float64bits(1.0))
	e.raw.Write(hd[:])
	// ZigZag LEB128 (binary.PutVarint): the library's 9-byte form differs
	// only for counts of 2^56 and more.
	var tmp [binary.MaxVarintLen64]byte
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.raw.Write(tmp[:binary.PutVarint(tmp[:], c)])
	}
	b := e.raw.Bytes()
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)-40))
	return b
}
