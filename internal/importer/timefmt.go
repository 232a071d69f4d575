package importer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// TZFlag is the flag that supplies a time zone to clock formats that have
// none; error messages name it.
const TZFlag = "--tz"

// TimeFormatFlag is the flag that names a clock format; error messages that
// cannot tell a format on their own name it.
const TimeFormatFlag = "--time-format"

// ErrNoZone is wrapped by errors about wall-clock times that carry no zone
// when none was given.
var ErrNoZone = errors.New("time has no zone")

// Clock is how the import reads wall-clock times: Loc is the zone for times
// written without one (nil when the user gave none, which makes such times
// an error rather than a silent guess).
type Clock struct {
	Loc *time.Location
}

// LoadClock parses a --tz value: an IANA name ("Europe/Copenhagen"), "UTC",
// "Local", or a fixed offset ("+02:00", "-0500"). The empty string gives a
// Clock without a zone.
func LoadClock(tz string) (Clock, error) {
	if tz == "" {
		return Clock{}, nil
	}
	if t, err := time.Parse("-07:00", tz); err == nil {
		_, off := t.Zone()
		return Clock{Loc: time.FixedZone(tz, off)}, nil
	}
	if t, err := time.Parse("-0700", tz); err == nil {
		_, off := t.Zone()
		return Clock{Loc: time.FixedZone(tz, off)}, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return Clock{}, fmt.Errorf("%s %q: %w", TZFlag, tz, err)
	}
	return Clock{Loc: loc}, nil
}

// Zone returns Loc, or an error naming what needed it and the flag that
// supplies it.
func (c Clock) Zone(what string) (*time.Location, error) {
	if c.Loc == nil {
		return nil, fmt.Errorf("%s: %w; give %s (e.g. %s UTC or %s Europe/Copenhagen)", what, ErrNoZone, TZFlag, TZFlag, TZFlag)
	}
	return c.Loc, nil
}

// TimeKind is a family of clock formats.
type TimeKind int

// Clock formats.
const (
	EpochMs    TimeKind = iota // Unix milliseconds (JMeter's default)
	EpochS                     // Unix seconds, with optional fraction (nginx $msec)
	EpochUs                    // Unix microseconds
	EpochNs                    // Unix nanoseconds
	ISO8601                    // 2019-05-13T11:10:14.123+02:00, Z, or no zone with --tz
	NginxLocal                 // nginx $time_local / Apache %t: 13/May/2019:11:10:14 +0200
	Layout                     // a Go layout converted from a Java SimpleDateFormat pattern
)

// TimeParser parses one clock format. A parser caches the last second it
// parsed, so a log whose lines share seconds costs one full parse per
// second. Not safe for concurrent use: give each goroutine its own copy
// (TimeParser is a value; copies share nothing mutable).
type TimeParser struct {
	Kind   TimeKind
	layout string
	loc    *time.Location
	// cache of the seconds part of the last wall-clock time
	lastKey  [40]byte
	lastLen  int
	lastUnix int64
}

// Java SimpleDateFormat letters and their Go layout equivalents, longest
// first.
var javaLetters = []struct{ java, goLayout string }{
	{"yyyy", "2006"}, {"yy", "06"}, {"MMMM", "January"}, {"MMM", "Jan"}, {"MM", "01"}, {"M", "1"},
	{"dd", "02"}, {"d", "2"}, {"HH", "15"}, {"hh", "03"}, {"h", "3"}, {"mm", "04"}, {"m", "4"},
	{"ss", "05"}, {"s", "5"}, {"SSSSSSSSS", "000000000"}, {"SSSSSS", "000000"}, {"SSS", "000"},
	{"SS", "00"}, {"S", "0"}, {"a", "PM"}, {"EEEE", "Monday"}, {"EEE", "Mon"},
	{"XXX", "Z07:00"}, {"XX", "Z0700"}, {"X", "Z07"}, {"ZZZ", "-0700"}, {"Z", "-0700"}, {"zzz", "MST"}, {"z", "MST"},
}

