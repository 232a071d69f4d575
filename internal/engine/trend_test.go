package engine

import (
	"testing"
	"time"
)

func TestTrendTime(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]time.Duration{"120": 120 * time.Millisecond, " 12.5 ": 12500 * time.Microsecond,
		"1.5s": 1500 * time.Millisecond, "800us": 800 * time.Microsecond, "0": 0} {
		if d, ok := trendTime(raw); !ok || d != want {
			t.Errorf("trendTime(%q) = %v, %v; want %v", raw, d, ok, want)
		}
	}
	for _, raw := range []string{"", "fast", "-3", "-1s", "NaN", "1e300", "12 ms"} {
		if d, ok := trendTime(raw); ok {
			t.Errorf("trendTime(%q) = %v, want not a time", raw, d)
		}
	}
}

// FuzzTrendTime: any text is read as a non-negative time or refused,
// never a panic.
func FuzzTrendTime(f *testing.F) {
	for _, s := range []string{"120", "1.5s", "-1", "Inf", "9223372036854775807ms", "1e18"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if d, ok := trendTime(raw); ok && d < 0 {
			t.Fatalf("trendTime(%q) = %v", raw, d)
		}
	})
}
