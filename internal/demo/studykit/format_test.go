package studykit

import "testing"

// Times in the reference tables: whole from 100 ms as the references
// print them, about three significant figures below, where whole
// milliseconds would print demo 004's 2.38 ms and 2.62 ms averages both
// as "2".
func TestMs(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{1868.4, "1868"}, {2388, "2388"}, {155.4, "155"}, {100, "100"},
		{42.71, "42.7"}, {2.384, "2.38"}, {2.62, "2.62"}, {7, "7"}, {0.42, "0.42"}, {0, "0"},
	} {
		if got := Ms(tc.v); got != tc.want {
			t.Errorf("Ms(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    float64
		want string
	}{{12.34, "+12.3"}, {-0.42, "-0.42"}, {0.001, "0"}, {-0.001, "0"}, {250.4, "+250"}, {0, "0"}} {
		if got := SignedMs(tc.v); got != tc.want {
			t.Errorf("SignedMs(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
