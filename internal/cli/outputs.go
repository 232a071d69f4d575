package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/output"
	"github.com/plateau-perf/plateau/internal/output/influx"
	"github.com/plateau-perf/plateau/internal/output/live"
	"github.com/plateau-perf/plateau/internal/output/otlp"
	"github.com/plateau-perf/plateau/internal/output/prom"
	"github.com/plateau-perf/plateau/internal/output/remotewrite"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/secret"
)

// outputKinds are the push outputs `--out KIND=URL` can name; each parses
// its own URL.
var outputKinds = map[string]func(u *url.URL, oc outputContext) (output.Output, error){
	"prometheus-rw": func(u *url.URL, oc outputContext) (output.Output, error) {
		return remotewrite.New(u.String(), oc.generator), nil
	},
	"otlp": func(u *url.URL, oc outputContext) (output.Output, error) {
		return otlp.New(u, oc.plan, oc.generator)
	},
	"influxdb": func(u *url.URL, oc outputContext) (output.Output, error) {
		token, _ := oc.getenv("INFLUX_TOKEN")
		return influx.New(u, oc.plan, oc.generator, token), nil
	},
}

// outputContext is what an output constructor may use.
type outputContext struct {
	plan, generator string
	getenv          func(string) (string, bool)
}

// outFlag is `--out`: a run directory, or (repeatable) KIND=URL for a push
// output. A value is an output when it starts with a known KIND followed by
// "="; anything else is the run directory, which may be given once.
type outFlag struct {
	dir  *string
	outs *[]string
}

func (o outFlag) String() string {
	if o.dir == nil {
		return ""
	}
	return *o.dir
}

func (o outFlag) Type() string { return "dir|KIND=URL" }

func (o outFlag) Set(v string) error {
	if kind, _, ok := strings.Cut(v, "="); ok {
		if _, known := outputKinds[kind]; known {
			*o.outs = append(*o.outs, v)
			return nil
		}
	}
	if *o.dir != "" {
		return fmt.Errorf("run directory given twice (%q and %q); push outputs are %s=URL", *o.dir, v, kindList())
	}
	*o.dir = v
	return nil
}

func kindList() string {
	return strings.Join(slices.Sorted(maps.Keys(outputKinds)), "|")
}

// finalScrapeWait bounds how long plateau waits, after the run, for a
// scraper that was scraping to fetch the final counters.
const finalScrapeWait = 30 * time.Second

// liveOutputs is a run's live outputs: the hub, and the listener serving
// /metrics when --listen is set.
type liveOutputs struct {
	st     *State
	hub    *output.Hub
	prom   *prom.Exporter
	live   *live.View
	srv    *http.Server
	runCtx context.Context
	// finished is set once the hub was closed (finish).
	finished bool
	addr     string
	cancel   context.CancelCauseFunc
}

// errStoppedLive is the cause when the live view's stop button ends a run.
var errStoppedLive = errors.New("stopped from the live view")

// startOutputs starts the hub, the listener and the push outputs. It returns
// the context the run should use: the live view's stop button cancels it.
func startOutputs(ctx context.Context, st *State, f runFlags, p *plan.Plan, generator string, ln *listener) (*liveOutputs, context.Context, error) {
	var names []string
	for _, w := range p.Workloads {
		names = append(names, w.Name)
	}
	lo := &liveOutputs{st: st, hub: output.NewHub(generator, names)}
	runCtx, cancel := context.WithCancelCause(ctx)
	lo.cancel, lo.runCtx = cancel, runCtx
	for _, o := range f.outputs {
		kind, raw, _ := strings.Cut(o, "=")
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			cancel(nil)
			return nil, nil, fmt.Errorf("--out %s=%s: want an http(s) URL", kind, redactURL(raw))
		}
		out, err := outputKinds[kind](u, outputContext{plan: p.Name, generator: generator, getenv: st.Getenv})
		if err != nil {
			cancel(nil)
			return nil, nil, fmt.Errorf("--out %s: %w", kind, err)
		}
		lo.hub.Add(kind, redactURL(raw), out)
	}
	if ln != nil {
		lo.addr = ln.Addr().String()
		lo.prom = prom.New(generator)
		lo.hub.Add("prometheus", "http://"+lo.addr+"/metrics", lo.prom)
		lo.live = live.New(live.Options{Name: p.Name, SLA: slaTexts(p), MultiWorkload: len(p.Workloads) > 1,
			Stop: func() {
				fmt.Fprintln(st.Stderr, "plateau: stop requested from the live view")
				cancel(errStoppedLive)
			}})
		lo.hub.Add("live", "http://"+lo.addr+"/", lo.live)
		mux := http.NewServeMux()
		mux.Handle("/metrics", lo.prom.Handler())
		mux.Handle("/", lo.live.Handler())
		lo.srv = &http.Server{Handler: live.Guard(mux, live.GuardOptions{Token: ln.token, Hosts: ln.hosts}), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = lo.srv.Serve(ln) }()
		fmt.Fprintf(st.Stderr, "plateau: live view on http://%s/ , Prometheus metrics on http://%s/metrics\n", lo.addr, lo.addr)
		if ln.token != "" {
			fmt.Fprintf(st.Stderr, "plateau: the listener needs its token (%s): open http://%s/?token=TOKEN, or send Authorization: Bearer TOKEN\n", ln.tokenFrom, lo.addr)
		}
	}
	return lo, runCtx, nil
}

