package plan

import (
	"math"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"250ms", 250 * time.Millisecond, ""},
		{"5s", 5 * time.Second, ""},
		{"15m", 15 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{" 2s ", 2 * time.Second, ""},
		{"30", 0, `"30" has no unit; write "30s" or "30ms"`},
		{"0", 0, "has no unit"},
		{"1.5", 0, "has no unit"},
		{"5 seconds", 0, "is not a duration"},
		{"-1s", 0, "is negative"},
		{"", 0, "empty duration"},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseDuration(%q) err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want float64
		err  string
	}{
		{"200/s", 200, ""},
		{"30/m", 30.0 / 60, ""},
		{"7200/h", 2, ""},
		{"10/1s", 10, ""},
		{"5/100ms", 50, ""},
		{"0.5/s", 0.5, ""},
		{"0/s", 0, ""},
		{"200", 0, `"200" has no unit; write "200/s"`},
		{"fast", 0, "is not a rate"},
		{"x/s", 0, "is not a number"},
		{"1/fortnight", 0, "unknown unit"},
		{"-1/s", 0, "is negative"},
		{"NaN/s", 0, "is not a number"},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRate(%q) err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || math.Abs(got.PerSecond()-c.want) > 1e-12 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// TestRateRoundTrip: a rate printed by String parses back to itself.
func TestRateRoundTrip(t *testing.T) {
	t.Parallel()
	f := func(n uint32) bool {
		r := Rate(float64(n) / 8)
		back, err := ParseRate(r.String())
		return err == nil && back == r
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	cases := map[string]int{"1048576": 1 << 20, "64KiB": 64 << 10, "1MiB": 1 << 20, "1MB": 1000000, "512kB": 512000, "0": 0}
	for in, want := range cases {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "1 parsec", "9GiB"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

func TestParseThink(t *testing.T) {
	t.Parallel()
	if th, err := parseThink("uniform(500ms, 1500ms)"); err != nil || th.Min != 500*time.Millisecond || th.Max != 1500*time.Millisecond || !th.IsUniform() {
		t.Errorf("uniform: %+v %v", th, err)
	}
	if th, err := parseThink("1s"); err != nil || th.Fixed != time.Second || th.IsUniform() || th.String() != "1s" {
		t.Errorf("fixed: %+v %v", th, err)
	}
	for _, bad := range []string{"uniform(1s)", "uniform(1s, 2)", "uniform(1s, 2s", "soon"} {
		if _, err := parseThink(bad); err == nil {
			t.Errorf("parseThink(%q) accepted", bad)
		}
	}
}

func TestParseStopRule(t *testing.T) {
	t.Parallel()
	r, err := parseStopRule("throughput_gain < 5%")
	if err != nil || r.Metric != "throughput_gain" || r.Threshold != 5.0/100 {
		t.Errorf("rule: %+v %v", r, err)
	}
	if r, err := parseStopRule(" throughput_gain<2.5 % "); err != nil || r.Threshold != 2.5/100 {
		t.Errorf("spacing: %+v %v", r, err)
	}
	for in, want := range map[string]string{
		"throughput_gain > 5%":   "bad stop rule",
		"throughput_gain < 0.05": "bad stop rule",
		"p95_gain < 5%":          `unknown stop metric "p95_gain"`,
		"throughput_gain < 0%":   "between 0% and 100%",
		"throughput_gain < 150%": "between 0% and 100%",
	} {
		if _, err := parseStopRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseStopRule(%q) err = %v, want %q", in, err, want)
		}
	}
}

func TestParseJSONPath(t *testing.T) {
	t.Parallel()
	got, err := ParseJSONPath("$.a.b[0]['odd key'][12].c")
	want := []PathElem{{Key: "a"}, {Key: "b"}, {Index: 0, IsIndex: true}, {Key: "odd key"}, {Index: 12, IsIndex: true}, {Key: "c"}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("elem %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if p, err := ParseJSONPath("a.b"); err != nil || len(p) != 2 || p[1].Key != "b" {
		t.Errorf("without $: %+v %v", p, err)
	}
	if p, err := ParseJSONPath("$"); err != nil || len(p) != 0 {
		t.Errorf("root: %+v %v", p, err)
	}
	for _, bad := range []string{"", "$..a", "$.a[", "$.a[-1]", "$.a[x]", "$a", "$.a."} {
		if _, err := ParseJSONPath(bad); err == nil {
			t.Errorf("ParseJSONPath(%q) accepted", bad)
		}
	}
}

func TestScanTemplate(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want, err string }{
		{"plain", "L(plain)", ""},
		{"/a/${id}/b", "L(/a/)V(id)L(/b)", ""},
		{"${a}${b}", "V(a)V(b)", ""},
		{"$${lit} $x ${ sp }", "L(${lit} $x )V(sp)", ""},
		{"$$${x}", "L($${x})", ""}, // "$", then the escape "$${"
		{"${", "", "unterminated"},
		{"a ${}", "", "empty ${}"},
	}
	for _, c := range cases {
		pieces, _, msg := scanTemplate(c.in)
		if c.err != "" {
			if !strings.Contains(msg, c.err) {
				t.Errorf("scanTemplate(%q) msg = %q, want %q", c.in, msg, c.err)
			}
			continue
		}
		var b strings.Builder
		for _, p := range pieces {
			if p.ref != nil {
				b.WriteString("V(" + p.ref.name + ")")
			} else {
				b.WriteString("L(" + p.lit + ")")
			}
		}
		if b.String() != c.want {
			t.Errorf("scanTemplate(%q) = %s, want %s", c.in, b.String(), c.want)
		}
	}
}

func TestAppendJSONEscaped(t *testing.T) {
	t.Parallel()
	in := "a\"b\\c\nd\te\x01f\u2028g é"
	got := string(appendJSONEscaped(nil, in))
	want := `a\"b\\c\nd\te\u0001f\u2028g é`
	if got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	keys := []string{"users", "ramp_up", "duration", "iterations", "rate"}
	for in, want := range map[string]string{"usres": "users", "Users": "users", "duraton": "duration", "rampup": "ramp_up", "zzz": "", "x": ""} {
		if got := suggest(in, keys); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
