package plan

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a plan duration: a number with a unit ("250ms", "5s",
// "15m", "1h30m"). A bare number is an error that says to add a unit, because
// "timeout: 30" is ambiguous between seconds and milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty duration; write e.g. 5s")
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q has no unit; write %q or %q", s, s+"s", s+"ms")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write a number with a unit (ms, s, m, h), e.g. 250ms, 5s, 1h30m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// ParseRate reads an arrival rate: "200/s", "30/m", "2/h", "10/1s",
// "5/100ms". The result is per second.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return 0, fmt.Errorf("%q has no unit; write %q", s, s+"/s")
		}
		return 0, fmt.Errorf("%q is not a rate; write a count per time unit, e.g. 200/s, 30/m, 10/1s", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("bad rate %q: %q is not a number", s, strings.TrimSpace(num))
	}
	if n < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	var unit time.Duration
	switch p := strings.TrimSpace(per); p {
	case "s", "sec", "second":
		unit = time.Second
	case "m", "min", "minute":
		unit = time.Minute
	case "h", "hour":
		unit = time.Hour
	default:
		d, err := time.ParseDuration(p)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("bad rate %q: unknown unit %q (use s, m, h or a duration such as 1s)", s, p)
		}
		unit = d
	}
	return Rate(n / unit.Seconds()), nil
}

// PerSecond returns the rate as a float in iterations per second.
func (r Rate) PerSecond() float64 { return float64(r) }

// String formats the rate as "N/s".
func (r Rate) String() string {
	return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s"
}

// parseSize reads a byte count: 1048576, "64KiB", "1MiB", "1MB", "512kB".
func parseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: write bytes or a number with KiB, MiB, KB, MB", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("bad size %q: unknown unit %q (use KiB, MiB, KB, MB)", s, unit)
	}
	v := n * mult
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int(v), nil
}

// parseThink reads "1s" or "uniform(500ms, 1500ms)".
func parseThink(s string) (Think, error) {
	s = strings.TrimSpace(s)
	for _, dist := range []string{ThinkGaussian, ThinkExponential, ThinkLognormal} {
		inner, ok := strings.CutPrefix(s, dist+"(")
		if !ok {
			continue
		}
		inner, ok = strings.CutSuffix(inner, ")")
		args := strings.Split(inner, ",")
		want := map[string]string{ThinkGaussian: "gaussian(1s, 200ms)", ThinkExponential: "exponential(2s)", ThinkLognormal: "lognormal(1s, 3s)"}[dist]
		if !ok || len(args) != map[string]int{ThinkGaussian: 2, ThinkExponential: 1, ThinkLognormal: 2}[dist] {
			return Think{}, fmt.Errorf("bad think time %q: write %s", s, want)
		}
		t := Think{Dist: dist}
		var err error
		if t.Mean, err = ParseDuration(args[0]); err != nil {
			return Think{}, err
		}
		if len(args) > 1 {
			if t.Spread, err = ParseDuration(args[1]); err != nil {
				return Think{}, err
			}
		}
		switch {
		case t.Mean <= 0:
			return Think{}, fmt.Errorf("bad think time %q: the first value must be positive", s)
		case dist == ThinkLognormal && t.Spread <= t.Mean:
			return Think{}, fmt.Errorf("bad think time %q: lognormal(median, p95) needs p95 above the median", s)
		}
		return t, nil
	}
	if inner, ok := strings.CutPrefix(s, "uniform("); ok {
		inner, ok = strings.CutSuffix(inner, ")")
		a, b, ok2 := strings.Cut(inner, ",")
		if !ok || !ok2 {
			return Think{}, fmt.Errorf("bad think time %q: write uniform(500ms, 1500ms)", s)
		}
		lo, err := ParseDuration(a)
		if err != nil {
			return Think{}, err
		}
		hi, err := ParseDuration(b)
		if err != nil {
			return Think{}, err
		}
		return Think{Min: lo, Max: hi}, nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return Think{}, err
	}
	return Think{Fixed: d}, nil
}

// IsUniform reports whether the think time is drawn uniformly from
// [Min, Max] rather than fixed.
func (t *Think) IsUniform() bool { return t.Max > 0 }

// Think-time distributions besides fixed and uniform.
const (
	ThinkGaussian    = "gaussian"    // gaussian(mean, sd), cut at 0
	ThinkExponential = "exponential" // exponential(mean): Poisson arrivals per user
	ThinkLognormal   = "lognormal"   // lognormal(median, p95)
)

// String formats the think time as written in a plan.
func (t *Think) String() string {
	switch t.Dist {
	case ThinkExponential:
		return fmt.Sprintf("exponential(%s)", t.Mean)
	case ThinkGaussian, ThinkLognormal:
		return fmt.Sprintf("%s(%s, %s)", t.Dist, t.Mean, t.Spread)
	}
	if t.IsUniform() {
		return fmt.Sprintf("uniform(%s, %s)", t.Min, t.Max)
	}
	return t.Fixed.String()
}

// stopThroughputGain is the one metric a stepped load's stop_when rule can
// use: the relative throughput growth of a step over the previous one.
const stopThroughputGain = "throughput_gain"

var stopRuleRe = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*<\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$`)

// parseStopRule reads "throughput_gain < 5%".
func parseStopRule(s string) (*StopRule, error) {
	m := stopRuleRe.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("bad stop rule %q: write e.g. \"throughput_gain < 5%%\"", s)
	}
	if m[1] != stopThroughputGain {
		msg := fmt.Sprintf("unknown stop metric %q (known: %s)", m[1], stopThroughputGain)
		return nil, errors.New(msg)
	}
	pct, _ := strconv.ParseFloat(m[2], 64)
	if pct <= 0 || pct >= 100 {
		return nil, fmt.Errorf("stop threshold %s%% must be between 0%% and 100%%", m[2])
	}
	return &StopRule{Metric: m[1], Threshold: pct / 100, Text: strings.TrimSpace(s)}, nil
}

// PathElem is one step of a JSON path: an object key, or an array index when
// IsIndex is set.
type PathElem struct {
	Key     string
	Index   int
	IsIndex bool
}

// ParseJSONPath reads the JSONPath subset plans use for extraction and
// checks: "$.a.b[0].c", "$['odd key'][2]". The leading "$" may be left out
// ("a.b[0]"). Only keys and non-negative indexes are supported; that is what
// responses are tested with in practice, and it keeps lookups allocation-free.
func ParseJSONPath(p string) ([]PathElem, error) {
	s := strings.TrimSpace(p)
	if s == "" {
		return nil, errors.New("empty JSON path; write e.g. $.data.id")
	}
	if rest, ok := strings.CutPrefix(s, "$"); ok {
		s = rest
	} else {
		s = "." + s
	}
	var out []PathElem
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
			i := 0
			for i < len(s) && s[i] != '.' && s[i] != '[' {
				i++
			}
			if i == 0 {
				return nil, fmt.Errorf("bad JSON path %q: empty key", p)
			}
			out = append(out, PathElem{Key: s[:i]})
			s = s[i:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("bad JSON path %q: missing ]", p)
			}
			inner := s[1:end]
			s = s[end+1:]
			if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] {
				out = append(out, PathElem{Key: inner[1 : len(inner)-1]})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad JSON path %q: [%s] is not an index or a quoted key", p, inner)
			}
			out = append(out, PathElem{Index: n, IsIndex: true})
		default:
			return nil, fmt.Errorf("bad JSON path %q: expected . or [ at %q", p, s)
		}
	}
	return out, nil
}
