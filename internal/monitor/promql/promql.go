// Package promql monitors the system under test through a Prometheus-
// compatible query API (Prometheus, Thanos, VictoriaMetrics, Mimir): named
// PromQL expressions are evaluated live with an instant query at every
// sample (for the live panel) and, once the run ends, with query_range over
// the run window widened by a margin before and after, whose result
// replaces the live samples (<stem>.range.csv). Every result series keeps
// its labels: a query "cpu" returning one series per pod is recorded as
// cpu{pod=a}, cpu{pod=b}, …
//
// A query that fails or returns nothing is a named note (<stem>.notes.json)
// shown in the report; the run never fails because the server did. Because
// Prometheus keeps its data, a finished run can be queried again later
// (Requery, `plateau report RUN --requery`) from <stem>.promql.json, which
// holds the configuration with the names — never the values — of the
// credential environment variables.
package promql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/monitor"
)

// MaxSeries caps the series one query keeps; the rest are counted in a
// note, so an unaggregated query against a big cluster cannot flood the
// run directory.
const MaxSeries = 200

// maxPoints is Prometheus's limit of points per series in one query_range.
const maxPoints = 11000

// SpecSuffix ends the name of the file that lets a run be queried again.
const SpecSuffix = ".promql.json"

// Kind is the promql monitor for monitor.Options.Kinds.
func Kind() monitor.Kind { return monitor.Kind{Open: Open, Validate: Validate} }

// Validate checks the configuration without contacting the server.
func Validate(cfg monitor.TargetConfig) error {
	_, err := parse(cfg)
	return err
}

// Collector queries one server.
type Collector struct {
	spec   *spec
	api    v1.API
	client *http.Client
	env    monitor.Env
	target string
	kind   string
	start  time.Time // session start (wall clock)
}

// Open parses the configuration and checks the credentials are set. It
// does not contact the server: a server that is down at the start may be up
// when the run ends, and its data is queried then.
func Open(_ context.Context, cfg monitor.TargetConfig, env monitor.Env) (monitor.Collector, error) {
	s, err := parse(cfg)
	if err != nil {
		return nil, err
	}
	a, hc, err := newAPI(s, env.Getenv)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	c := &Collector{spec: s, api: a, client: hc, env: env, target: monitor.TargetName(cfg), kind: cfg.Kind,
		start: now()}
	if s.Top > 0 && env.Dir != "" {
		if err := monitor.WriteHints(env.Dir, env.Stem, monitor.Hints{Target: c.target, Top: s.Top}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// authTransport adds the credentials and headers to every request.
type authTransport struct {
	base          http.RoundTripper
	bearer        string
	user, pass    string
	headers       map[string]string
	basic, hasTok bool
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	switch {
	case t.hasTok:
		r.Header.Set("Authorization", "Bearer "+t.bearer)
	case t.basic:
		r.SetBasicAuth(t.user, t.pass)
	}
	r.Header.Set("User-Agent", "plateau-monitor")
	return t.base.RoundTrip(r)
}

// newAPI builds the client; credentials come from the environment and are
// kept in memory only.
func newAPI(s *spec, getenv func(string) (string, bool)) (v1.API, *http.Client, error) {
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	tr := &authTransport{base: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute},
		headers: s.Headers}
	if s.BearerTokenEnv != "" {
		v, ok := getenv(s.BearerTokenEnv)
		if !ok || v == "" {
			return nil, nil, fmt.Errorf("bearer_token_env: environment variable %s is not set", s.BearerTokenEnv)
		}
		tr.bearer, tr.hasTok = v, true
	}
	if s.UsernameEnv != "" {
		u, ok1 := getenv(s.UsernameEnv)
		p, ok2 := getenv(s.PasswordEnv)
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("basic auth: environment variables %s and %s must be set", s.UsernameEnv, s.PasswordEnv)
		}
		tr.user, tr.pass, tr.basic = u, p, true
	}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	c, err := api.NewClient(api.Config{Address: s.URL, Client: hc})
	if err != nil {
		return nil, nil, fmt.Errorf("url: %w", err)
	}
	return v1.NewAPI(c), hc, nil
}

// Collect runs every query as an instant query at the sample time. A query
// error becomes a note and the other queries go on; when every query fails
// to reach the server the sample is a gap.
func (c *Collector) Collect(ctx context.Context, b *monitor.Batch) error {
	failed := 0
	var last error
	for _, name := range c.spec.names {
		q := c.spec.Queries[name]
		v, _, err := c.api.Query(ctx, q.Expr, b.Time)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed++
			last = err
			continue
		}
		// Problems of single queries (no series, wrong result type) are
		// noted by the range query at the end, which replaces these samples.
		_, _, _ = addInstant(b, name, q.Unit, v)
	}
	if failed == len(c.spec.names) && last != nil {
		return fmt.Errorf("querying %s: %s", c.spec.URL, errText(last))
	}
	return nil
}

