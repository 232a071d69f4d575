package importer

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// CommonTimePatterns are the timestamp patterns JMeter users set in
// jmeter.save.saveservice.timestamp_format (and other tools write) that
// DetectTimeFormat recognises without --time-format, as Java
// SimpleDateFormat patterns. Day-first and month-first forms are both
// listed; when the values fit both the detection refuses to guess.
var CommonTimePatterns = []string{
	"yyyy/MM/dd HH:mm:ss.SSS", "yyyy/MM/dd HH:mm:ss", "yyyy/MM/dd HH:mm:ss,SSS",
	"yyyy-MM-dd HH:mm:ss.SSS", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss,SSS",
	"dd/MM/yyyy HH:mm:ss.SSS", "dd/MM/yyyy HH:mm:ss", "MM/dd/yyyy HH:mm:ss.SSS", "MM/dd/yyyy HH:mm:ss",
	"dd.MM.yyyy HH:mm:ss.SSS", "dd.MM.yyyy HH:mm:ss", "dd-MM-yyyy HH:mm:ss.SSS", "dd-MM-yyyy HH:mm:ss",
	"yyyy/MM/dd HH:mm:ss.SSS Z", "yyyy/MM/dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss.SSS Z", "yyyy-MM-dd HH:mm:ss Z",
	"yyyyMMddHHmmss", "yyyyMMddHHmmssSSS", "yyyyMMdd'T'HHmmss",
}

// ErrUnknownTimeFormat is returned by DetectTimeFormat when no known format
// fits the values.
var ErrUnknownTimeFormat = errors.New("unknown time format")

// DetectTimeFormat picks the clock format of a column from its first values
// (a few dozen are plenty): epoch numbers (unit from their size), ISO 8601,
// or one of CommonTimePatterns that parses every value. It returns the
// parser and the format's name ("ms", "iso8601", or the pattern). A
// pattern without a zone takes the clock's; without one the error names
// --tz. When no format fits, or two patterns fit with different meanings
// (dd/MM and MM/dd both plausible), the error names --time-format and
// quotes the first value.
func DetectTimeFormat(values [][]byte, clock Clock) (TimeParser, string, error) {
	var vals [][]byte
	for _, v := range values {
		if v = trimSpace(v); len(v) > 0 {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		p, err := NewTimeParser("ms", clock)
		return p, "ms", err
	}
	first := vals[0]
	if k, err := DetectEpoch(first); err == nil {
		p := TimeParser{Kind: k}
		return p, k.String(), nil
	}
	iso, _ := NewTimeParser("iso8601", clock)
	if looksISO(first) {
		ok := true
		var perr error
		for _, v := range vals {
			if _, err := iso.Parse(v); err != nil {
				ok, perr = false, err
				break
			}
		}
		if ok {
			return iso, "iso8601", nil
		}
		if errors.Is(perr, ErrNoZone) {
			return iso, "iso8601", perr
		}
	}
	var fits []string
	var fitTimes [][]int64
	for _, pat := range CommonTimePatterns {
		layout, err := JavaLayout(pat)
		if err != nil {
			continue
		}
		ts := make([]int64, 0, len(vals))
		for _, v := range vals {
			t, err := time.ParseInLocation(layout, string(v), time.UTC)
			if err != nil {
				ts = nil
				break
			}
			ts = append(ts, t.UnixNano())
		}
		if ts != nil {
			fits, fitTimes = append(fits, pat), append(fitTimes, ts)
		}
	}
	if len(fits) == 0 {
		return TimeParser{}, "", fmt.Errorf("%w: cannot tell the format of %q (tried epoch numbers, ISO 8601 and %s); give %s with the pattern that wrote it (JMeter's jmeter.save.saveservice.timestamp_format), e.g. %s 'yyyy/MM/dd HH:mm:ss.SSS', and %s for its zone",
			ErrUnknownTimeFormat, Quote(first), strings.Join(CommonTimePatterns, ", "), TimeFormatFlag, TimeFormatFlag, TZFlag)
	}
	for i := 1; i < len(fits); i++ {
		for j := range fitTimes[i] {
			if fitTimes[i][j] != fitTimes[0][j] {
				return TimeParser{}, "", fmt.Errorf("%w: %q fits both %q and %q, which read it differently; give %s with the right one",
					ErrUnknownTimeFormat, Quote(first), fits[0], fits[i], TimeFormatFlag)
			}
		}
	}
	p, err := NewTimeParser(fits[0], clock)
	if err != nil {
		return p, fits[0], fmt.Errorf("timestamps like %q (%s): %w", Quote(first), fits[0], err)
	}
	// The pattern fits by Go's layout; the importer's own parser also
	// bounds the time (a year 0000 fits "dd.MM.yyyy" but is no run's):
	// a pattern it cannot read every value with is not picked.
	for _, v := range vals {
		if _, err := p.Parse(v); err != nil {
			return TimeParser{}, "", fmt.Errorf("%w: %q fits %q but does not read as a time: %w", ErrUnknownTimeFormat, Quote(v), fits[0], err)
		}
	}
	return p, fits[0], nil
}

func looksISO(b []byte) bool {
	return len(b) >= 19 && b[4] == '-' && b[7] == '-' && (b[10] == 'T' || b[10] == ' ') && b[13] == ':'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// String names the kind as --time-format spells it.
func (k TimeKind) String() string {
	switch k {
	case EpochMs:
		return "ms"
	case EpochS:
		return "s"
	case EpochUs:
		return "us"
	case EpochNs:
		return "ns"
	case ISO8601:
		return "iso8601"
	case NginxLocal:
		return "nginx"
	}
	return "pattern"
}
