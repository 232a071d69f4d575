package sut

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FrontConfig configures one front ("lar") instance. Zero fields take the
// defaults documented on each field.
type FrontConfig struct {
	// Secret signs bearer tokens. Give every front instance the same secret
	// so that a token from one is accepted by all. Required.
	Secret string
	// TokenTTL is how long a token stays valid (default 1 h).
	TokenTTL time.Duration
	// BackURLs are the back instances' base URLs ("http://127.0.0.1:8081"),
	// used round-robin. At least one is required.
	BackURLs []string
	// ExternalURL is the external-services base URL; each service is called
	// at ExternalURL/NAME. Empty disables external calls, as the reference's
	// requirement assumed.
	ExternalURL string
	// ExternalServices are the services called per read, in order (nil
	// means DefaultExternalServices; an empty non-nil list calls none).
	ExternalServices []string
	// ParallelExternal calls the external services concurrently; by default
	// they are called one after another, as the reference system did.
	ParallelExternal bool
	// ExternalTimeout bounds each external call (default 2 s); BackTimeout
	// bounds the back call (default 5 s).
	ExternalTimeout, BackTimeout time.Duration
	// AccessLog is the access log path (AccessLogFormat); ExternalLog is the
	// external-call log path (ExternalLogFormat). Empty disables either.
	AccessLog, ExternalLog string
	// FlushInterval bounds how long a log line stays buffered (default 1 s).
	FlushInterval time.Duration
}

// DefaultExternalServices are the services a front calls per read.
func DefaultExternalServices() []string { return []string{"audit", "consent", "relation"} }

// Front is one front ("lar") instance serving
//
//	POST /token            {"user":"…"} → {"access_token":"…","token_type":"Bearer","expires_in":3600}
//	GET  /allergies?cpr=…  Bearer token → the back's AllergyList; 401 without a
//	                       valid token, 400 on a malformed cpr, 404 unknown cpr,
//	                       500 {"error":"consent: Service Unavailable"} when a
//	                       call it depends on fails
//	GET  /health           {"status":"ok"}
//
// Every read calls the external services and then one back instance,
// passing the request's message id in X-Message-Id. Create it with NewFront
// and run it with Serve.
type Front struct {
	cfg      FrontConfig
	signer   tokenSigner
	backs    []string
	next     atomic.Uint64 // round-robin counter
	client   *http.Client
	access   *logFile
	external *logFile
	served   statusTally

	closeOnce sync.Once
	closeErr  error
}

// NewFront validates cfg and opens the logs.
func NewFront(cfg FrontConfig) (*Front, error) {
	if cfg.Secret == "" {
		return nil, errors.New("front: secret is empty")
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = time.Hour
	}
	if len(cfg.BackURLs) == 0 {
		return nil, errors.New("front: no back URLs")
	}
	backs := make([]string, len(cfg.BackURLs))
	for i, u := range cfg.BackURLs {
		b, err := baseURL(u)
		if err != nil {
			return nil, fmt.Errorf("front: back URL: %w", err)
		}
		backs[i] = b
	}
	if cfg.ExternalURL != "" {
		b, err := baseURL(cfg.ExternalURL)
		if err != nil {
			return nil, fmt.Errorf("front: external URL: %w", err)
		}
		cfg.ExternalURL = b
	}
	if cfg.ExternalServices == nil {
		cfg.ExternalServices = DefaultExternalServices()
	}
	for _, s := range cfg.ExternalServices {
		if !validServiceName(s) {
			return nil, fmt.Errorf("front: external service name %q: want lower-case letters, digits and '-'", s)
		}
	}
	if cfg.ExternalTimeout <= 0 {
		cfg.ExternalTimeout = 2 * time.Second
	}
	if cfg.BackTimeout <= 0 {
		cfg.BackTimeout = 5 * time.Second
	}
	access, err := openLog(cfg.AccessLog, cfg.FlushInterval)
	if err != nil {
		return nil, fmt.Errorf("front: %w", err)
	}
	external, err := openLog(cfg.ExternalLog, cfg.FlushInterval)
	if err != nil {
		access.close()
		return nil, fmt.Errorf("front: %w", err)
	}
	tr := &http.Transport{
		Proxy:       nil, // demo traffic is local; never route it through an environment proxy
		DialContext: (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		// Enough idle connections per host that a busy front reuses
		// connections instead of leaving thousands in TIME_WAIT.
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &Front{
		cfg:      cfg,
		signer:   tokenSigner{secret: []byte(cfg.Secret), ttl: cfg.TokenTTL},
		backs:    backs,
		client:   &http.Client{Transport: tr},
		access:   access,
		external: external,
	}, nil
}

// baseURL checks that u is an absolute http(s) URL and drops a trailing "/".
func baseURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http(s) URL", u)
	}
	return strings.TrimRight(u, "/"), nil
}

