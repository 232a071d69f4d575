package httpc

import "strings"

// Small byte helpers for the parser. They work on ASCII only, as HTTP/1.1
// framing does, and never allocate.

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isTokenChar reports whether c may appear in a header name (RFC 9110 token).
func isTokenChar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldEq reports whether b equals lowerName, ignoring the case of b.
// lowerName must already be lower case.
func foldEq(b []byte, lowerName string) bool {
	if len(b) != len(lowerName) {
		return false
	}
	for i := range len(b) {
		if lower(b[i]) != lowerName[i] {
			return false
		}
	}
	return true
}

// foldEqFold reports whether b equals s, ignoring case on both sides.
func foldEqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// foldEqString is foldEqFold for two strings.
func foldEqString(a, s string) bool {
	if len(a) != len(s) {
		return false
	}
	for i := range len(a) {
		if lower(a[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// trimRight returns the end of buf[s:e] without trailing blanks.
func trimRight(buf []byte, s, e int) int {
	for e > s && (buf[e-1] == ' ' || buf[e-1] == '\t') {
		e--
	}
	return e
}

func trimLeftBytes(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func trimBytes(b []byte) []byte {
	b = trimLeftBytes(b)
	return b[:trimRight(b, 0, len(b))]
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// forTokens calls fn with each trimmed, non-empty comma-separated element.
func forTokens(v []byte, fn func([]byte)) {
	for len(v) > 0 {
		i := indexByte(v, ',')
		var t []byte
		if i < 0 {
			t, v = v, nil
		} else {
			t, v = v[:i], v[i+1:]
		}
		if t = trimBytes(t); len(t) > 0 {
			fn(t)
		}
	}
}

// parseLength parses a Content-Length value: 1 to 18 decimal digits.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// validHeader reports whether a request header can be written as is: a
// token name and a value without control characters that would end the line
// (a value taken from an earlier response could carry CR or LF).
func validHeader(name, value string) bool {
	if name == "" {
		return false
	}
	for i := range len(name) {
		if !isTokenChar(name[i]) {
			return false
		}
	}
	// IndexByte is vectorised: long tokens and cookies cost almost nothing.
	return strings.IndexByte(value, '\n') < 0 && strings.IndexByte(value, '\r') < 0 &&
		strings.IndexByte(value, 0) < 0
}
