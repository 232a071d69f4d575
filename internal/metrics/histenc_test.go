package metrics

import (
	"math/rand/v2"
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

// BenchmarkEncodeHist compares a reused HistEncoder with EncodeHist (a new
// encoder each time, like the library) on a histogram of 5,000 values.
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
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}
