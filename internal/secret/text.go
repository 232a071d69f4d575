package secret

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// The text patterns of a secret by name: the value of a JSON member, of a
// key=value pair of a query string or form body, of a URL's userinfo or a
// DSN's password. IsName (or a caller's wider rule) decides which names.
var (
	// "key": "value" or "key": 123 in JSON text.
	jsonMemberRe = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|[^\s,}\]"{\[]+)`)
	// key=value in a query string or form body.
	formPairRe = regexp.MustCompile(`(?:^|[?&;\s])([^=&?;\s]+)=([^&;#\s]*)`)
	// A value that is only a ${name} reference.
	pureRefRe = regexp.MustCompile(`^\s*\$\{[^}]*\}\s*$`)
	// password=… in a key=value DSN.
	dsnPasswordRe = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('[^']*'|\S+)`)
)

// JSONMembers returns the "name": value members of JSON text: for each,
// the name's raw (escaped) text and the value's raw text (quoted when a
// string).
func JSONMembers(s string) [][2]string { return pairs(jsonMemberRe, s) }

// FormPairs returns the name=value pairs of a query string or form body,
// raw (not unescaped).
func FormPairs(s string) [][2]string { return pairs(formPairRe, s) }

func pairs(re *regexp.Regexp, s string) [][2]string {
	var out [][2]string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

// IsRef reports whether a value is only a ${name} reference: it holds no
// secret, and tells the reader where the value comes from.
func IsRef(v string) bool { return pureRefRe.MatchString(v) }

// Value hides a secret value, except one that is only a reference.
func Value(v string) string {
	if IsRef(v) {
		return v
	}
	return Mask
}

// URL hides the password of "scheme://user:pass@host", of key=value DSNs
// ("host=db password=s3cret") and the values of query parameters named
// secret by isName ("?api_key=***"); a value that is only a ${name}
// reference stays.
func URL(s string, isName func(string) bool) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			if c := strings.IndexByte(rest[:at], ':'); c >= 0 && !IsRef(rest[c+1:at]) {
				s = s[:i+3] + rest[:c+1] + Mask + rest[at:]
			}
		}
	}
	if q := strings.IndexByte(s, '?'); q >= 0 {
		s = s[:q] + Pairs(s[q:], isName)
	}
	return dsnPasswordRe.ReplaceAllString(s, "${1}"+Mask)
}

// Pairs masks the values of key=value pairs named secret by isName.
func Pairs(s string, isName func(string) bool) string {
	return formPairRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := formPairRe.FindStringSubmatch(m)
		name := QueryUnescape(sub[1])
		if !isName(name) || sub[2] == "" || IsRef(sub[2]) || sub[2] == Mask {
			return m
		}
		return m[:len(m)-len(sub[2])] + Mask
	})
}

// Body masks the secret members of a raw body: JSON members and key=value
// pairs named secret by isName.
func Body(s string, isName func(string) bool) string {
	s = jsonMemberRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := jsonMemberRe.FindStringSubmatch(m)
		if !isName(JSONUnquote(`"`+sub[1]+`"`)) || IsRef(strings.Trim(sub[2], `"`)) {
			return m
		}
		return m[:len(m)-len(sub[2])] + `"` + Mask + `"`
	})
	return Pairs(s, isName)
}

// JSONUnquote decodes a quoted JSON string (or returns s without its
// quotes when it does not decode).
func JSONUnquote(s string) string {
	if len(s) < 2 || s[0] != '"' {
		return s
	}
	var out string
	if json.Unmarshal([]byte(s), &out) != nil {
		return strings.Trim(s, `"`)
	}
	return out
}

// QueryUnescape is url.QueryUnescape, or s when it does not decode.
func QueryUnescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// Schemeless drops "Bearer " or "Basic " (any one-word scheme) from an
// Authorization value: the word is no secret, and masking it would mask
// the word everywhere.
func Schemeless(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 && !strings.ContainsAny(s[:i], "=:/") {
		return s[i+1:]
	}
	return s
}

// LiteralParts returns the literal text of a secret value written in a
// plan, split at ${…} references (whose text is a variable name, not a
// secret) and without the scheme word of an Authorization value: the
// values to mask wherever else they appear.
func LiteralParts(v string) []string {
	var out []string
	for v != "" {
		i := strings.Index(v, "${")
		if i < 0 {
			out = append(out, v)
			break
		}
		out = append(out, v[:i])
		j := strings.Index(v[i:], "}")
		if j < 0 {
			break
		}
		v = v[i+j+1:]
	}
	res := out[:0]
	for _, p := range out {
		p = strings.TrimSpace(p)
		for _, scheme := range []string{"Bearer ", "Basic ", "bearer ", "basic "} {
			p = strings.TrimPrefix(p, scheme)
		}
		if len(p) >= MinLen {
			res = append(res, p)
		}
	}
	return res
}

// Args masks a command line: the value of a flag named secret by isName
// ("--listen-token X", "--listen-token=X"), of a key=value argument whose
// key has a secret dotted segment ("--set vars.api_key=X",
// "--set http.headers.X-Api-Key=X"), and the passwords and secret query
// parameters of URLs anywhere (URL). args is not modified.
func Args(args []string, isName func(string) bool) []string {
	out := make([]string, len(args))
	secretNext := false
	for i, a := range args {
		switch {
		case secretNext:
			out[i], secretNext = Value(a), false
			continue
		case strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
			out[i] = a
			secretNext = isName(strings.TrimLeft(a, "-"))
			continue
		case strings.HasPrefix(a, "-"):
			flag, v, _ := strings.Cut(a, "=")
			if isName(strings.TrimLeft(flag, "-")) {
				out[i] = flag + "=" + Value(v)
				continue
			}
			// --set=key=value
			out[i] = flag + "=" + keyValue(v, isName)
			continue
		}
		out[i] = keyValue(a, isName)
	}
	return out
}

// keyValue masks the value of "key=value" when a dotted segment of key is
// secret, and URL secrets in any case.
func keyValue(a string, isName func(string) bool) string {
	k, v, ok := strings.Cut(a, "=")
	if ok && !strings.ContainsAny(k, "/?&") {
		for _, seg := range strings.FieldsFunc(k, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
			if isName(seg) {
				return k + "=" + Value(v)
			}
		}
		return k + "=" + URL(v, isName)
	}
	return URL(a, isName)
}

// ReplacePairs rewrites the values of the name=value pairs of a query
// string or form body: fn gets the decoded name and the raw value and
// returns the new raw value, or false to keep it.
func ReplacePairs(s string, fn func(name, raw string) (string, bool)) string {
	return formPairRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := formPairRe.FindStringSubmatch(m)
		nv, ok := fn(QueryUnescape(sub[1]), sub[2])
		if !ok {
			return m
		}
		return m[:len(m)-len(sub[2])] + nv
	})
}

// ReplaceJSONMembers rewrites the string values of the members of JSON
// text: fn gets the decoded name and value and returns the new value
// (written as a JSON string), or false to keep it.
func ReplaceJSONMembers(s string, fn func(name, value string) (string, bool)) string {
	return jsonMemberRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := jsonMemberRe.FindStringSubmatch(m)
		if len(sub[2]) < 2 || sub[2][0] != '"' {
			return m
		}
		nv, ok := fn(JSONUnquote(`"`+sub[1]+`"`), JSONUnquote(sub[2]))
		if !ok {
			return m
		}
		j, _ := json.Marshal(nv)
		return m[:len(m)-len(sub[2])] + string(j)
	})
}
