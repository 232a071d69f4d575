package live

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// TokenCookie is the cookie the live page keeps the listener's token in
// after it was opened as /?token=TOKEN.
const TokenCookie = "plateau_live_token"

// GuardOptions say who may use the listener.
type GuardOptions struct {
	// Token, when set, is required on every request: as
	// "Authorization: Bearer TOKEN" (Prometheus' bearer credentials), or
	// the cookie the page sets when opened as /?token=TOKEN.
	Token string
	// Hosts are host names (without port) a Host header may name besides
	// IP literals and localhost: the --listen host, the machine's name.
	Hosts []string
}

// Guard wraps the listener's handler (the live view and /metrics) with the
// checks a web server on a developer's machine needs:
//
//   - Host: an IP literal, localhost (or a name under .localhost) or one of
//     o.Hosts. A DNS-rebinding page (evil.example resolving to 127.0.0.1)
//     sends its own name, so it can neither read /state nor fetch the
//     page's stop token. A request carrying the right token passes
//     whatever its Host: a rebinding page cannot know the token.
//   - Origin: when a browser sends one, it must be the listener itself
//     (same host and port as Host); another site's script is refused.
//   - Token: when o.Token is set, every request must carry it.
//
// Refusals are 403 (421 for a Host not served) with a one-line reason.
func Guard(h http.Handler, o GuardOptions) http.Handler {
	hosts := map[string]bool{"localhost": true}
	for _, n := range o.Hosts {
		if n = strings.ToLower(strings.TrimSuffix(n, ".")); n != "" {
			hosts[n] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authed := false
		if o.Token != "" {
			if tok := r.URL.Query().Get("token"); tok != "" && r.URL.Path == "/" && equal(tok, o.Token) {
				// Opened as /?token=…: keep the token in a cookie the
				// page's own requests (events, stop) carry, and drop it
				// from the address bar and the history.
				http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
				http.Redirect(w, r, "/", http.StatusSeeOther)
				return
			}
			authed = bearer(r, o.Token)
			if !authed {
				if c, err := r.Cookie(TokenCookie); err == nil && equal(c.Value, o.Token) {
					authed = true
				}
			}
			if !authed {
				w.Header().Set("WWW-Authenticate", `Bearer realm="plateau"`)
				http.Error(w, "the listener needs its token: Authorization: Bearer TOKEN, or open /?token=TOKEN", http.StatusUnauthorized)
				return
			}
		}
		if !authed && !hostAllowed(r.Host, hosts) {
			http.Error(w, "host "+r.Host+" is not served here (open the listener by IP address or localhost)", http.StatusMisdirectedRequest)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// bearer reports whether r carries "Authorization: Bearer token".
func bearer(r *http.Request, token string) bool {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(cred), token)
}

// hostAllowed reports whether a Host header names the listener: an IP
// literal, localhost, a name under .localhost, or one of hosts.
func hostAllowed(hostport string, hosts map[string]bool) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || hosts[host] || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return false
}

// sameOrigin reports whether an Origin header names host (the request's
// Host header, with its port).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// Beyond reports whether a listener's address is reachable beyond this
// machine: an unspecified address (":9464", "0.0.0.0", "[::]") or one
// that is not loopback.
func Beyond(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return true
	}
	return ta.IP == nil || ta.IP.IsUnspecified() || !ta.IP.IsLoopback()
}
