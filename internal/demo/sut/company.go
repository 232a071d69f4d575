package sut

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The company services model reference study 003 (ServiceComb's company
// demo): a manager that authenticates and routes every call, a worker that
// computes, and a beekeeper that asks the worker. The manager serves at most
// Workers calls at a time and logs each call in one of three log
// configurations, which is what the study compares.

// Log configurations of the manager (reference 003's log4j settings).
const (
	// LogSync writes each line to the log before answering, one writer at a
	// time (a console appender: log4j stdout).
	LogSync = "sync"
	// LogAsync hands each line to a queue that one background writer
	// drains (log4j2's asynchronous logger): calls do not wait, the queue
	// costs memory.
	LogAsync = "async"
	// LogNone logs nothing.
	LogNone = "none"
)

// CompanyConfig configures one company-demo service.
type CompanyConfig struct {
	// Role is "manager", "worker" or "beekeeper".
	Role string
	// WorkerURL (manager, beekeeper) and BeekeeperURL (manager) are the
	// downstream services.
	WorkerURL, BeekeeperURL string
	// Workers bounds the manager's concurrent calls (default 8).
	Workers int
	// Log is the manager's log configuration (default LogSync) and LogFile
	// where it writes; LineCost is what writing one line costs the writer
	// (default 2 ms: a synchronous console under load).
	Log      string
	LogFile  string
	LineCost time.Duration
	// Compute is the worker's time per term (default 8 ms).
	Compute time.Duration
	// Secret signs the manager's tokens (random when empty).
	Secret    string
	AccessLog string
}

// Company is one company-demo service:
//
//	manager:   POST /doorman/login (form username, password) → 200, Authorization header
//	           GET /manager/worker/fibonacci/term?n=N
//	           GET /manager/beekeeper/drone/ancestors/N, /manager/beekeeper/queen/ancestors/N
//	worker:    GET /fibonacci/term?n=N → {"term": …}
//	beekeeper: GET /drone/ancestors/N, /queen/ancestors/N → {"ancestors": …} (asks the worker)
type Company struct {
	cfg    CompanyConfig
	client *http.Client
	signer tokenSigner
	access *logFile
	slots  chan struct{}
	// waiting counts the calls waiting for one of the manager's slots.
	waiting atomic.Int64

	logMu   sync.Mutex
	logF    *os.File
	queue   chan string
	queued  atomic.Int64
	closing atomic.Bool
	logDone chan struct{}
}

// NewCompany checks cfg and opens its logs.
func NewCompany(cfg CompanyConfig) (*Company, error) {
	c := &Company{cfg: cfg, client: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConns: 512, MaxIdleConnsPerHost: 256}}}
	var err error
	for _, u := range []*string{&c.cfg.WorkerURL, &c.cfg.BeekeeperURL} {
		if *u != "" {
			if *u, err = baseURL(*u); err != nil {
				return nil, fmt.Errorf("company: %w", err)
			}
		}
	}
	switch cfg.Role {
	case "manager":
		if c.cfg.WorkerURL == "" || c.cfg.BeekeeperURL == "" {
			return nil, errors.New("company: the manager needs the worker's and the beekeeper's URL")
		}
		if c.cfg.Workers <= 0 {
			c.cfg.Workers = 8
		}
		c.slots = make(chan struct{}, c.cfg.Workers)
		if c.cfg.Secret == "" {
			c.cfg.Secret = newMessageID()
		}
		c.signer = tokenSigner{secret: []byte(c.cfg.Secret), ttl: time.Hour}
		if c.cfg.LineCost <= 0 {
			c.cfg.LineCost = 2 * time.Millisecond
		}
		switch c.cfg.Log {
		case "":
			c.cfg.Log = LogSync
		case LogSync, LogAsync, LogNone:
		default:
			return nil, fmt.Errorf("company: log %q: want %s, %s or %s", c.cfg.Log, LogSync, LogAsync, LogNone)
		}
		if c.cfg.Log != LogNone {
			if c.cfg.LogFile == "" {
				return nil, errors.New("company: the manager's log configuration needs a log file")
			}
			if c.logF, err = os.OpenFile(c.cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
				return nil, fmt.Errorf("company: %w", err)
			}
		}
		if c.cfg.Log == LogAsync {
			c.queue = make(chan string, 1<<20)
			c.logDone = make(chan struct{})
			go c.drain()
		}
	case "beekeeper":
		if c.cfg.WorkerURL == "" {
			return nil, errors.New("company: the beekeeper needs the worker's URL")
		}
	case "worker":
		if c.cfg.Compute <= 0 {
			c.cfg.Compute = 8 * time.Millisecond
		}
	default:
		return nil, fmt.Errorf("company: role %q: want manager, worker or beekeeper", cfg.Role)
	}
	if c.access, err = openLog(cfg.AccessLog, 0); err != nil {
		return nil, fmt.Errorf("company: %w", err)
	}
	return c, nil
}