// Serve answers requests on ln until ctx is cancelled, then stops gracefully:
// in-flight requests finish and both logs are flushed. It returns nil after a
// graceful stop. Call it once.
func (f *Front) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, f.handler(), f.Close)
}

// Close flushes and closes the logs and idle connections; Serve calls it on
// the way out. Idempotent.
func (f *Front) Close() error {
	f.closeOnce.Do(func() {
		f.client.CloseIdleConnections()
		f.closeErr = errors.Join(f.access.close(), f.external.close())
	})
	return f.closeErr
}

func (f *Front) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /allergies", f.allergies)
	return withAccessLog(f.access, f.served.count(mux))
}

// Served is the front's own tally of the responses it sent, per HTTP
// status (health probes left out, as from its access log): what an
// application's request counter would expose, kept apart from the log so
// that a test can check what is read from the log against it.
func (f *Front) Served() map[int]int64 { return f.served.snapshot() }

// statusTally counts responses per status. Safe for concurrent use.
type statusTally struct {
	mu sync.Mutex
	n  map[int]int64
}

// count wraps h, counting the status of every response but health probes.
func (c *statusTally) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			h.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		st := sw.status
		if st == 0 {
			st = http.StatusOK
		}
		c.mu.Lock()
		if c.n == nil {
			c.n = map[int]int64{}
		}
		c.n[st]++
		c.mu.Unlock()
	})
}

func (c *statusTally) snapshot() map[int]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]int64, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// tokenRequest and tokenResponse are the bodies of POST /token.
type tokenRequest struct {
	User string `json:"user"`
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"` // seconds
}

func (f *Front) token(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
	if err := dec.Decode(&req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "body must be JSON like {\"user\":\"name\"}")
		return
	}
	if req.User == "" || len(req.User) > 64 {
		writeJSONError(w, http.StatusBadRequest, "user must be 1–64 bytes")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(tokenResponse{
		AccessToken: f.signer.issue(req.User, time.Now()),
		TokenType:   "Bearer",
		ExpiresIn:   int64(f.cfg.TokenTTL / time.Second),
	})
}

func (f *Front) allergies(w http.ResponseWriter, r *http.Request) {
	tok, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSONError(w, http.StatusUnauthorized, "bearer token required")
		return
	}
	if _, err := f.signer.verify(tok, time.Now()); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSONError(w, http.StatusUnauthorized, err.Error())
		return
	}
	cpr := r.URL.Query().Get("cpr")
	if !validCPR(cpr) {
		writeJSONError(w, http.StatusBadRequest, "cpr must be 10 digits")
		return
	}
	id := r.Header.Get(MessageIDHeader) // set by withAccessLog
	ctx := r.Context()

	if msg := f.callExternals(ctx, id, cpr); msg != "" {
		writeJSONError(w, f.failStatus(ctx), msg)
		return
	}
	list, status, msg := f.callBack(ctx, id, cpr)
	if msg != "" {
		if status == 0 {
			status = f.failStatus(ctx)
		}
		writeJSONError(w, status, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list) // a write error means the client left
}

