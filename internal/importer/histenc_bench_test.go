package importer

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkEncodeSecond(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	var l lean
	for range 100 {
		l.record(int64(1000 + r.ExpFloat64()*80000))
	}
	var e histEncoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.encode(&l); err != nil {
			b.Fatal(err)
		}
	}
}
