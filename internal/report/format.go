package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/locale"
)

// Number formatting shared by every section, so a value reads the same in
// the summary bullets, the tables and the conclusions.

// ms formats a time in milliseconds with precision that fits its size:
// "0.42", "8.31", "42.7", "155", "1,104".
func ms(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "0"
	case v == math.Trunc(v):
		// A whole number of milliseconds (an access log's or Locust's
		// integer data, a source tool's rounded percentile) is printed
		// whole: "3 ms", never digits the data do not have ("3.00 ms").
		return thousands(int64(v))
	case math.Abs(v) < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case math.Abs(v) < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return thousands(int64(math.Round(v)))
}

// Ms is a time in milliseconds at the report's precision (about three
// significant figures: "0.42", "8.31", "42.7", "155", "1,104"), for
// documents laid out apart from the report's sections (a study's
// reference tables) that print times as the report does.
func Ms(v float64) string { return ms(v) }

// msU is ms with its unit.
func msU(v float64) string { return ms(v) + " ms" }

// signedMs is a signed time with its unit at the precision of ms: "+12 ms",
// "−0.42 ms"; a value that rounds to zero is "0 ms", never "-0 ms".
func signedMs(v float64) string {
	t := ms(math.Abs(v))
	switch {
	case t == "0" || t == "0.00":
		return "0 ms"
	case v < 0:
		return "−" + t + " ms"
	}
	return "+" + t + " ms"
}

// rate formats a throughput ("20.4", "1,023", "0.25").
func rate(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "0"
	case math.Abs(v) < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case math.Abs(v) < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return thousands(int64(math.Round(v)))
}

// rps is a throughput with its unit.
func rps(v float64) string { return rate(v) + " req/s" }

// pct formats a percentage: "0 %", "0.01 %", "12.3 %", "100 %".
func pct(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "0 %"
	case math.Abs(v) < 0.01:
		return strconv.FormatFloat(v, 'g', 2, 64) + " %"
	case math.Abs(v) < 10:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64)) + " %"
	case math.Abs(v) < 100:
		return trimZeros(strconv.FormatFloat(v, 'f', 1, 64)) + " %"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " %"
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// count formats an integer with thousands separators.
func count(n int64) string { return thousands(n) }

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dur formats a duration for tables: "45s", "15m 04s", "10h 00m"; a span
// shorter than a second in milliseconds ("74 ms"), never "0s" for a run
// that took time.
func dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d > 0 && d < 500*time.Millisecond {
		return msU(float64(d.Round(time.Millisecond)) / float64(time.Millisecond))
	}
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// offset formats a time as an offset from the run start: "5h 02m".
func offset(t, start time.Time) string { return dur(t.Sub(start)) }

// clock formats a wall time in the run's own zone.
func clock(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Format("2006-01-02 15:04:05")
}

// hms formats a wall time of day.
func hms(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Format("15:04:05")
}

// bytesU formats a byte count in binary units: "512 B", "3.2 MiB".
func bytesU(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	return num3(v) + " " + units[i]
}

// num3 formats a value with about three significant digits.
func num3(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "0"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return thousands(int64(v)) // a count stays whole: "12 of 12", not "12.0 of 12.0"
	case math.Abs(v) >= 1000:
		return thousands(int64(math.Round(v)))
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 0.01:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// valueU formats a monitor value in its unit.
func valueU(v float64, unit string) string {
	switch unit {
	case "bytes", "B":
		return bytesU(v)
	case "bytes/s", "B/s":
		return bytesU(v) + "/s"
	case "%":
		return num3(v) + " %"
	case "":
		return num3(v)
	case "KB", "kB", "KiB":
		return bytesU(v * 1024)
	}
	return num3(v) + " " + unit
}

// plural returns "1 error" / "3 errors".
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return count(n) + " " + word + "s"
}

// joinAnd joins words as "a, b and c".
func joinAnd(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// numbers formats values in the document's language: each method is the
// function of the same name above, with the language's separators (a
// Danish report writes "1.104,5 ms"). The builder embeds it, so a section
// writes b.ms(v) and reads in its reader's language.
type numbers struct{ loc *locale.Locale }

func (n numbers) ms(v float64) string               { return n.loc.Num(ms(v)) }
func (n numbers) msU(v float64) string              { return n.loc.Num(msU(v)) }
func (n numbers) signedMs(v float64) string         { return n.loc.Num(signedMs(v)) }
func (n numbers) rate(v float64) string             { return n.loc.Num(rate(v)) }
func (n numbers) rps(v float64) string              { return n.loc.T("%s req/s", n.rate(v)) }
func (n numbers) pct(v float64) string              { return n.loc.Num(pct(v)) }
func (n numbers) count(v int64) string              { return n.loc.Num(count(v)) }
func (n numbers) thousands(v int64) string          { return n.loc.Num(thousands(v)) }
func (n numbers) bytesU(v float64) string           { return n.loc.Num(bytesU(v)) }
func (n numbers) num3(v float64) string             { return n.loc.Num(num3(v)) }
func (n numbers) fmtNum(v float64) string           { return n.loc.Num(fmtNum(v)) }
func (n numbers) valueU(v float64, u string) string { return n.loc.Num(valueU(v, u)) }
func (n numbers) clock(t time.Time) string          { return n.loc.DateTime(t) }
func (n numbers) hms(t time.Time) string            { return n.loc.Clock(t) }

// plural is "1 error" / "3 errors" in the document's language: word is
// the English singular, translated with its plural by the catalogue.
func (n numbers) plural(c int64, word string) string {
	if n.loc.English() {
		return plural(c, word)
	}
	if c == 1 {
		return "1 " + n.loc.Word(word)
	}
	return n.count(c) + " " + n.loc.Word(word+"s")
}

// joinAnd joins words as "a, b and c" in the document's language.
func (n numbers) joinAnd(ws []string) string { return n.loc.And(ws) }

// T is a message of the catalogue in the document's language, its
// arguments filled in (key is a fmt format).
func (n numbers) T(key string, args ...any) string { return n.loc.T(key, args...) }

// W is a message without arguments (a heading, a column name, a word) in
// the document's language.
func (n numbers) W(key string) string { return n.loc.Word(key) }