// Serve answers on ln until ctx ends. The manager's metrics page is kept
// out of its access log: the log holds the calls, not the monitor's
// scrapes.
func (c *Company) Serve(ctx context.Context, ln net.Listener) error {
	h := withAccessLog(c.access, c.handler())
	if c.cfg.Role == "manager" {
		mux := http.NewServeMux()
		mux.HandleFunc("GET "+CompanyMetricsPath, c.metrics)
		mux.Handle("/", h)
		h = mux
	}
	return serve(ctx, ln, h, c.Close)
}

// Close drains the log queue and closes the logs.
func (c *Company) Close() error {
	if c.queue != nil {
		c.closing.Store(true) // the rest of the queue is written at once
		close(c.queue)
		<-c.logDone
	}
	var err error
	if c.logF != nil {
		err = c.logF.Close()
	}
	return errors.Join(err, c.access.close())
}

func (c *Company) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	switch c.cfg.Role {
	case "worker":
		mux.HandleFunc("GET /fibonacci/term", c.term)
	case "beekeeper":
		mux.HandleFunc("GET /drone/ancestors/{n}", c.ancestors("drone"))
		mux.HandleFunc("GET /queen/ancestors/{n}", c.ancestors("queen"))
	case "manager":
		mux.HandleFunc("POST /doorman/login", c.login)
		mux.Handle("GET /manager/", c.managed(http.StripPrefix("/manager", http.HandlerFunc(c.route))))
	}
	return mux
}

// fib is the n-th Fibonacci term, n ≤ 90.
func fib(n int) uint64 {
	a, b := uint64(0), uint64(1)
	for range n {
		a, b = b, a+b
	}
	return a
}

func intParam(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= 90
}

func (c *Company) term(w http.ResponseWriter, r *http.Request) {
	n, ok := intParam(r.URL.Query().Get("n"))
	if !ok {
		writeJSONError(w, http.StatusBadRequest, "n: want 0…90")
		return
	}
	time.Sleep(c.cfg.Compute)
	writeJSON(w, http.StatusOK, map[string]uint64{"term": fib(n)})
}

// ancestors: a drone has one parent, a queen two, per generation; the
// count is a Fibonacci term the beekeeper asks the worker for.
func (c *Company) ancestors(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, ok := intParam(r.PathValue("n"))
		if !ok {
			writeJSONError(w, http.StatusBadRequest, "n: want 0…90")
			return
		}
		if kind == "queen" {
			n++
		}
		var out struct {
			Term uint64 `json:"term"`
		}
		if status, err := c.get(r.Context(), c.cfg.WorkerURL+"/fibonacci/term?n="+strconv.Itoa(n+1), &out); err != nil {
			writeJSONError(w, http.StatusBadGateway, "worker: "+err.Error())
			return
		} else if status != http.StatusOK {
			writeJSONError(w, status, "worker answered "+strconv.Itoa(status))
			return
		}
		writeJSON(w, http.StatusOK, map[string]uint64{"ancestors": out.Term})
	}
}

