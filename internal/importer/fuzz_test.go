package importer

import (
	"strings"
	"testing"
	"time"
)

func FuzzTimeParse(f *testing.F) {
	for _, s := range []string{"2019-05-13T11:10:14.123+02:00", "2019-05-13 11:10:14", "13/May/2019:11:10:14 +0200",
		"1557738614123", "1557738614.123", "2019-13-45T99:99:99Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, format := range []string{"iso8601", "nginx", "s", "ms", "yyyy/MM/dd HH:mm:ss.SSS"} {
			p, err := NewTimeParser(format, Clock{Loc: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = p.Parse([]byte(s))
		}
		_, _ = DetectEpoch([]byte(s))
		_, _ = ParseTimeFlag(s, Clock{}, "--start")
		_, _ = JavaLayout(s)
	})
}

func FuzzPhases(f *testing.F) {
	f.Add("name,start,end\n1,2019-05-13T11:10:14Z,2019-05-13T11:25:18Z\n")
	f.Add("iteration;threads;nodes;start;end\n1;7;2;2019-05-13_11-10-14;2019-05-13_11-25-18\n")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParsePhases(strings.NewReader(s), "fuzz.csv", Clock{Loc: time.UTC})
		if err == nil {
			for _, p := range ps {
				if !p.End.After(p.Start) {
					t.Fatalf("phase %+v accepted with end before start", p)
				}
			}
		}
	})
}

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"0.155": 155000, "12": 12000000, "1.5": 1500000, "0.0000019": 1} {
		if got, ok := ParseDecimal([]byte(in), 6); !ok || got != want {
			t.Errorf("%q → %d %v, want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", ".", "1.2.3", "-1", "1e3", "abc"} {
		if _, ok := ParseDecimal([]byte(bad), 6); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzDetectTimeFormat: detection never panics, and a format it picks
// parses the values it was picked from.
func FuzzDetectTimeFormat(f *testing.F) {
	for _, s := range []string{"2026/05/01 10:00:00", "1777629600000", "2026-05-01T10:00:00Z", "01.05.2026 10:00:00", "x", ""} {
		f.Add(s, s)
	}
	clock, _ := LoadClock("UTC")
	f.Fuzz(func(t *testing.T, a, b string) {
		p, _, err := DetectTimeFormat([][]byte{[]byte(a), []byte(b)}, clock)
		if err != nil {
			return
		}
		for _, v := range []string{a, b} {
			if v = strings.TrimSpace(v); v == "" || p.Kind <= EpochNs {
				continue
			}
			if _, err := p.Parse([]byte(v)); err != nil {
				t.Errorf("picked %v for %q, %q but cannot parse %q: %v", p.Kind, a, b, v, err)
			}
		}
	})
}

// FuzzParseInt checks ParseInt, which reads eight digits at a time, against
// a digit-by-digit reading (wrapping the same way on overflow).
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-1", "1557738614123", "12345678", "123456789", "9223372036854775807",
		"-9223372036854775808", "1234567x", "12345678901234567890", "", "-", "1:345678", "123/5678"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := ParseInt(b)
		// The same digits followed by other bytes within the capacity
		// (ParseInt may read them and must ignore them).
		padded := append(append([]byte(nil), b...), "9x-\x00 9999"...)[:len(b)]
		if g2, ok2 := ParseInt(padded); g2 != got || ok2 != ok {
			t.Fatalf("ParseInt(%q) = %d, %v, but %d, %v with bytes after it", b, got, ok, g2, ok2)
		}
		want, wok := int64(0), len(b) > 0 && len(b) <= 19
		d := b
		if wok && d[0] == '-' {
			d = d[1:]
			wok = len(d) > 0
		}
		for _, c := range d {
			if c < '0' || c > '9' {
				wok = false
				break
			}
			want = want*10 + int64(c-'0')
		}
		if wok && b[0] == '-' {
			want = -want
		}
		if ok != wok || ok && got != want {
			t.Fatalf("ParseInt(%q) = %d, %v; want %d, %v", b, got, ok, want, wok)
		}
	})
}
