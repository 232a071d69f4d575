// Package postmanurl encodes a request's URL and urlencoded body as
// Postman's runtime puts them on the wire (newman 6.2.2: postman-runtime
// 7.39.1, postman-collection 4.4.0, postman-url-encoder 3.0.5,
// postman-request 2.88.1-postman.48), so that a converted collection sends
// the bytes newman sends.
//
// The runtime substitutes a request's {{variables}} into the URL's text and
// parses the result again (postman-url-encoder's parser): a value holding
// "&" starts a new query parameter, one holding "#" ends the URL (the
// fragment is never sent), one holding "?" in the path starts the query.
// It then percent-encodes each part with its own small set — the path only
// controls, space " < > ` # ? { } and non-ASCII bytes, the query only
// controls, space " # ' < > and non-ASCII bytes — and never encodes a "%"
// that starts a valid escape (%2F stays %2F) nor one that does not (a bare
// % stays %): \ + & = % | ^ [ ] are sent as they are. The host goes
// through Node's url.domainToASCII (lower-cased, punycoded, an IPv4
// address in any of its forms as dotted decimal) or stays as written when
// that refuses it. AppendURL is this, as a function of the substituted
// text; wiretest.TestPostmanEncodingMatchesNode checks it against newman's
// own modules.
//
// A urlencoded body goes through Node's querystring.stringify and
// postman-request's RFC 3986 pass: every byte but letters, digits and
// -._~ is percent-encoded (space → %20, ! ' ( ) * too). FormEscape is that.
package postmanurl

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

const hexUpper = "0123456789ABCDEF"

// The encode sets of postman-url-encoder (encoder/encode-set.js): every C0
// control, DEL and every byte ≥ 0x80, plus these.
const (
	pathSet  = " \"<>`#?{}"
	querySet = " \"#'<>"
)

