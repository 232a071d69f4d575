package study001

import "testing"

// The longevity table's delta is at the precision of its two averages:
// 9.1 → 6.8 ms is -2.3, where whole milliseconds read "-2".
func TestSignedF1(t *testing.T) {
	for v, want := range map[float64]string{-2.3: "-2.3", 23.7: "+23.7", 0.04: "0", -0.04: "0", 1701.26: "+1701.3"} {
		if got := signedF1(v); got != want {
			t.Errorf("signedF1(%v) = %q, want %q", v, got, want)
		}
	}
}
