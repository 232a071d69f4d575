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
// % stays %): \ + & = % | ^ [ ] are sent as they are. The host is
// lower-cased (and punycoded). URL is this, as a function of the
// substituted text.
//
// A urlencoded body goes through Node's querystring.stringify and
// postman-request's RFC 3986 pass: every byte but letters, digits and
// -._~ is percent-encoded (space → %20, ! ' ( ) * too). FormEscape is that.
package postmanurl

import (
	"bytes"
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

// appendHost is the host lower-cased (JavaScript's toLowerCase) and, when it
// is not ASCII, through Node's url.domainToASCII (UTS #46, punycode); a
// host that function refuses is sent lower-cased, as Postman does.
func appendHost(dst, h []byte) []byte {
	ascii := true
	for _, c := range h {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return appendProto(dst, h)
	}
	lower := strings.ToLower(string(h))
	if a, err := whatwg.ToASCII(lower); err == nil && a != "" {
		return append(dst, a...)
	}
	return append(dst, lower...)
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
