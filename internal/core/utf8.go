package core

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// EscapeBytes returns s with every byte that is not part of valid UTF-8
// written as the four characters \xNN (lower-case hex), so a name in
// Latin-1 or another legacy encoding keeps its bytes in JSON and in the
// report instead of turning into U+FFFD. Valid text is returned as it is.
func EscapeBytes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// HasEscapedBytes reports whether s holds a byte EscapeBytes escaped:
// \x followed by two lower-case hex digits.
func HasEscapedBytes(s string) bool {
	for i := strings.Index(s, `\x`); i >= 0 && i+3 < len(s); {
		if isHex(s[i+2]) && isHex(s[i+3]) {
			return true
		}
		j := strings.Index(s[i+2:], `\x`)
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