// statusClientClosed is nginx's status for a request the client abandoned.
const statusClientClosed = 499

// failStatus is 500 for a failed dependency, or 499 when the failure was the
// client going away.
func (f *Front) failStatus(ctx context.Context) int {
	if ctx.Err() != nil {
		return statusClientClosed
	}
	return http.StatusInternalServerError
}

// callExternals calls every external service, in sequence or concurrently,
// and returns "" or the first failure in service order ("consent: Service
// Unavailable"). In sequence, a failure skips the remaining calls.
func (f *Front) callExternals(ctx context.Context, id, cpr string) string {
	if f.cfg.ExternalURL == "" {
		return ""
	}
	if !f.cfg.ParallelExternal {
		for _, s := range f.cfg.ExternalServices {
			if msg := f.callExternal(ctx, s, id, cpr); msg != "" {
				return msg
			}
		}
		return ""
	}
	msgs := make([]string, len(f.cfg.ExternalServices))
	var wg sync.WaitGroup
	for i, s := range f.cfg.ExternalServices {
		wg.Go(func() { msgs[i] = f.callExternal(ctx, s, id, cpr) })
	}
	wg.Wait()
	for _, m := range msgs {
		if m != "" {
			return m
		}
	}
	return ""
}

// callExternal makes one external call, logs it (ExternalLogFormat) and
// returns "" or a failure message naming the service.
func (f *Front) callExternal(ctx context.Context, service, id, cpr string) string {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.ExternalTimeout)
	defer cancel()
	start := time.Now()
	status, err := f.get(ctx, f.cfg.ExternalURL+"/"+service+"?cpr="+cpr, id, nil)
	end := time.Now()
	outcome, msg := "", ""
	switch {
	case err != nil:
		outcome = failureKind(err)
		msg = service + ": " + outcome
	case status != http.StatusOK:
		outcome = strconv.Itoa(status)
		msg = service + ": " + http.StatusText(status)
	default:
		outcome = strconv.Itoa(status)
	}
	f.external.line(func(b []byte) []byte {
		b = appendTime(b, end)
		b = append(b, ' ')
		b = append(b, id...)
		b = append(b, ' ')
		b = append(b, service...)
		b = append(b, ' ')
		b = appendMillis(b, end.Sub(start))
		b = append(b, ' ')
		b = append(b, outcome...)
		return b
	})
	return msg
}

// callBack reads cpr's allergies from the next back instance. On failure it
// returns the status to answer (0 for "dependency failed") and a message.
func (f *Front) callBack(ctx context.Context, id, cpr string) (AllergyList, int, string) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.BackTimeout)
	defer cancel()
	n := f.next.Add(1) - 1
	base := f.backs[n%uint64(len(f.backs))]
	var list AllergyList
	status, err := f.get(ctx, base+"/patients/"+cpr+"/allergies", id, &list)
	switch {
	case err != nil:
		return list, 0, "back: " + failureKind(err)
	case status == http.StatusNotFound:
		return list, http.StatusNotFound, ErrNotFound.Error()
	case status != http.StatusOK:
		return list, 0, "back: " + http.StatusText(status)
	}
	return list, http.StatusOK, ""
}

// get sends a GET with the message id and returns the status. When into is
// non-nil and the status is 200 the JSON body is decoded into it (a decode
// failure is an error); otherwise the body is drained so the connection is
// reused.
func (f *Front) get(ctx context.Context, u, id string, into any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set(MessageIDHeader, id)
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 1<<20)
	if into != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(body).Decode(into); err != nil {
			return 0, fmt.Errorf("decoding answer: %w", err)
		}
	}
	_, err = io.Copy(io.Discard, body)
	return resp.StatusCode, err
}

// failureKind names why a call got no usable answer: "timeout" or "error".
func failureKind(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "timeout"
	}
	return "error"
}
