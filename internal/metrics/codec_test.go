package metrics

import (
	"math/rand/v2"
	"reflect"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The fast decoder agrees with hdrhistogram-go's own decoder bucket by
// bucket, and percentiles agree, on random histograms of plateau's geometry.
func TestHistDecoderMatchesLibrary(t *testing.T) {
	var dec HistDecoder
	var sp Sparse
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		h := NewHist()
		n := rng.IntN(5000)
		for i := 0; i < n; i++ {
			recordUs(h, int64(rng.ExpFloat64()*float64(rng.IntN(1_000_000)+1)))
		}
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := dec.Decode(enc, &sp); err != nil {
			t.Fatal(err)
		}
		if sp.Total != h.TotalCount() {
			t.Fatalf("total %d, want %d", sp.Total, h.TotalCount())
		}
		back := NewHist()
		sp.AddTo(back)
		if !back.Equals(h) {
			t.Fatalf("trial %d: decoded histogram differs", trial)
		}
		for _, p := range []float64{50, 90, 95, 99, 99.9, 100} {
			if got, want := sp.ValueAtPercentile(p), h.ValueAtPercentile(p); got != want && n > 0 {
				t.Fatalf("trial %d p%v: %d, want %d", trial, p, got, want)
			}
		}
		if dec.Stored != 0 {
			t.Fatalf("trial %d: a compressed histogram was taken for a stored one", trial)
		}
		ref, err := hdr.Decode([]byte(enc))
		if err != nil || !ref.Equals(h) {
			t.Fatalf("library round trip: %v", err)
		}
	}
}

func FuzzHistDecoder(f *testing.F) {
	h := NewHist()
	recordUs(h, 1234)
	enc, _ := EncodeHist(h)
	f.Add(enc)
	f.Add("HISTFAAAAB")
	var e HistEncoder
	stored, _ := e.EncodeStored(h)
	f.Add(stored)
	f.Fuzz(func(t *testing.T, s string) {
		var dec HistDecoder
		var sp Sparse
		_ = dec.Decode(s, &sp) // must not panic
	})
}

func BenchmarkHistDecoder(b *testing.B) {
	h := NewHist()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		recordUs(h, int64(rng.ExpFloat64()*50_000))
	}
	enc, _ := EncodeHist(h)
	b.Run("plateau", func(b *testing.B) {
		var dec HistDecoder
		var sp Sparse
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := dec.Decode(enc, &sp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hdrhistogram-go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := hdr.DecodePacked([]byte(enc)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSparseOf checks SparseOf against hdrhistogram's own Distribution.
func TestSparseOf(t *testing.T) {
	h := NewHist()
	for _, v := range []int64{1, 2, 999, 1000, 2047, 2048, 2049, 4097, 123456, 9999999, HistHighestUs} {
		for range v%7 + 1 {
			recordUs(h, v)
		}
	}
	var want Sparse
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			want.Values = append(want.Values, b.From)
			want.High = append(want.High, b.To)
			want.Counts = append(want.Counts, b.Count)
			want.Total += b.Count
		}
	}
	var got Sparse
	SparseOf(h, &got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SparseOf\n got %+v\nwant %+v", got, want)
	}
}
