package expr

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/jsonesc"

	"github.com/plateau-perf/plateau/internal/postmanurl"
)

// A function of the expression language. build checks the arguments it can
// check at compile time (constant formats, regexes) and returns the node.
type function struct {
	min, max int // arguments; max −1: any number
	build    func(p *parser, args []cnode) (node, error)
}

func (f function) arity() string {
	switch {
	case f.min == f.max && f.min == 0:
		return "no arguments"
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	case f.max < 0:
		return fmt.Sprintf("at least %d arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

// FuncNames lists the functions, sorted (docs/plan.md has one table row each).
func FuncNames() []string {
	out := make([]string, 0, len(funcs))
	for n := range funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// text1 builds a function of one text argument.
func text1(f func(string) string) function {
	return function{1, 1, func(_ *parser, a []cnode) (node, error) {
		x := a[0].fn
		return func(e Env) Value { return str(f(x(e).text())) }, nil
	}}
}

var funcs map[string]function

func init() {
	funcs = map[string]function{
		"randomInt": {2, 2, func(_ *parser, a []cnode) (node, error) {
			lo, hi := a[0].fn, a[1].fn
			return func(e Env) Value {
				x, _ := lo(e).number()
				y, _ := hi(e).number()
				l, h := int64(x), int64(y)
				if h < l {
					l, h = h, l
				}
				return num(float64(l + e.Rand().Int64N(h-l+1)))
			}, nil
		}},
		"randomChoice": {1, -1, func(_ *parser, a []cnode) (node, error) {
			return func(e Env) Value { return a[e.Rand().IntN(len(a))].fn(e) }, nil
		}},
		"randomString": {1, 2, func(_ *parser, a []cnode) (node, error) {
			const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			n := a[0].fn
			var cs node
			if len(a) > 1 {
				cs = a[1].fn
			}
			return func(e Env) Value {
				k, _ := n(e).number()
				chars := alnum
				if cs != nil {
					if c := cs(e).text(); c != "" {
						chars = c
					}
				}
				size := min(max(int(k), 0), 1<<16)
				b := make([]byte, size)
				for i := range b {
					b[i] = chars[e.Rand().IntN(len(chars))]
				}
				return str(string(b))
			}, nil
		}},
		"uuid": {0, 0, func(*parser, []cnode) (node, error) {
			return func(Env) Value { return str(UUID()) }, nil
		}},
		"urlencode":  text1(url.QueryEscape),
		"pathencode": text1(url.PathEscape),
		// RFC 3986: all but letters, digits and -._~ (space → %20), as
		// Postman's runtime encodes a urlencoded body.
		"percentencode": text1(postmanurl.FormEscapeString),
		"urldecode":     text1(func(s string) string { v, err := url.QueryUnescape(s); return or(v, s, err) }),
		"base64":        text1(func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }),
		"base64url":     text1(func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }),
		"base64decode":  text1(b64decode),
		"md5":           text1(func(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }),
		"sha1":          text1(func(s string) string { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) }),
		"sha256":        text1(func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }),
		"sha512":        text1(func(s string) string { h := sha512.Sum512([]byte(s)); return hex.EncodeToString(h[:]) }),
		"hmac":          {2, 4, buildHMAC},
		"now":           {0, 2, buildNow},
		"counter": {0, 1, func(p *parser, a []cnode) (node, error) {
			name := ""
			if len(a) == 1 {
				if a[0].lit == nil {
					return nil, &Error{a[0].off, "counter: the name must be a literal, e.g. counter(\"orders\")"}
				}
				name = a[0].lit.text()
			}
			var c = p.opt.Counters.get(name)
			if name == "" {
				c = new(counterBox).v() // one per place it is written
			}
			return func(Env) Value { return num(float64(c.Add(1))) }, nil
		}},
		// seq(n, start, step[, end]) is the n-th value (n from 1) of the
		// sequence start, start+step, …, back to start after the last one
		// not past end: JMeter's Counter, with n the user's iteration
		// (per user) or a counter() (shared).
		"seq": {3, 4, func(_ *parser, a []cnode) (node, error) {
			var end node
			if len(a) == 4 {
				end = a[3].fn
			}
			return func(e Env) Value {
				n, _ := a[0].fn(e).number()
				start, _ := a[1].fn(e).number()
				step, _ := a[2].fn(e).number()
				i := int64(n) - 1
				if end != nil && step != 0 {
					last, _ := end(e).number()
					if k := int64((last-start)/step) + 1; k > 0 && i >= 0 {
						i %= k
					}
				}
				return num(start + step*float64(i))
			}, nil
		}},
		"concat": {1, -1, func(_ *parser, a []cnode) (node, error) {
			return func(e Env) Value {
				var b strings.Builder
				for _, x := range a {
					b.WriteString(x.fn(e).text())
				}
				return str(b.String())
			}, nil
		}},
		"jsonEscape": text1(func(s string) string {
			b := jsonesc.Append(nil, s, false)
			return string(b)
		}),
		"lower": text1(strings.ToLower),
		"upper": text1(strings.ToUpper),
		"trim":  text1(strings.TrimSpace),
		"len": {1, 1, func(_ *parser, a []cnode) (node, error) {
			x := a[0].fn
			return func(e Env) Value { return num(float64(utf8.RuneCountInString(x(e).text()))) }, nil
		}},
		"substr": {2, 3, func(_ *parser, a []cnode) (node, error) {
			return func(e Env) Value {
				s := []rune(a[0].fn(e).text())
				st, _ := a[1].fn(e).number()
				from, to := clamp(int(st), len(s)), len(s)
				if len(a) > 2 {
					en, _ := a[2].fn(e).number()
					to = clamp(int(en), len(s))
				}
				if to < from {
					return str("")
				}
				return str(string(s[from:to]))
			}, nil
		}},
		"replace": {3, 3, func(_ *parser, a []cnode) (node, error) {
			return func(e Env) Value {
				return str(strings.ReplaceAll(a[0].fn(e).text(), a[1].fn(e).text(), a[2].fn(e).text()))
			}, nil
		}},
		"contains": {2, 2, func(_ *parser, a []cnode) (node, error) {
			if a[0].isBody {
				sub := a[1].fn
				return func(e Env) Value { return boolean(strings.Contains(string(e.Body()), sub(e).text())) }, nil
			}
			return func(e Env) Value { return boolean(strings.Contains(a[0].fn(e).text(), a[1].fn(e).text())) }, nil
		}},
		"json": {1, 1, func(_ *parser, a []cnode) (node, error) {
			if a[0].lit == nil {
				return nil, &Error{a[0].off, "json: the path must be a literal, e.g. json(\"$.data.id\")"}
			}
			path, err := ParsePath(a[0].lit.text())
			if err != nil {
				return nil, &Error{a[0].off, err.Error()}
			}
			return func(e Env) Value {
				v, ok := path.First(e.JSON())
				if !ok || v == nil {
					return Value{k: kNull}
				}
				switch x := v.(type) {
				case float64:
					return num(x)
				case bool:
					return boolean(x)
				}
				return str(Text(v))
			}, nil
		}},
		"header": {1, 1, func(_ *parser, a []cnode) (node, error) {
			return func(e Env) Value { return str(e.Header(a[0].fn(e).text())) }, nil
		}},
		"default": {2, 2, func(_ *parser, a []cnode) (node, error) {
			return func(e Env) Value {
				if v := a[0].fn(e); v.k != kNull && v.text() != "" {
					return v
				}
				return a[1].fn(e)
			}, nil
		}},
	}
}