// JavaLayout converts a Java SimpleDateFormat pattern (as in JMeter's
// jmeter.save.saveservice.timestamp_format) to a Go time layout.
func JavaLayout(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\'' {
			j := strings.IndexByte(p[i+1:], '\'')
			if j < 0 {
				return "", fmt.Errorf("time pattern %q: unclosed quote", p)
			}
			if j == 0 {
				b.WriteByte('\'')
			} else {
				b.WriteString(p[i+1 : i+1+j])
			}
			i += j + 2
			continue
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			matched := false
			for _, l := range javaLetters {
				if strings.HasPrefix(p[i:], l.java) {
					// A fraction needs Go's leading separator: "ss.SSS" → "05.000".
					b.WriteString(l.goLayout)
					i += len(l.java)
					matched = true
					break
				}
			}
			if !matched {
				return "", fmt.Errorf("time pattern %q: letter %q not supported", p, c)
			}
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// NewTimeParser returns a parser for format: "ms" or "epoch-ms", "s" or
// "epoch-s", "us", "ns", "iso8601", "nginx" (time_local), or a Java
// SimpleDateFormat pattern ("yyyy/MM/dd HH:mm:ss.SSS"). Formats without a zone
// take clock's; without one they are an error naming TZFlag.
func NewTimeParser(format string, clock Clock) (TimeParser, error) {
	p := TimeParser{}
	switch strings.ToLower(format) {
	case "ms", "epoch-ms", "epoch_ms":
		p.Kind = EpochMs
	case "s", "epoch-s", "epoch", "msec":
		p.Kind = EpochS
	case "us", "epoch-us":
		p.Kind = EpochUs
	case "ns", "epoch-ns":
		p.Kind = EpochNs
	case "iso8601", "iso", "rfc3339":
		p.Kind = ISO8601
		p.loc = clock.Loc // only needed for times without a zone
	case "nginx", "time_local", "clf":
		p.Kind = NginxLocal
	default:
		l, err := JavaLayout(format)
		if err != nil {
			return p, err
		}
		p.Kind, p.layout = Layout, l
		if !strings.Contains(l, "07") && !strings.Contains(l, "MST") {
			loc, err := clock.Zone(fmt.Sprintf("time format %q", format))
			if err != nil {
				return p, err
			}
			p.loc = loc
		}
	}
	return p, nil
}

// Parse returns the time in Unix nanoseconds.
func (p *TimeParser) Parse(b []byte) (int64, error) {
	switch p.Kind {
	case EpochMs:
		v, ok := parseInt(b)
		if !ok || v > math.MaxInt64/1_000_000 || v < math.MinInt64/1_000_000 {
			return 0, fmt.Errorf("bad epoch ms %q", Quote(b))
		}
		return v * 1e6, nil
	case EpochUs:
		v, ok := parseInt(b)
		if !ok || v > math.MaxInt64/1_000 || v < math.MinInt64/1_000 {
			return 0, fmt.Errorf("bad epoch µs %q", Quote(b))
		}
		return v * 1e3, nil
	case EpochNs:
		v, ok := parseInt(b)
		if !ok {
			return 0, fmt.Errorf("bad epoch ns %q", Quote(b))
		}
		return v, nil
	case EpochS:
		v, ok := ParseDecimal(b, 9)
		if !ok {
			return 0, fmt.Errorf("bad epoch seconds %q", Quote(b))
		}
		return v, nil
	case ISO8601:
		return p.parseISO(b)
	case NginxLocal:
		return p.parseNginx(b)
	default:
		t, err := time.ParseInLocation(p.layout, string(b), p.locOrUTC())
		if err != nil {
			return 0, fmt.Errorf("time %q does not match %s: %w", Quote(b), TimeFormatFlag, err)
		}
		if y := t.Year(); y < 1678 || y > 2261 { // beyond what Unix nanoseconds hold
			return 0, fmt.Errorf("time %q is out of range", Quote(b))
		}
		return t.UnixNano(), nil
	}
}

func (p *TimeParser) locOrUTC() *time.Location {
	if p.loc == nil {
		return time.UTC
	}
	return p.loc
}

// parseInt parses a non-empty run of ASCII digits with an optional sign.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg, b = true, b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	// Eight digits at a time: first the len(b) mod 8 leading ones, read
	// as one word with '0's in front when the slice's capacity allows
	// reading eight bytes, then whole words (epoch times have 10 to 19).
	var v int64
	if r := len(b) & 7; r != 0 {
		if cap(b) >= 8 {
			w := binary.LittleEndian.Uint64(b[:8])<<(64-8*r) | 0x3030303030303030>>(8*r)
			d, ok := eightDigits(w)
			if !ok {
				return 0, false
			}
			v = int64(d)
		} else {
			for _, c := range b[:r] {
				if c < '0' || c > '9' {
					return 0, false
				}
				v = v*10 + int64(c-'0')
			}
		}
		b = b[r:]
	}
	for len(b) >= 8 {
		d, ok := eightDigits(binary.LittleEndian.Uint64(b))
		if !ok {
			return 0, false
		}
		v = v*100000000 + int64(d)
		b = b[8:]
	}
	if neg {
		v = -v
	}
	return v, true
}

// eightDigits is the value of eight ASCII digits loaded little-endian
// (the first digit in the low byte), or false when a byte is not a digit.
func eightDigits(w uint64) (uint64, bool) {
	if w&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030 || (w+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030 {
		return 0, false
	}
	w = (w & 0x0f0f0f0f0f0f0f0f) * 2561 >> 8
	w = (w & 0x00ff00ff00ff00ff) * 6553601 >> 16
	return (w & 0x0000ffff0000ffff) * 42949672960001 >> 32, true
}

// ParseInt parses a decimal integer without allocating.
func ParseInt(b []byte) (int64, bool) { return parseInt(b) }

// ParseDecimal parses a non-negative decimal number such as "0.123" or "12"
// and returns it scaled by 10^scale, truncating extra fraction digits; it
// does not allocate and is exact for the fixed-point values logs write.
func ParseDecimal(b []byte, scale int) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var ip, fp int64
	i := 0
	for ; i < len(b) && b[i] != '.'; i++ {
		c := b[i]
		if c < '0' || c > '9' || i > 12 {
			return 0, false
		}
		ip = ip*10 + int64(c-'0')
	}
	digits := 0
	if i < len(b) {
		i++ // the point
		if i == len(b) && i == 1 {
			return 0, false
		}
		for ; i < len(b); i++ {
			c := b[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			if digits < scale {
				fp = fp*10 + int64(c-'0')
				digits++
			}
		}
	}
	for ; digits < scale; digits++ {
		fp *= 10
	}
	pow := int64(1)
	for range scale {
		pow *= 10
	}
	return ip*pow + fp, true
}

func digits2(b []byte) (int, bool) {
	if b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

// parseISO reads YYYY-MM-DD[T ]hh:mm:ss[.frac][Z|±hh:mm|±hhmm].
func (p *TimeParser) parseISO(b []byte) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("bad ISO 8601 time %q", Quote(b)) }
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return bad()
	}
	i := 19
	var frac int64
	if i < len(b) && (b[i] == '.' || b[i] == ',') {
		i++
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if n < 9 {
				frac = frac*10 + int64(b[i]-'0')
				n++
			}
			i++
		}
		if n == 0 {
			return bad()
		}
		for ; n < 9; n++ {
			frac *= 10
		}
	}
	zone := b[i:]
	var off int
	hasZone := true
	switch {
	case len(zone) == 0:
		hasZone = false
	case len(zone) == 1 && (zone[0] == 'Z' || zone[0] == 'z'):
	case (zone[0] == '+' || zone[0] == '-') && (len(zone) == 6 && zone[3] == ':' || len(zone) == 5 || len(zone) == 3):
		h, ok1 := digits2(zone[1:3])
		m, ok2 := 0, true
		if len(zone) == 6 {
			m, ok2 = digits2(zone[4:6])
		} else if len(zone) == 5 {
			m, ok2 = digits2(zone[3:5])
		}
		if !ok1 || !ok2 || h > 23 || m > 59 {
			return bad()
		}
		off = h*3600 + m*60
		if zone[0] == '-' {
			off = -off
		}
	default:
		return bad()
	}
	if !hasZone && p.loc == nil {
		return 0, fmt.Errorf("time %q: %w; give %s (e.g. %s UTC)", Quote(b), ErrNoZone, TZFlag, TZFlag)
	}
	// Cache on the text up to the seconds plus the zone.
	var key [40]byte
	k := copy(key[:], b[:19])
	k += copy(key[k:], zone)
	if k == p.lastLen && key == p.lastKey {
		return p.lastUnix*1e9 + frac, nil
	}
	var f [6]int
	for j, pos := range [6]int{0, 5, 8, 11, 14, 17} {
		if j == 0 {
			y1, ok1 := digits2(b[0:2])
			y2, ok2 := digits2(b[2:4])
			if !ok1 || !ok2 {
				return bad()
			}
			f[0] = y1*100 + y2
			continue
		}
		v, ok := digits2(b[pos : pos+2])
		if !ok {
			return bad()
		}
		f[j] = v
	}
	if f[0] < 1678 || f[0] > 2261 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 24 || f[4] > 59 || f[5] > 60 {
		return bad()
	}
	var t time.Time
	if hasZone {
		t = time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, time.UTC).Add(-time.Duration(off) * time.Second)
	} else {
		t = time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, p.loc)
	}
	p.lastKey, p.lastLen, p.lastUnix = key, k, t.Unix()
	return p.lastUnix*1e9 + frac, nil
}