// addInstant adds an instant-query result; it returns how many series it
// added and dropped.
func addInstant(b *monitor.Batch, name, unit string, v model.Value) (int, int, error) {
	switch r := v.(type) {
	case model.Vector:
		sort.Slice(r, func(i, j int) bool { return r[i].Metric.Before(r[j].Metric) })
		n := 0
		for _, s := range r {
			if n == MaxSeries {
				return n, len(r) - n, nil
			}
			b.Add(SeriesName(name, s.Metric), unit, float64(s.Value))
			n++
		}
		return n, 0, nil
	case *model.Scalar:
		b.Add(name, unit, float64(r.Value))
		return 1, 0, nil
	}
	return 0, 0, fmt.Errorf("the query returns a %s; write an expression that gives an instant vector or a scalar", v.Type())
}

// SeriesName is a result series' metric name: the query name with the
// series' labels (all but __name__), sorted by label name.
func SeriesName(query string, m model.Metric) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != model.MetricNameLabel {
			keys = append(keys, string(k))
		}
	}
	sort.Strings(keys)
	kv := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		kv = append(kv, k, string(m[model.LabelName(k)]))
	}
	return monitor.MetricName(query, kv...)
}

// errText is an error's text without the request URL's query string (the
// client quotes whole URLs; the expressions are long and already named).
func errText(err error) string {
	s := err.Error()
	if i := strings.Index(s, "?"); i >= 0 && strings.Contains(s[:i], "/api/v1/") {
		if j := strings.IndexAny(s[i:], "\": "); j >= 0 {
			s = s[:i] + s[i+j:]
		} else {
			s = s[:i]
		}
	}
	return s
}

// window is the span a run's range queries cover.
type window struct {
	RunStart time.Time `json:"run_start"`
	RunEnd   time.Time `json:"run_end"`
}