func (c *Company) get(ctx context.Context, u string, into any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, errors.New(failureKind(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			return 0, err
		}
	}
	return resp.StatusCode, nil
}

func (c *Company) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("username") == "" || r.PostForm.Get("password") == "" {
		writeJSONError(w, http.StatusBadRequest, "want form fields username and password")
		return
	}
	w.Header().Set("Authorization", c.signer.issue(r.PostForm.Get("username"), time.Now()))
	writeJSON(w, http.StatusOK, map[string]string{"user": r.PostForm.Get("username")})
}

// managed checks the token, takes one of the manager's worker slots for
// the call and logs it in the configured way.
func (c *Company) managed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := c.signer.verify(r.Header.Get("Authorization"), time.Now()); err != nil {
			writeJSONError(w, http.StatusUnauthorized, "invalid token")
			return
		}
		c.waiting.Add(1)
		select {
		case c.slots <- struct{}{}:
			c.waiting.Add(-1)
			defer func() { <-c.slots }()
		case <-r.Context().Done():
			c.waiting.Add(-1)
			return
		}
		h.ServeHTTP(w, r)
		c.log(time.Now().UTC().Format(TimeLayout) + " [INFO] " + r.Method + " " + r.URL.Path + " served\n")
	})
}

// CompanyMetricsPath is where the manager exposes its slots in the
// Prometheus text format, as the demo's balancer exposes its pools: a
// study monitors it (a prometheus target) and the capacity analysis judges
// the calls in progress against the slots — manager_connections (calls
// holding a slot), manager_max_connections (Workers) and manager_queued
// (calls waiting for one). It is what the server counts, so a knee the
// slots cause is named from the count, not read off the throughput curve.
const CompanyMetricsPath = "/-/metrics"

func (c *Company) metrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	for _, m := range []struct {
		name, help string
		v          int64
	}{
		{"manager_connections", "calls holding one of the manager's slots", int64(len(c.slots))},
		{"manager_max_connections", "the manager's slots (calls served at once)", int64(cap(c.slots))},
		{"manager_queued", "calls waiting for a slot", c.waiting.Load()},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", m.name, m.help, m.name, m.name, m.v)
	}
}

// log writes one line in the configured way. A synchronous line costs the
// caller LineCost with the writer held; an asynchronous one is queued.
func (c *Company) log(line string) {
	switch c.cfg.Log {
	case LogSync:
		c.logMu.Lock()
		c.write(line)
		c.logMu.Unlock()
	case LogAsync:
		c.queued.Add(1)
		c.queue <- line
	}
}

// write puts one line in the file at LineCost (a slow console).
func (c *Company) write(line string) {
	_, _ = c.logF.WriteString(line)
	if !c.closing.Load() {
		time.Sleep(c.cfg.LineCost)
	}
}

// drain is the asynchronous writer: it keeps the queued lines in memory
// until it gets to them (the memory the reference saw asynchronous logging
// take) and writes them at the file's pace.
func (c *Company) drain() {
	defer close(c.logDone)
	for line := range c.queue {
		c.write(line)
		c.queued.Add(-1)
	}
}

func (c *Company) route(w http.ResponseWriter, r *http.Request) {
	var target string
	switch p := r.URL.Path; {
	case p == "/worker/fibonacci/term":
		target = c.cfg.WorkerURL + "/fibonacci/term?" + r.URL.RawQuery
	case strings.HasPrefix(p, "/beekeeper/"):
		target = c.cfg.BeekeeperURL + strings.TrimPrefix(p, "/beekeeper")
	default:
		writeJSONError(w, http.StatusNotFound, "no such route")
		return
	}
	var out map[string]any
	status, err := c.get(r.Context(), target, &out)
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, err.Error())
		return
	}
	if status != http.StatusOK {
		writeJSONError(w, status, "downstream answered "+strconv.Itoa(status))
		return
	}
	writeJSON(w, http.StatusOK, out)
}