type counterBox struct{ n atomic.Int64 }

func (c *counterBox) v() *atomic.Int64 { return &c.n }

func clamp(i, n int) int { return min(max(i, 0), n) }

func or(v, fallback string, err error) string {
	if err != nil {
		return fallback
	}
	return v
}

func b64decode(s string) string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b)
		}
	}
	return ""
}

func buildHMAC(_ *parser, a []cnode) (node, error) {
	alg := "sha256"
	if len(a) > 2 {
		if a[2].lit == nil {
			return nil, &Error{a[2].off, "hmac: the algorithm must be a literal: sha1, sha256 or sha512"}
		}
		alg = a[2].lit.text()
	}
	var h func() hash.Hash
	switch alg {
	case "sha1":
		h = sha1.New
	case "sha256":
		h = sha256.New
	case "sha512":
		h = sha512.New
	default:
		return nil, &Error{a[2].off, fmt.Sprintf("hmac: algorithm %q is not sha1, sha256 or sha512", alg)}
	}
	b64 := false
	if len(a) > 3 {
		if a[3].lit == nil || (a[3].lit.text() != "hex" && a[3].lit.text() != "base64") {
			return nil, &Error{a[3].off, "hmac: the encoding must be \"hex\" or \"base64\""}
		}
		b64 = a[3].lit.text() == "base64"
	}
	return func(e Env) Value {
		m := hmac.New(h, []byte(a[0].fn(e).text()))
		m.Write([]byte(a[1].fn(e).text()))
		sum := m.Sum(nil)
		if b64 {
			return str(base64.StdEncoding.EncodeToString(sum))
		}
		return str(hex.EncodeToString(sum))
	}, nil
}

