package live

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// guarded serves a view with a stop button behind Guard on 127.0.0.1 and
// counts the stops.
func guarded(t *testing.T, o GuardOptions) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var stops atomic.Int32
	v := New(Options{Name: "guarded", Stop: func() { stops.Add(1) }})
	srv := httptest.NewServer(Guard(v.Handler(), o))
	t.Cleanup(srv.Close)
	return srv, &stops
}

// do sends one request to srv with the given Host header and headers.
func do(t *testing.T, srv *httptest.Server, method, path, host string, hdr map[string]string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), resp
}

var tokenRe = regexp.MustCompile(`const token = "([0-9a-f]+)"`)

// TestGuardDNSRebinding plays a DNS-rebinding page: its requests reach
// 127.0.0.1 but name the attacker's host. It can neither read /state nor
// the page (and so the stop token), nor stop the run with a token it got
// otherwise; the same requests by address pass.
func TestGuardDNSRebinding(t *testing.T) {
	srv, stops := guarded(t, GuardOptions{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	evil := "rebind.attacker.example:" + port
	for _, path := range []string{"/state", "/", "/events"} {
		if code, _, _ := do(t, srv, "GET", path, evil, nil); code != http.StatusMisdirectedRequest {
			t.Errorf("GET %s as %s: %d, want 421", path, evil, code)
		}
	}
	code, page, _ := do(t, srv, "GET", "/", "", nil)
	m := tokenRe.FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("page by address: %d, no token in it", code)
	}
	if code, _, _ := do(t, srv, "POST", "/stop", evil, map[string]string{"X-Plateau-Stop": m[1], "Origin": "http://" + evil}); code != http.StatusMisdirectedRequest {
		t.Errorf("POST /stop from the rebinding page: %d, want 421", code)
	}
	// Another site's script posting to the right host.
	if code, _, _ := do(t, srv, "POST", "/stop", "", map[string]string{"X-Plateau-Stop": m[1], "Origin": "https://attacker.example"}); code != http.StatusForbidden {
		t.Errorf("cross-origin POST /stop: %d, want 403", code)
	}
	if n := stops.Load(); n != 0 {
		t.Fatalf("%d stops from refused requests", n)
	}
	for _, host := range []string{"localhost:" + port, "app.localhost:" + port, "[::1]:" + port} {
		if code, _, _ := do(t, srv, "GET", "/state", host, nil); code != 200 {
			t.Errorf("GET /state as %s: %d, want 200", host, code)
		}
	}
	// The page's own post: same origin, with the token.
	if code, _, _ := do(t, srv, "POST", "/stop", "", map[string]string{"X-Plateau-Stop": m[1], "Origin": srv.URL}); code != http.StatusAccepted {
		t.Errorf("the page's POST /stop: %d, want 202", code)
	}
	if n := stops.Load(); n != 1 {
		t.Errorf("%d stops, want 1", n)
	}
}

// TestGuardHosts: a name given in Hosts (the --listen host, the machine's
// name) is served; another is not.
func TestGuardHosts(t *testing.T) {
	srv, _ := guarded(t, GuardOptions{Hosts: []string{"loadgen-1.lab"}})
	if code, _, _ := do(t, srv, "GET", "/state", "LoadGen-1.lab.:9464", nil); code != 200 {
		t.Errorf("listed host: %d", code)
	}
	if code, _, _ := do(t, srv, "GET", "/state", "loadgen-2.lab:9464", nil); code != http.StatusMisdirectedRequest {
		t.Errorf("other host: %d", code)
	}
}

// TestGuardToken: with a token, nothing is served without it; it is taken
// as a bearer header or, once the page was opened as /?token=, a cookie;
// a request with the token passes whatever its Host.
func TestGuardToken(t *testing.T) {
	const tok = "s3cr3t-listen-token"
	srv, stops := guarded(t, GuardOptions{Token: tok})
	for _, path := range []string{"/", "/state", "/events"} {
		if code, _, _ := do(t, srv, "GET", path, "", nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
	}
	if code, _, _ := do(t, srv, "GET", "/state", "", map[string]string{"Authorization": "Bearer wrong-token"}); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	if code, _, _ := do(t, srv, "GET", "/?token=wrong", "", nil); code != http.StatusUnauthorized {
		t.Errorf("wrong ?token=: %d", code)
	}
	if code, _, _ := do(t, srv, "GET", "/state", "", map[string]string{"Authorization": "Bearer " + tok}); code != 200 {
		t.Errorf("bearer token: %d", code)
	}
	if code, _, _ := do(t, srv, "GET", "/state", "prometheus.svc:9464", map[string]string{"Authorization": "bearer " + tok}); code != 200 {
		t.Errorf("bearer token by a DNS name: %d", code)
	}
	code, _, resp := do(t, srv, "GET", "/?token="+tok, "", nil)
	if code != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("/?token=: %d → %q", code, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == TokenCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", cookie)
	}
	code, page, _ := do(t, srv, "GET", "/", "", map[string]string{"Cookie": cookie.String()})
	m := tokenRe.FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("page with the cookie: %d", code)
	}
	if code, _, _ := do(t, srv, "POST", "/stop", "", map[string]string{"X-Plateau-Stop": m[1], "Origin": srv.URL}); code != http.StatusUnauthorized {
		t.Errorf("stop without the token: %d", code)
	}
	if code, _, _ := do(t, srv, "POST", "/stop", "", map[string]string{"X-Plateau-Stop": m[1], "Origin": srv.URL, "Cookie": cookie.String()}); code != http.StatusAccepted {
		t.Errorf("stop with the cookie: %d", code)
	}
	if n := stops.Load(); n != 1 {
		t.Errorf("%d stops, want 1", n)
	}
}

func TestBeyond(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": false, "[::1]:0": false, "0.0.0.0:0": true, "[::]:0": true, "192.0.2.1:0": true} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := Beyond(a); got != want {
			t.Errorf("Beyond(%s) = %v", addr, got)
		}
	}
}
