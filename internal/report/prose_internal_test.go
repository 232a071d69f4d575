package report

import "testing"

func TestSentence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"7 errors in 3,200 requests", "most frequent: HTTP 503", ""}, "7 errors in 3,200 requests; most frequent: HTTP 503."},
		{[]string{"", "  ", ";"}, ""},
		{[]string{"web in 1 KiB/s;", "", "db out 2 KiB/s, "}, "Web in 1 KiB/s; db out 2 KiB/s."},
		{[]string{"held.", ""}, "Held."},
		{[]string{"ends with a question?"}, "Ends with a question?"},
	} {
		if got := sentence(c.in...); got != c.want {
			t.Errorf("sentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := sentences("each point is one phase", "", "the vertical line marks the knee."); got != "Each point is one phase. The vertical line marks the knee." {
		t.Errorf("sentences = %q", got)
	}
}

func TestSignedMs(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{-0.2: "−0.20 ms", -0.001: "0 ms", 0: "0 ms", 12.4: "+12.4 ms", -150: "−150 ms"} {
		if got := signedMs(v); got != want {
			t.Errorf("signedMs(%v) = %q, want %q", v, got, want)
		}
	}
}
