package secret

import (
	"regexp"
	"testing"
)

func TestIsName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "Set-Cookie": true,
		"X-Api-Key": true, "X-Auth-Token": true, "password": true, "passwd": true, "db.password": true,
		"secret": true, "client_secret": true, "token": true, "access_token": true, "apiKey": true,
		"api_key": true, "X-CSRF-Token": true, "refresh_token": true, "JSESSIONID": true,
		"Content-Type": false, "user": false, "page": false, "tokens_used": false, "Accept": false,
		"session": false, "key": false, "": false,
	} {
		if got := IsName(name); got != want {
			t.Errorf("IsName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestWordPatternCoversRule: every name the rule calls secret matches the
// text pattern built from it, separators and case included.
func TestWordPatternCoversRule(t *testing.T) {
	re := regexp.MustCompile(`(?i)^(?:` + wordPattern + `)$`)
	for _, n := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "api_key", "apiKey",
		"Private.Key", "pass_word", "client_secret", "X-Auth-Token", "JSESSIONID", "user_pwd", "credentials", "PASSPHRASE"} {
		if !IsName(n) {
			t.Errorf("IsName(%q) = false", n)
		}
		if !re.MatchString(n) {
			t.Errorf("pattern misses %q", n)
		}
	}
}