// specFile is <stem>.promql.json: what Requery needs to query again.
type specFile struct {
	Target string `json:"target"`
	Kind   string `json:"kind"`
	Stem   string `json:"stem"`
	window
	IntervalS float64          `json:"interval_s"`
	URL       string           `json:"url"`
	Queries   map[string]Query `json:"queries"`
	Top       int              `json:"top,omitempty"`
	// Credentials: the names of environment variables, never values.
	BearerTokenEnv string            `json:"bearer_token_env,omitempty"`
	UsernameEnv    string            `json:"username_env,omitempty"`
	PasswordEnv    string            `json:"password_env,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	BeforeS        float64           `json:"before_s"`
	AfterS         float64           `json:"after_s"`
	StepS          float64           `json:"step_s,omitempty"`
	QueriedAt      time.Time         `json:"queried_at"`
}

// Finish queries the run window with query_range and writes the range
// series, the notes and the spec file.
func (c *Collector) Finish(ctx context.Context) error {
	now := time.Now
	if c.env.Now != nil {
		now = c.env.Now
	}
	sf := specFile{Target: c.target, Kind: c.kind, Stem: c.env.Stem, window: window{RunStart: c.start.UTC(), RunEnd: now().UTC()},
		IntervalS: c.env.Interval.Seconds(), URL: c.spec.URL, Queries: c.spec.Queries, Top: c.spec.Top,
		BearerTokenEnv: c.spec.BearerTokenEnv, UsernameEnv: c.spec.UsernameEnv, PasswordEnv: c.spec.PasswordEnv,
		Headers: c.spec.Headers, BeforeS: margin(c.spec.Before).Seconds(), AfterS: margin(c.spec.After).Seconds(),
		StepS: time.Duration(c.spec.Step).Seconds()}
	return queryRange(ctx, c.api, c.env.Dir, &sf, now())
}

func margin(d duration) time.Duration {
	if d == 0 {
		return DefaultMargin
	}
	return time.Duration(d)
}

// Step is the query_range resolution for a window: the interval, coarsened
// so no series exceeds Prometheus's point limit.
func Step(interval, span time.Duration) time.Duration {
	step := interval
	if step <= 0 {
		step = monitor.DefaultInterval
	}
	if min := span / (maxPoints - 1); step < min {
		step = (min + time.Second - 1).Truncate(time.Second)
	}
	return step
}

// queryRange runs every query of sf over its window, up to now, and writes
// <stem>.range.csv, <stem>.notes.json and <stem>.promql.json.
func queryRange(ctx context.Context, a v1.API, dir string, sf *specFile, now time.Time) error {
	from := sf.RunStart.Add(-time.Duration(sf.BeforeS * float64(time.Second)))
	to := sf.RunEnd.Add(time.Duration(sf.AfterS * float64(time.Second)))
	if to.After(now) {
		to = now
	}
	step := time.Duration(sf.StepS * float64(time.Second))
	if step <= 0 {
		step = Step(time.Duration(sf.IntervalS*float64(time.Second)), to.Sub(from))
	}
	// Align on the step so two queries of the same run give the same
	// timestamps.
	from = from.Truncate(step)
	names := make([]string, 0, len(sf.Queries))
	for n := range sf.Queries {
		names = append(names, n)
	}
	sort.Strings(names)
	var (
		series []core.Series
		notes  []monitor.Note
	)
	note := func(subject, level, text string) {
		notes = append(notes, monitor.Note{Target: sf.Target, Kind: sf.Kind, Subject: subject, Level: level, Text: text})
	}
	failed := 0
	for _, name := range names {
		q := sf.Queries[name]
		v, warns, err := a.QueryRange(ctx, q.Expr, v1.Range{Start: from, End: to, Step: step})
		if err != nil {
			failed++
			note(name, monitor.NoteError, "query failed: "+errText(err))
			continue
		}
		for _, w := range warns {
			note(name, monitor.NoteInfo, "server warning: "+w)
		}
		m, ok := v.(model.Matrix)
		if !ok {
			note(name, monitor.NoteError, fmt.Sprintf("query_range returned a %s, not a range of series", v.Type()))
			continue
		}
		if len(m) == 0 {
			note(name, monitor.NoteEmpty, "the query returned no series for the run window; check the metric names and the filter against the server")
			continue
		}
		sort.Slice(m, func(i, j int) bool { return m[i].Metric.Before(m[j].Metric) })
		if len(m) > MaxSeries {
			note(name, monitor.NoteInfo, fmt.Sprintf("%d series beyond the first %d were dropped; aggregate with sum by (...)", len(m)-MaxSeries, MaxSeries))
			m = m[:MaxSeries]
		}
		for _, ss := range m {
			s := core.Series{Target: sf.Target, Kind: sf.Kind, Metric: SeriesName(name, ss.Metric), Unit: q.Unit}
			for _, p := range ss.Values {
				if math.IsNaN(float64(p.Value)) {
					continue
				}
				s.Points = append(s.Points, core.Point{T: p.Timestamp.Time().UTC(), V: float64(p.Value)})
			}
			series = append(series, s)
		}
	}
	sf.QueriedAt = now.UTC()
	var errs []error
	if failed < len(names) {
		// Keep the live samples when the server could not answer at all.
		if err := monitor.WriteRange(dir, sf.Stem, sf.Target, sf.Kind, series); err != nil {
			errs = append(errs, err)
		}
	}
	if err := monitor.WriteNotes(dir, sf.Stem, notes); err != nil {
		errs = append(errs, err)
	}
	b, err := json.MarshalIndent(sf, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, sf.Stem+SpecSuffix), append(b, '\n'), 0o644)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("writing query spec: %w", err))
	}
	return errors.Join(errs...)
}

// Requery queries every promql target of a finished run again (its
// monitor directory's *.promql.json), replacing the range series and notes.
// It returns one line per target for the user.
func Requery(ctx context.Context, runDir string, getenv func(string) (string, bool), now time.Time) ([]string, error) {
	return monitor.RequerySpecs(runDir, SpecSuffix, func(dir string, sf *specFile) (string, error) {
		s := &spec{Config: Config{URL: sf.URL, BearerTokenEnv: sf.BearerTokenEnv, UsernameEnv: sf.UsernameEnv,
			PasswordEnv: sf.PasswordEnv, Headers: sf.Headers}}
		a, _, err := newAPI(s, getenv)
		if err == nil {
			err = queryRange(ctx, a, dir, sf, now)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", sf.Target, err)
		}
		return fmt.Sprintf("%s: %d queries against %s", sf.Target, len(sf.Queries), sf.URL), nil
	})
}

// Close implements monitor.Collector.
func (c *Collector) Close() error {
	c.client.CloseIdleConnections()
	return nil
}
