package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestHistEncoderMatchesLibrary encodes histograms of many shapes with one
// reused HistEncoder and checks each encoding byte for byte against the
// library's Encode, and that it decodes to an equal histogram.
func TestHistEncoderMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var e HistEncoder
	for i := range 200 {
		h := NewHist()
		switch i % 4 {
		case 0: // empty
		case 1:
			recordUs(h, 1+r.Int64N(5))
		case 2:
			for range 1 + r.IntN(5000) {
				recordUs(h, int64(1+r.ExpFloat64()*float64(1+r.IntN(100000))))
			}
		case 3:
			_ = h.RecordValues(HistHighestUs, 1+r.Int64N(1<<40))
			_ = h.RecordValues(1, 3)
		}
		want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Fatalf("histogram %d (%d values): encoding differs from the library's\n got %s\nwant %s", i, h.TotalCount(), got, want)
		}
		back, err := DecodeHist(got)
		if err != nil || !back.Equals(h) {
			t.Fatalf("histogram %d: decodes to a different histogram (%v)", i, err)
		}
	}
}

// BenchmarkEncodeHist compares a reused HistEncoder, compressing and stored
// (what run directories hold), with the library's Encode on a histogram of
// 5,000 values.
func BenchmarkEncodeHist(b *testing.B) {
	h := NewHist()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		recordUs(h, int64(100+r.ExpFloat64()*2000))
	}
	b.Run("reused", func(b *testing.B) {
		var e HistEncoder
		b.ReportAllocs()
		for range b.N {
			if _, err := e.Encode(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stored", func(b *testing.B) {
		var e HistEncoder
		b.ReportAllocs()
		for range b.N {
			if _, err := e.EncodeStored(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEncodeStored: the stored form decodes to the same histogram through
// the library (any HdrHistogram reader takes it) and through HistDecoder's
// in-place path, including a payload longer than one stored block.
func TestEncodeStored(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var e HistEncoder
	var dec HistDecoder
	var sp Sparse
	for i := range 120 {
		h := NewHist()
		switch i % 4 {
		case 0: // empty
		case 1:
			recordUs(h, 1+r.Int64N(5))
		case 2:
			for range 1 + r.IntN(5000) {
				recordUs(h, int64(1+r.ExpFloat64()*float64(1+r.IntN(100000))))
			}
		case 3: // every bucket, large counts: a payload of several 64 KiB blocks
			for idx := int64(0); ; idx++ {
				lo, _, ok := bucketRange(idx, 10, 0)
				if !ok || lo > HistHighestUs {
					break
				}
				_ = h.RecordValues(lo, 1<<40+r.Int64N(1<<40))
			}
		}
		s, err := e.EncodeStored(h)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := hdr.Decode([]byte(s))
		if err != nil || !lib.Equals(h) {
			t.Fatalf("histogram %d: the library decodes it to a different histogram (%v)", i, err)
		}
		before := dec.Stored
		if err := dec.Decode(s, &sp); err != nil {
			t.Fatalf("histogram %d: %v", i, err)
		}
		if dec.Stored != before+1 {
			t.Fatalf("histogram %d: decoded by inflating, not in place", i)
		}
		back := NewHist()
		sp.AddTo(back)
		if !back.Equals(h) || sp.Total != h.TotalCount() {
			t.Fatalf("histogram %d: decodes to a different histogram", i)
		}
	}
}

// TestStoredFromZlib: a stored stream written by compress/zlib at
// NoCompression (the importers' writer: a data block, then an empty final
// one) is read in place; a stored stream with a wrong checksum is left to
// the inflater, which reports it.
func TestStoredFromZlib(t *testing.T) {
	h := NewHist()
	for v := range int64(3000) {
		recordUs(h, 100+v*v%7919)
	}
	var e HistEncoder
	raw := append([]byte(nil), e.encodeRaw(h)...)
	var zb bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&zb, zlib.NoCompression)
	zw.Write(raw)
	zw.Close()
	wrap := func(z []byte) string {
		b := binary.BigEndian.AppendUint32(nil, uint32(v2CompressedCookie|0x10))
		b = binary.BigEndian.AppendUint32(b, uint32(len(z)))
		return base64.StdEncoding.EncodeToString(append(b, z...))
	}
	var dec HistDecoder
	var sp Sparse
	if err := dec.Decode(wrap(zb.Bytes()), &sp); err != nil || dec.Stored != 1 || sp.Total != h.TotalCount() {
		t.Fatalf("zlib's stored stream: err %v, in place %d, total %d of %d", err, dec.Stored, sp.Total, h.TotalCount())
	}
	bad := AppendStoredZlib(nil, raw)
	bad[len(bad)-1] ^= 1
	err := dec.Decode(wrap(bad), &sp)
	if err == nil || dec.Stored != 1 || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("a stored stream with a bad checksum: %v (in place %d)", err, dec.Stored)
	}
}