// saveInfo wraps the run.json writer: the hub learns the phases and the
// start as the engine records them.
func (lo *liveOutputs) saveInfo(dir string) func(*rundir.Info) error {
	return func(in *rundir.Info) error {
		lo.hub.SetStart(in.Start)
		lo.hub.SetPhases(in.Phases)
		return rundir.WriteInfo(dir, in)
	}
}

// finish closes the push outputs (they drain their queues) and records what
// each delivered in run.json.
func (lo *liveOutputs) finish(info *rundir.Info) {
	lo.finished = true
	stats, err := lo.hub.Close()
	info.Outputs = stats
	for _, s := range stats {
		// output.Note's English, with its message for a report in
		// another language.
		text, m := rundir.NewMessage("output %s (%s): %d of %d per-second snapshots delivered, %d dropped (queue full), %d failed",
			s.Name, s.Target, s.Sent, s.Sent+s.Dropped+s.Failed, s.Dropped, s.Failed)
		if s.LastError != "" {
			text, m = rundir.NewMessage("output %s (%s): %d of %d per-second snapshots delivered, %d dropped (queue full), %d failed; last error: %s",
				s.Name, s.Target, s.Sent, s.Sent+s.Dropped+s.Failed, s.Dropped, s.Failed, s.LastError)
		}
		info.Notes = append(info.Notes, text)
		info.AddMessage(text, m)
	}
	if err != nil {
		info.Notes = append(info.Notes, err.Error())
	}
	if errors.Is(context.Cause(lo.runCtx), errStoppedLive) {
		text, m := rundir.NewMessage("the run was stopped from the live view")
		info.Notes = append(info.Notes, text)
		info.AddMessage(text, m)
	}
}

// done shows the verdict on the live page.
func (lo *liveOutputs) done(verdict string, passed bool, report string) {
	if lo.live != nil {
		lo.live.Finish(verdict, passed, report)
	}
}

func slaTexts(p *plan.Plan) []string {
	var out []string
	for _, s := range p.SLA {
		out = append(out, s.Expr)
	}
	return out
}

// close waits for a last scrape of /metrics (when something was scraping)
// and stops the listener.
func (lo *liveOutputs) close() {
	lo.cancel(nil)
	if !lo.finished {
		// The run ended on an error before its results were written:
		// stop the outputs without waiting for a scrape.
		_, _ = lo.hub.Close()
	} else if lo.prom != nil && lo.prom.Scraped() {
		fmt.Fprintf(lo.st.Stderr, "plateau: waiting up to %v for a last scrape of /metrics\n", finalScrapeWait)
		lo.prom.WaitFinalScrape(finalScrapeWait)
	}
	if lo.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = lo.srv.Shutdown(ctx)
}

// redactURL removes credentials from a URL for run.json and messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("***")
	}
	q := u.Query()
	for k := range q {
		// The secret rule, and InfluxDB 1's u= and p=.
		if secret.IsName(k) || k == "p" || k == "u" {
			q.Set(k, secret.Mask)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// listenTokenEnv is the environment variable --listen-token defaults to.
const listenTokenEnv = "PLATEAU_LISTEN_TOKEN"

// listener is the --listen socket, opened before the run directory is
// created so that a bad address leaves nothing behind.
type listener struct {
	net.Listener
	token     string   // bearer token every request must carry, or ""
	tokenFrom string   // "--listen-token" or the variable's name
	hosts     []string // Host names served besides IP literals and localhost
}

// openListener binds --listen (nil when it is not set), warns on the
// console when the address reaches beyond loopback, and reads the token.
func openListener(st *State, f runFlags) (*listener, error) {
	if f.listen == "" {
		if f.listenToken != "" {
			return nil, errors.New("--listen-token needs --listen")
		}
		return nil, nil
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:9464: %w", f.listen, err)
	}
	l := &listener{token: f.listenToken, tokenFrom: "--listen-token"}
	if l.token == "" {
		if v, ok := st.Getenv(listenTokenEnv); ok && strings.TrimSpace(v) != "" {
			l.token, l.tokenFrom = strings.TrimSpace(v), listenTokenEnv
		}
	}
	if host != "" && net.ParseIP(strings.Trim(host, "[]")) == nil {
		l.hosts = append(l.hosts, host)
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		l.hosts = append(l.hosts, name)
		if short, _, ok := strings.Cut(name, "."); ok {
			l.hosts = append(l.hosts, short)
		}
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	l.Listener = ln
	if live.Beyond(ln.Addr()) {
		what := "every interface"
		if ta, ok := ln.Addr().(*net.TCPAddr); ok && !ta.IP.IsUnspecified() {
			what = ta.IP.String()
		}
		if l.token == "" {
			fmt.Fprintf(st.Stderr, "plateau: warning: --listen %s binds %s, beyond loopback: anyone who can reach this machine can watch the run and stop it; use 127.0.0.1:PORT, or set --listen-token (or %s)\n", f.listen, what, listenTokenEnv)
		} else {
			fmt.Fprintf(st.Stderr, "plateau: warning: --listen %s binds %s, beyond loopback: the token guards it, but travels in clear over plain HTTP\n", f.listen, what)
		}
	}
	return l, nil
}

// listenBeyond reports whether a --listen address binds beyond loopback
// (no host, an unspecified or non-loopback address, a name other than
// localhost).
func listenBeyond(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip == nil || ip.IsUnspecified() || !ip.IsLoopback()
}

// generatorListen is generator i's --listen address under --generators:
// port+i of the given one (port 0 stays 0: each picks a free port, written
// in its generator.log).
func generatorListen(listen string, i int) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %w", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+i > 65535 {
		return "", fmt.Errorf("--listen %q: bad port", listen)
	}
	if p == 0 {
		return listen, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}
