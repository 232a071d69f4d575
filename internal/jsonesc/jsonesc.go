// Package jsonesc escapes strings for JSON exactly as encoding/json does,
// appending to a byte slice without reflection or allocation: for the
// writers that build JSON by hand on paths where encoding/json's cost shows
// (request bodies rendered per iteration, interval records of an import).
package jsonesc

import "unicode/utf8"

// Append appends s escaped for the inside of a JSON string (no quotes
// around it), byte for byte as encoding/json writes it: ", \ and control
// bytes escaped (\b \f \n \r \t by name), invalid UTF-8 as \ufffd, U+2028
// and U+2029 as \u2028 and \u2029, and with html also <, > and & as
// \u003c, \u003e and \u0026 (json.Marshal's default; an Encoder with
// SetEscapeHTML(false) is html false).
func Append(dst []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}