func inSet(c byte, set string) bool {
	return c < 0x20 || c >= 0x7f || strings.IndexByte(set, c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' || 'a' <= c && c <= 'f'
}

// appendEncoded is postman-url-encoder's percent-encode.js: a "%" followed
// by two hex digits is kept with them (no double encoding), every byte of
// the set becomes %XX, the others are kept.
func appendEncoded(dst []byte, s []byte, set string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i < len(s)-2 && isHex(s[i+1]) && isHex(s[i+2]) {
			dst = append(dst, s[i:i+3]...)
			i += 2
			continue
		}
		if inSet(c, set) {
			dst = append(dst, '%', hexUpper[c>>4], hexUpper[c&15])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// AppendURL appends the URL Postman's runtime sends for raw, the request's
// URL text after its variables were substituted: scheme://host[:port]/path
// [?query], each part encoded as the runtime encodes it, the fragment and
// any user:password@ left out (neither is on the request line). A URL
// without a scheme is http, as in Postman. The result is for the request
// line as it is (see httpc.Request.Verbatim): Go's net/url would re-encode
// a path holding | ^ or a bare %.
func AppendURL(dst []byte, raw []byte) []byte {
	s := trimLeftSpace(raw)
	if i := indexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	var query []byte
	hasQuery := false
	if i := indexByte(s, '?'); i >= 0 {
		query, hasQuery = s[i+1:], true
		s = s[:i]
	}
	// Backslashes before the query are slashes (the parser "sanitizes"
	// them); the copy keeps raw intact.
	var buf [256]byte
	pre := buf[:0]
	for _, c := range s {
		if c == '\\' {
			c = '/'
		}
		pre = append(pre, c)
	}
	s = pre
	proto := []byte("http")
	if i := indexStr(s, "://"); i >= 0 {
		proto = s[:i]
		s = s[i+3:]
		for len(s) > 0 && s[0] == '/' {
			s = s[1:]
		}
	}
	var path []byte
	hasPath := false
	if i := indexByte(s, '/'); i >= 0 {
		path, hasPath = s[i+1:], true
		s = s[:i]
	}
	if i := lastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:] // user:password: not on the request line
	}
	var port []byte
	if i := lastIndexByte(s, ':'); i >= 0 && indexByte(s[i+1:], ']') < 0 {
		port = s[i+1:]
		s = s[:i]
		dst = appendProto(dst, proto)
		dst = append(dst, "://"...)
		dst = appendHost(dst, s)
		dst = append(dst, ':')
		dst = append(dst, port...)
	} else {
		dst = appendProto(dst, proto)
		dst = append(dst, "://"...)
		dst = appendHost(dst, s)
	}
	dst = append(dst, '/')
	if hasPath {
		dst = appendEncoded(dst, path, pathSet)
	}
	if hasQuery {
		dst = append(dst, '?')
		dst = appendEncoded(dst, query, querySet)
	}
	return dst
}

func appendProto(dst, p []byte) []byte {
	for _, c := range p {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendHost is postman-url-encoder's encodeHost: the host lower-cased
// (JavaScript's toLowerCase), then through Node's url.domainToASCII — tabs
// and newlines dropped, %XX decoded, UTS #46 (punycode), refused when a
// forbidden code point remains —, or as it is when that refuses it.
func appendHost(dst, h []byte) []byte {
	plain := true
	for _, c := range h {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			plain = false
			break
		}
	}
	if plain {
		// What domainToASCII makes of it too, unless it ends in a number:
		// an IPv4 address in one of its forms ("0" is 0.0.0.0).
		n := len(dst)
		dst = appendProto(dst, h)
		if endsInNumber(dst[n:]) {
			if v4, ok := appendIPv4(dst[len(dst):], dst[n:]); ok {
				return append(dst[:n], v4...)
			}
		}
		return dst
	}
	lower := strings.ToLower(string(h))
	if a, ok := domainToASCII(lower); ok {
		return append(dst, a...)
	}
	return append(dst, lower...)
}

// endsInNumber is the WHATWG URL standard's ends-in-a-number checker.
func endsInNumber(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	if h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	last := h[bytes.LastIndexByte(h, '.')+1:]
	if len(last) > 0 {
		digits := true
		for _, c := range last {
			digits = digits && '0' <= c && c <= '9'
		}
		if digits {
			return true
		}
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number parses one part of an IPv4 address: decimal, 0x hex or
// 0-led octal.
func ipv4Number(p []byte) (uint64, bool) {
	if len(p) == 0 {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, radix = p[2:], 16
	case len(p) >= 2 && p[0] == '0':
		p, radix = p[1:], 8
	}
	var n uint64
	for _, c := range p {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case radix == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case radix == 16 && 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		if n = n*radix + d; n > 1<<40 {
			return 0, false // far out of range: refused below anyway
		}
	}
	return n, true
}

// appendIPv4 is the WHATWG IPv4 parser: h as dotted decimal, or false.
func appendIPv4(dst, h []byte) ([]byte, bool) {
	if len(h) > 1 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	var nums [4]uint64
	parts := 0
	for {
		if parts == 4 {
			return nil, false // a fifth part
		}
		p := h
		i := bytes.IndexByte(h, '.')
		if i >= 0 {
			p = h[:i]
		}
		n, ok := ipv4Number(p)
		if !ok {
			return nil, false
		}
		nums[parts] = n
		parts++
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	last := parts - 1
	for i := 0; i < last; i++ {
		if nums[i] > 255 {
			return nil, false
		}
	}
	if nums[last] >= 1<<(8*(5-parts)) {
		return nil, false
	}
	v := nums[last]
	for i := 0; i < last; i++ {
		v += nums[i] << (8 * (3 - i))
	}
	for i := 3; i >= 0; i-- {
		dst = strconv.AppendUint(dst, v>>(8*i)&255, 10)
		if i > 0 {
			dst = append(dst, '.')
		}
	}
	return dst, true
}

// domainToASCII is the WHATWG URL standard's host parsing of a domain, as
// Node's url.domainToASCII does it.
func domainToASCII(h string) (string, bool) {
	h = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, h)
	var d []byte
	for i := 0; i < len(h); i++ {
		if h[i] == '%' && i+2 < len(h) && isHex(h[i+1]) && isHex(h[i+2]) {
			d = append(d, unhex(h[i+1])<<4|unhex(h[i+2]))
			i += 2
			continue
		}
		d = append(d, h[i])
	}
	a, err := whatwg.ToASCII(string(d))
	if err != nil || a == "" {
		return "", false
	}
	if endsInNumber([]byte(a)) {
		v4, ok := appendIPv4(nil, []byte(a))
		return string(v4), ok
	}
	for i := 0; i < len(a); i++ {
		if c := a[i]; c <= ' ' || c == 0x7f || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0 {
			return "", false
		}
	}
	return a, true
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// whatwg is the WHATWG URL standard's domain-to-ASCII (non-transitional
// UTS #46 without the strict checks), as Node implements it.
var whatwg = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.CheckHyphens(false), idna.CheckJoiners(false), idna.StrictDomainName(false), idna.VerifyDNSLength(false))

// FormEscape appends s as Postman's runtime sends a urlencoded body's key
// or value: Node's querystring.escape followed by postman-request's RFC
// 3986 pass — every byte but A–Z a–z 0–9 - . _ ~ as %XX.
func FormEscape(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hexUpper[c>>4], hexUpper[c&15])
	}
	return dst
}

// FormEscapeString is FormEscape into a new string.
func FormEscapeString(s string) string { return string(FormEscape(nil, s)) }

// trimLeftSpace is JavaScript's trimLeft: white space and line terminators.
func trimLeftSpace(s []byte) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n <= 1 || !(unicode.IsSpace(r) && r != 0x85 || r == '\ufeff') {
			return s
		}
		s = s[n:]
	}
	return s
}

func indexByte(s []byte, c byte) int     { return bytes.IndexByte(s, c) }
func lastIndexByte(s []byte, c byte) int { return bytes.LastIndexByte(s, c) }

func indexStr(s []byte, sub string) int { return bytes.Index(s, []byte(sub)) }