var months = map[string]time.Month{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
	"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}

// parseNginx reads nginx $time_local and Apache %t without brackets:
// 13/May/2019:11:10:14 +0200 (Apache may add .123 or .123456 after the
// seconds with %{%d/%b/%Y:%H:%M:%S}t.%{msec_frac}t; a fraction is accepted).
func (p *TimeParser) parseNginx(b []byte) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("bad time_local %q", Quote(b)) }
	if len(b) >= 2 && b[0] == '[' && b[len(b)-1] == ']' {
		b = b[1 : len(b)-1]
	}
	if len(b) < 20 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' {
		return bad()
	}
	i := 20
	var frac int64
	if i < len(b) && b[i] == '.' {
		i++
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if n < 9 {
				frac = frac*10 + int64(b[i]-'0')
				n++
			}
			i++
		}
		for ; n < 9; n++ {
			frac *= 10
		}
	}
	zone := b[i:]
	if len(zone) != 6 || zone[0] != ' ' || (zone[1] != '+' && zone[1] != '-') {
		if len(zone) == 0 {
			return 0, fmt.Errorf("time %q: %w; give %s", Quote(b), ErrNoZone, TZFlag)
		}
		return bad()
	}
	var key [40]byte
	k := copy(key[:], b[:20])
	k += copy(key[k:], zone)
	if k == p.lastLen && key == p.lastKey {
		return p.lastUnix*1e9 + frac, nil
	}
	d, ok1 := digits2(b[0:2])
	mon, ok2 := months[string(b[3:6])]
	y1, ok3 := digits2(b[7:9])
	y2, ok4 := digits2(b[9:11])
	h, ok5 := digits2(b[12:14])
	mi, ok6 := digits2(b[15:17])
	s, ok7 := digits2(b[18:20])
	zh, ok8 := digits2(zone[2:4])
	zm, ok9 := digits2(zone[4:6])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9) || y1*100+y2 < 1678 || y1*100+y2 > 2261 || d < 1 || d > 31 || h > 24 || mi > 59 || s > 60 {
		return bad()
	}
	off := zh*3600 + zm*60
	if zone[1] == '-' {
		off = -off
	}
	t := time.Date(y1*100+y2, mon, d, h, mi, s, 0, time.UTC).Add(-time.Duration(off) * time.Second)
	p.lastKey, p.lastLen, p.lastUnix = key, k, t.Unix()
	return p.lastUnix*1e9 + frac, nil
}

