package httpc

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// maxTargets bounds the per-client URL cache. A plan with a few static URLs
// hits the cache every time; a feeder that makes every URL unique would grow it
// without bound, so it is simply emptied when full (reparsing is cheap
// compared with a map that only grows).
const maxTargets = 256

// target is a parsed, dial-ready request URL. It is immutable once built and
// owned by one Client (or shared through a Pool by key only).
type target struct {
	raw        string   // the URL string exactly as given (cache key)
	verbatim   bool     // requestURI is raw's own path and query (Request.Verbatim)
	u          *url.URL // for cookies and relative redirects
	https      bool
	host       string // Host header value: u.Host without an IPv6 zone
	hostname   string // name or IP to resolve, brackets removed
	port       uint16
	ip         netip.Addr // valid when hostname is an IP literal
	requestURI string     // path?query sent on the request line
	key        string     // connection key: scheme://hostname:port
	tlsConfig  *tls.Config

	slot  *hostSlot // per-user idle connection for key (nil until first use)
	phost *poolHost // shared-pool entry for key, when Config.Pool is set
}

// parseTarget parses an absolute http or https URL.
func parseTarget(raw string) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	t := &target{raw: raw, u: u}
	switch u.Scheme {
	case "http":
	case "https":
		t.https = true
	case "":
		return nil, fmt.Errorf("url %q: missing scheme (want http:// or https://)", raw)
	default:
		return nil, fmt.Errorf("url %q: unsupported scheme %q", raw, u.Scheme)
	}
	t.hostname = u.Hostname()
	if t.hostname == "" {
		return nil, fmt.Errorf("url %q: missing host", raw)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if t.https {
			port = "443"
		}
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("url %q: invalid port %q", raw, port)
	}
	t.port = uint16(p)
	if ip, err := netip.ParseAddr(t.hostname); err == nil {
		t.ip = ip
	} else if strings.ContainsAny(t.hostname, "%[]") {
		return nil, fmt.Errorf("url %q: invalid host %q", raw, t.hostname)
	}
	t.host = u.Host
	// A zone identifier ("%25eth0") means something only to this machine;
	// servers must not see it (net/http strips it the same way).
	if strings.HasPrefix(t.host, "[") {
		if i := strings.IndexByte(t.host, '%'); i >= 0 {
			if j := strings.IndexByte(t.host[i:], ']'); j >= 0 {
				t.host = t.host[:i] + t.host[i+j:]
			}
		}
	}
	t.requestURI = u.RequestURI()
	if t.requestURI == "" || (t.requestURI[0] != '/' && t.requestURI != "*") {
		// Opaque URLs such as "http:foo" have no usable request target.
		return nil, fmt.Errorf("url %q: no absolute path", raw)
	}
	t.key = u.Scheme + "://" + strings.ToLower(t.hostname) + ":" + port
	return t, nil
}

// parseVerbatim parses raw's scheme, host and port and keeps its path and
// query as they are written for the request line (Request.Verbatim).
func parseVerbatim(raw string) (*target, error) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return nil, fmt.Errorf("url %q: missing scheme (want http:// or https://)", raw)
	}
	end := len(raw)
	if j := strings.IndexAny(raw[i+3:], "/?#"); j >= 0 {
		end = i + 3 + j
	}
	uri := raw[end:]
	if k := strings.IndexByte(uri, '#'); k >= 0 {
		uri = uri[:k]
	}
	switch {
	case uri == "":
		uri = "/"
	case uri[0] == '?':
		uri = "/" + uri
	}
	for k := 0; k < len(uri); k++ {
		if c := uri[k]; c <= ' ' || c >= 0x7f {
			return nil, fmt.Errorf("url %q: byte %q cannot go on the request line as it is", raw, c)
		}
	}
	t, err := parseTarget(raw[:end] + "/")
	if err != nil {
		return nil, err
	}
	// The full URL for cookies and relative redirects, when net/url reads
	// it (a bare % in the path it does not: the origin then).
	if u, err := url.Parse(raw); err == nil {
		t.u = u
	}
	t.raw, t.verbatim, t.requestURI = raw, true, uri
	return t, nil
}

// target returns the cached parse of raw, parsing it on first use.
func (c *Client) target(raw string, verbatim bool) (*target, error) {
	// The last URL is compared first: a user repeating one request compares
	// one string (pointer-equal in the common case) instead of hashing it.
	if t := c.last; t != nil && t.raw == raw && t.verbatim == verbatim {
		return t, nil
	}
	if t, ok := c.targets[raw]; ok && t.verbatim == verbatim {
		c.last = t
		return t, nil
	}
	if raw == "" {
		return nil, errors.New("empty url")
	}
	parse := parseTarget
	if verbatim {
		parse = parseVerbatim
	}
	t, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing url: %w", err)
	}
	if t.https {
		t.tlsConfig = c.tlsConfigFor(t.hostname)
	} else if c.cfg.Proxy != nil {
		t.requestURI = "http://" + t.host + t.requestURI // absolute form, for the proxy
	}
	switch {
	case c.last == nil && len(c.targets) == 0:
		// The first URL: last alone is the cache.
	case len(c.targets) >= maxTargets:
		clear(c.targets)
		c.targets[raw] = t
	default:
		if c.targets == nil {
			c.targets = make(map[string]*target)
		}
		if len(c.targets) == 0 && c.last != nil {
			c.targets[c.last.raw] = c.last // a second URL: both in the map
		}
		c.targets[raw] = t
	}
	c.last = t
	return t, nil
}

// tlsConfigFor derives the per-host TLS configuration from the base one. Only
// HTTP/1.1 is offered through ALPN: this client speaks nothing else.
func (c *Client) tlsConfigFor(hostname string) *tls.Config {
	var cfg *tls.Config
	if c.cfg.TLSConfig != nil {
		cfg = c.cfg.TLSConfig.Clone()
	} else {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = hostname
	}
	if c.cfg.InsecureSkipVerify {
		cfg.InsecureSkipVerify = true
	}
	cfg.NextProtos = []string{"http/1.1"}
	if cfg.ClientSessionCache == nil {
		// Resumed sessions make reconnects cheap; created on first need so
		// plain-HTTP users don't carry the cache.
		if c.sessions == nil {
			c.sessions = tls.NewLRUClientSessionCache(16)
		}
		cfg.ClientSessionCache = c.sessions
	}
	return cfg
}
