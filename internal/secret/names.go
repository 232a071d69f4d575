package secret

import (
	"regexp"
	"strings"
)

// contains and suffixes define the names whose values are secret by
// default, compared on the name in lower case with '-', '_', '.' and ' '
// removed: "X-Api-Key", "api_key" and "apiKey" are all "xapikey" or
// "apikey". A name holding one of contains anywhere ("client_secret",
// "db.password") or ending in one of suffixes ("access_token",
// "X-Auth-Token", "Set-Cookie") is secret. These two lists are the one
// home of the rule: the plan, the engine, the CLI's command line, the
// converters, the trace and the report all ask IsName, and the report's
// text patterns are built from the same lists (wordPattern).
var (
	contains = []string{"password", "passwd", "passphrase", "secret", "apikey", "privatekey", "credential"}
	suffixes = []string{"token", "authorization", "cookie", "pwd", "sessionid"}
)

// IsName reports whether the value of a header, form field, JSON member,
// query parameter, variable, environment variable or command-line flag
// called name is a secret by default: Authorization, Proxy-Authorization,
// Cookie, Set-Cookie, and names like password, passwd, secret, token,
// api_key, client_secret, access_token, X-Api-Key, X-Auth-Token, JSESSIONID.
// Such values never reach a file plateau writes.
func IsName(name string) bool {
	if name == "" {
		return false
	}
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-' || c == '_' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	n := string(b)
	for _, s := range contains {
		if strings.Contains(n, s) {
			return true
		}
	}
	for _, s := range suffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// wordPattern is a regular expression for a name IsName may call secret
// (a superset: each match is checked with IsName): a word holding one of
// the rule's words, with the separators IsName ignores allowed between
// their letters ("api_key", "Private.Key", "pass-word").
var wordPattern = func() string {
	var alts []string
	for _, w := range append(append([]string{}, contains...), suffixes...) {
		var b strings.Builder
		for i := 0; i < len(w); i++ {
			if i > 0 {
				b.WriteString(`[-_. ]?`)
			}
			b.WriteString(regexp.QuoteMeta(w[i : i+1]))
		}
		alts = append(alts, b.String())
	}
	return `[A-Za-z0-9_.-]*(?:` + strings.Join(alts, "|") + `)[A-Za-z0-9_.-]*`
}()
