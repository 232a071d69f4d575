package core

import "strings"

// secretContains and secretSuffixes define the names whose values are
// secret by default, compared on the name in lower case with '-', '_' and
// '.' removed: "X-Api-Key", "api_key" and "apiKey" are all "xapikey" or
// "apikey". A name holding one of secretContains anywhere ("client_secret",
// "db.password") or ending in one of secretSuffixes ("access_token",
// "X-Auth-Token", "Set-Cookie") is secret.
var (
	secretContains = []string{"password", "passwd", "passphrase", "secret", "apikey", "privatekey", "credential"}
	secretSuffixes = []string{"token", "authorization", "cookie", "pwd", "sessionid"}
)

// IsSecretName reports whether the value of a header, form field, JSON
// member, query parameter or variable called name is a secret by default:
// Authorization, Proxy-Authorization, Cookie, Set-Cookie, and names like
// password, passwd, secret, token, api_key, client_secret, access_token,
// X-Api-Key, X-Auth-Token. Such values never reach a file plateau writes.
// The rule is the one home of this list: the plan, the engine, the report
// and the importers all ask here.
func IsSecretName(name string) bool {
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
	for _, s := range secretContains {
		if strings.Contains(n, s) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// IsSecretHeader reports whether a header's value is a secret by default.
// It is IsSecretName: headers, fields, parameters and variables share one
// rule.
func IsSecretHeader(name string) bool { return IsSecretName(name) }