// buildNow compiles now([format [, offset]]).
func buildNow(_ *parser, a []cnode) (node, error) {
	layout := time.RFC3339
	special := ""
	if len(a) > 0 {
		if a[0].lit == nil {
			return nil, &Error{a[0].off, "now: the format must be a literal"}
		}
		l, sp, err := Layout(a[0].lit.text())
		if err != nil {
			return nil, &Error{a[0].off, "now: " + err.Error()}
		}
		layout, special = l, sp
	}
	var off time.Duration
	var offNode node
	if len(a) > 1 {
		if a[1].lit != nil {
			d, err := ParseOffset(a[1].lit.text())
			if err != nil {
				return nil, &Error{a[1].off, "now: " + err.Error()}
			}
			off = d
		} else {
			offNode = a[1].fn
		}
	}
	return func(e Env) Value {
		d := off
		if offNode != nil {
			d, _ = ParseOffset(offNode(e).text())
		}
		t := time.Now().Add(d)
		switch special {
		case "unix":
			return num(float64(t.Unix()))
		case "unix_ms":
			return num(float64(t.UnixMilli()))
		}
		return str(t.Format(layout))
	}, nil
}

// ParseOffset reads a time offset: "+24h", "-30m", "+2d", "90s".
func ParseOffset(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	sign := time.Duration(1)
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		sign, s = -1, s[1:]
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return 0, fmt.Errorf("bad offset %q", s)
		}
		return sign * time.Duration(n*float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad offset %q; write e.g. +24h, -30m, +2d", s)
	}
	return sign * d, nil
}

// Layout turns a now() format into a Go time layout. Named formats: unix,
// unix_ms, rfc3339, iso8601, date, time. A format with Java letters
// (yyyy, MM, dd, HH, mm, ss, SSS, Z, XXX; 'quoted' text) as JMeter's __time
// uses is translated; anything else is a Go layout (2006-01-02).
func Layout(f string) (layout, special string, err error) {
	switch f {
	case "unix", "unix_ms":
		return "", f, nil
	case "rfc3339", "iso8601":
		return time.RFC3339, "", nil
	case "rfc3339_ms":
		return "2006-01-02T15:04:05.000Z07:00", "", nil
	case "date":
		return "2006-01-02", "", nil
	case "time":
		return "15:04:05", "", nil
	}
	if f == "" {
		return "", "", errors.New("empty format")
	}
	if strings.Contains(f, "yy") || strings.Contains(f, "HH") || strings.Contains(f, "dd") {
		return javaLayout(f)
	}
	return f, "", nil
}

func javaLayout(f string) (string, string, error) {
	repl := []struct{ j, g string }{
		{"yyyy", "2006"}, {"yy", "06"}, {"MMMM", "January"}, {"MMM", "Jan"}, {"MM", "01"},
		{"dd", "02"}, {"EEEE", "Monday"}, {"EEE", "Mon"}, {"HH", "15"}, {"hh", "03"},
		{"mm", "04"}, {"ss", "05"}, {"SSS", "000"}, {"a", "PM"}, {"XXX", "Z07:00"}, {"Z", "-0700"}, {"z", "MST"},
	}
	var b strings.Builder
	for i := 0; i < len(f); {
		if f[i] == '\'' {
			end := strings.IndexByte(f[i+1:], '\'')
			if end < 0 {
				return "", "", fmt.Errorf("format %q: unterminated quote", f)
			}
			b.WriteString(f[i+1 : i+1+end])
			i += end + 2
			continue
		}
		matched := false
		for _, r := range repl {
			if strings.HasPrefix(f[i:], r.j) {
				b.WriteString(r.g)
				i += len(r.j)
				matched = true
				break
			}
		}
		if !matched {
			c := f[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return "", "", fmt.Errorf("format %q: pattern letter %q is not supported", f, string(c))
			}
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), "", nil
}

// UUID returns a random (version 4) UUID.
func UUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
