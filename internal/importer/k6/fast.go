package k6

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// fastPoint decodes a Point line laid out as k6's JSON output writes it —
//
//	{"metric":"M","type":"Point","data":{"time":"T","value":V,"tags":{"k":"v",…}}}
//
// — without encoding/json's reflection, which was nearly all of plateau's
// CPU beside a k6 run (docs/performance.md). It accepts only that layout
// with plain strings (no escapes) and a JSON number; for anything else it
// returns false and the caller decodes the line with encoding/json, the
// reference it is tested against (fast_test.go). Without withTags the
// tags are not read (they are left empty; the metrics counted by value
// alone need none), only the line's end is checked.
func fastPoint(raw []byte, p *point, val *float64, withTags bool) bool {
	rest, ok := bytes.CutPrefix(raw, pointPrefix)
	if !ok {
		return false
	}
	var metric, tm []byte
	if metric, rest, ok = plainString(rest); !ok {
		return false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"type":"Point","data":{"time":"`)); !ok {
		return false
	}
	if tm, rest, ok = plainString(rest); !ok {
		return false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"value":`)); !ok {
		return false
	}
	n := numberLen(rest)
	if n == 0 {
		return false
	}
	v, err := strconv.ParseFloat(string(rest[:n]), 64)
	if err != nil {
		return false
	}
	rest = rest[n:]
	*p = point{}
	p.Metric, p.Type = intern(metric), "Point"
	p.rawTime = tm // parsed from the line's bytes, not copied
	*val = v
	p.Data.Value = val
	var last []byte  // the tag value converted last, and its string:
	var lastS string // a name k6 took from the URL is the URL again
	switch {
	case !withTags:
		return bytes.HasPrefix(rest, []byte(`,"tags":`)) && bytes.HasSuffix(rest, []byte("}}"))
	case bytes.HasPrefix(rest, []byte(`,"tags":null}}`)):
		rest = rest[len(`,"tags":null`):]
	case bytes.HasPrefix(rest, []byte(`,"tags":{`)):
		rest = rest[len(`,"tags":{`):]
		if len(rest) > 0 && rest[0] == '}' {
			rest = rest[1:]
			break
		}
		for {
			var k, s []byte
			if len(rest) == 0 || rest[0] != '"' {
				return false
			}
			if k, rest, ok = plainString(rest[1:]); !ok {
				return false
			}
			if rest, ok = bytes.CutPrefix(rest, []byte(`:"`)); !ok {
				return false
			}
			if s, rest, ok = plainString(rest); !ok {
				return false
			}
			if !bytes.Equal(s, last) || last == nil {
				last, lastS = s, intern(s)
			}
			setTag(p, k, lastS)
			if len(rest) == 0 {
				return false
			}
			if rest[0] == '}' {
				rest = rest[1:]
				break
			}
			if rest[0] != ',' {
				return false
			}
			rest = rest[1:]
		}
	default:
		return false
	}
	return string(rest) == "}}"
}

// plainString reads a JSON string's body up to its closing quote when it
// holds no escape and no control character; rest is what follows the
// quote.
func plainString(b []byte) (s, rest []byte, ok bool) {
	wide := false
	for i, c := range b {
		switch {
		case c == '"':
			// encoding/json replaces invalid UTF-8: leave that to it.
			if wide && !utf8.Valid(b[:i]) {
				return nil, nil, false
			}
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, nil, false
		case c >= 0x80:
			wide = true
		}
	}
	return nil, nil, false
}

// numberLen is the length of the JSON number b starts with, 0 when it
// does not start with one (JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
func numberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	return i
}

// setTag sets the tags the import reads; others are skipped, as
// encoding/json skips fields the struct does not have. JSON's own
// matching of keys is case-insensitive, so the keys are compared the same
// way (k6 writes them in lower case).
func setTag(p *point, k []byte, v string) {
	t := &p.Data.Tags
	var dst *string
	switch {
	case bytes.EqualFold(k, []byte("name")):
		dst = &t.Name
	case bytes.EqualFold(k, []byte("url")):
		dst = &t.URL
	case bytes.EqualFold(k, []byte("method")):
		dst = &t.Method
	case bytes.EqualFold(k, []byte("status")):
		dst = &t.Status
	case bytes.EqualFold(k, []byte("expected_response")):
		dst = &t.ExpectedResponse
	case bytes.EqualFold(k, []byte("error")):
		dst = &t.Error
	case bytes.EqualFold(k, []byte("error_code")):
		dst = &t.ErrorCode
	case bytes.EqualFold(k, []byte("group")):
		dst = &t.Group
	case bytes.EqualFold(k, []byte("check")):
		dst = &t.Check
	default:
		return
	}
	*dst = v
}

// intern returns the string of b, without a copy for the values k6
// writes on every line (metric names, methods, statuses, flags).
func intern(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "http_req_duration":
		return "http_req_duration"
	case "http_req_failed":
		return "http_req_failed"
	case "iterations":
		return "iterations"
	case "vus":
		return "vus"
	case "group_duration":
		return "group_duration"
	case "checks":
		return "checks"
	case "true":
		return "true"
	case "false":
		return "false"
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "PATCH":
		return "PATCH"
	case "HEAD":
		return "HEAD"
	case "OPTIONS":
		return "OPTIONS"
	case "200":
		return "200"
	case "201":
		return "201"
	case "204":
		return "204"
	case "304":
		return "304"
	case "400":
		return "400"
	case "404":
		return "404"
	case "500":
		return "500"
	case "0":
		return "0"
	}
	return string(b)
}