// DetectEpoch picks the epoch unit of an all-digit timestamp from its
// length: 10 digits are seconds, 13 milliseconds, 16 microseconds and 19
// nanoseconds for any date between 2001 and 2286. Anything else is ambiguous
// and an error naming TimeFormatFlag.
func DetectEpoch(b []byte) (TimeKind, error) {
	if _, ok := parseInt(b); !ok {
		return 0, fmt.Errorf("%q is not an epoch number", Quote(b))
	}
	switch len(b) {
	case 10:
		return EpochS, nil
	case 13:
		return EpochMs, nil
	case 16:
		return EpochUs, nil
	case 19:
		return EpochNs, nil
	}
	return 0, fmt.Errorf("cannot tell the unit of epoch time %q; give %s ms|s|us|ns", Quote(b), TimeFormatFlag)
}

// ParseTimeFlag parses a time given on the command line (phase bounds,
// --start): RFC 3339 / ISO 8601 with or without a zone (then clock's),
// "2019-05-13_11-10-14" (reference 000's iteration table) or epoch seconds
// or milliseconds.
func ParseTimeFlag(s string, clock Clock, flag string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if k, err := DetectEpoch([]byte(s)); err == nil {
		p := TimeParser{Kind: k}
		ns, err := p.Parse([]byte(s))
		if err == nil {
			return time.Unix(0, ns), nil
		}
	}
	if len(s) == 19 && s[10] == '_' && s[13] == '-' && s[16] == '-' {
		// 2019-05-13_11-10-14
		s = s[:10] + "T" + s[11:13] + ":" + s[14:16] + ":" + s[17:19]
	}
	p := TimeParser{Kind: ISO8601, loc: clock.Loc}
	ns, err := p.Parse([]byte(s))
	if err != nil {
		if errors.Is(err, ErrNoZone) {
			return time.Time{}, fmt.Errorf("%s %q has no time zone: add one (e.g. 2019-05-13T11:10:14+02:00) or give %s", flag, s, TZFlag)
		}
		return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 time (2019-05-13T11:10:14+02:00) or epoch seconds", flag, s)
	}
	return time.Unix(0, ns), nil
}
