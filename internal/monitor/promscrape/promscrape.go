// Package promscrape monitors any Prometheus text-exposition endpoint
// (node_exporter on a remote host, a JMX exporter, cAdvisor, a service's own
// /metrics): it scrapes the URL at every sample, keeps the series the
// selectors pick, turns counters into per-second rates (resets detected)
// and passes gauges through. It is the documented way to watch hosts that
// plateau does not run on. Parsing uses the Prometheus project's own text
// parser (github.com/prometheus/common/expfmt).
package promscrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// MaxSeries caps the series one target keeps per scrape, so an unselective
// configuration against a big exporter cannot flood the run directory.
const MaxSeries = 2000

// maxBody caps a scrape's size.
const maxBody = 32 << 20

// accept asks for the classic text format, which every exporter serves.
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Kind is the Prometheus monitor for monitor.Options.Kinds.
func Kind() monitor.Kind {
	return monitor.Kind{Open: Open, Validate: Validate}
}

// Validate checks the URLs and the selectors.
func Validate(cfg monitor.TargetConfig) error {
	if cfg.URL == "" && len(cfg.Endpoints) == 0 {
		return errors.New("url or targets is required")
	}
	if _, err := endpoints(cfg); err != nil {
		return err
	}
	for _, s := range cfg.Series {
		if _, err := ParseSelector(s); err != nil {
			return err
		}
	}
	return nil
}

// endpoints lists a target's scrape URLs: url, then every entry of
// targets (host:port means http://host:port/metrics).
func endpoints(cfg monitor.TargetConfig) ([]string, error) {
	var out []string
	for i, e := range append([]string{cfg.URL}, cfg.Endpoints...) {
		if e == "" {
			continue
		}
		if i > 0 && !strings.Contains(e, "://") {
			e = "http://" + e + "/metrics"
		}
		u, err := url.Parse(e)
		if err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("url %q: want http:// or https:// with a host, or host:port", e)
		}
		out = append(out, e)
	}
	return out, nil
}

// endpoint is one scraped URL and the instance label its series get when
// the target has several.
type endpoint struct {
	url, instance string
}

// Collector scrapes one or more endpoints.
type Collector struct {
	eps       []endpoint
	selectors []Selector
	client    *http.Client
	parser    expfmt.TextParser

	prev, cur map[string]float64 // counter values by output name
	prevT     time.Time
	havePrev  bool
	// names caches the output name of a series by its identity, so the
	// label sorting and formatting happen once per series, not per scrape.
	names map[string]string
	rows  []row
}

type row struct {
	name, unit string
	v          float64
	counter    bool
}

// Open scrapes once: an endpoint that does not answer cannot start.
func Open(ctx context.Context, cfg monitor.TargetConfig, _ monitor.Env) (monitor.Collector, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	for _, ep := range c.eps {
		if _, err := c.scrape(ctx, ep.url); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// New builds a collector without scraping.
func New(cfg monitor.TargetConfig) (*Collector, error) {
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	urls, _ := endpoints(cfg) // validated
	c := &Collector{
		client: &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{
				Proxy:               http.ProxyFromEnvironment,
				MaxIdleConnsPerHost: 1,
				IdleConnTimeout:     time.Minute,
				DisableCompression:  false,
			},
		},
		parser: expfmt.NewTextParser(model.UTF8Validation),
		prev:   map[string]float64{}, cur: map[string]float64{},
		names: map[string]string{},
	}
	for _, e := range urls {
		ep := endpoint{url: e}
		if len(urls) > 1 {
			u, _ := url.Parse(e)
			ep.instance = u.Host
		}
		c.eps = append(c.eps, ep)
	}
	for _, s := range cfg.Series {
		sel, _ := ParseSelector(s) // validated
		c.selectors = append(c.selectors, sel)
	}
	return c, nil
}

// scrape fetches and parses the endpoint.
func (c *Collector) scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "plateau-monitor")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scraping %s: HTTP %s", url, resp.Status)
	}
	fams, err := c.parser.TextToMetricFamilies(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", url, err)
	}
	return fams, nil
}

// Collect implements monitor.Collector.
func (c *Collector) Collect(ctx context.Context, b *monitor.Batch) error {
	t0 := time.Now()
	c.rows = c.rows[:0]
	dropped := 0
	for _, ep := range c.eps {
		fams, err := c.scrape(ctx, ep.url)
		if err != nil {
			c.havePrev = false
			return err
		}
		names := make([]string, 0, len(fams))
		for n := range fams {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !c.wantFamily(n) {
				continue
			}
			for _, m := range fams[n].GetMetric() {
				if !c.wantMetric(n, m, ep.instance) {
					continue
				}
				if len(c.rows) >= MaxSeries {
					dropped++
					continue
				}
				c.addMetric(fams[n], m, ep.instance)
			}
		}
	}
	took := time.Since(t0)
	clear(c.cur)
	dt := b.Mono.Sub(c.prevT).Seconds()
	for _, r := range c.rows {
		if !r.counter {
			b.Add(r.name, r.unit, r.v)
			continue
		}
		c.cur[r.name] = r.v
		p, ok := c.prev[r.name]
		if !c.havePrev || !ok || dt <= 0 {
			continue // a rate needs two scrapes
		}
		inc := r.v - p
		if inc < 0 {
			// Counter reset (exporter restarted): it counted up from zero.
			inc = r.v
		}
		b.Add(r.name, r.unit, inc/dt)
	}
	b.Add("scrape_duration_s", "s", took.Seconds())
	b.Add("scrape_series", "", float64(len(c.rows)))
	if dropped > 0 {
		b.Add("scrape_series_dropped", "", float64(dropped))
	}
	c.prev, c.cur = c.cur, c.prev
	c.prevT, c.havePrev = b.Mono, true
	return nil
}

func (c *Collector) wantFamily(name string) bool {
	if len(c.selectors) == 0 {
		return true
	}
	for _, s := range c.selectors {
		if s.Name == "" || s.Name == name {
			return true
		}
	}
	return false
}

func (c *Collector) wantMetric(name string, m *dto.Metric, instance string) bool {
	if len(c.selectors) == 0 {
		return true
	}
	label := func(k string) string {
		if k == "instance" && instance != "" {
			return instance
		}
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k {
				return lp.GetValue()
			}
		}
		return ""
	}
	for _, s := range c.selectors {
		if s.Matches(name, label) {
			return true
		}
	}
	return false
}

// addMetric turns one exposition metric into rows: counters (and the
// _sum, _count and _bucket parts of summaries and histograms) are marked
// for rates and get a _per_s suffix; gauges and untyped values pass.
func (c *Collector) addMetric(f *dto.MetricFamily, m *dto.Metric, inst string) {
	name := f.GetName()
	unit := unitOf(name)
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		c.push(name+"_per_s", m, inst, "", "", rateUnit(unit), m.GetCounter().GetValue(), true)
	case dto.MetricType_GAUGE:
		c.push(name, m, inst, "", "", unit, m.GetGauge().GetValue(), false)
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		for _, q := range s.GetQuantile() {
			c.push(name, m, inst, "quantile", formatFloat(q.GetQuantile()), unit, q.GetValue(), false)
		}
		c.push(name+"_sum_per_s", m, inst, "", "", rateUnit(unit), s.GetSampleSum(), true)
		c.push(name+"_count_per_s", m, inst, "", "", "1/s", float64(s.GetSampleCount()), true)
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		for _, bk := range h.GetBucket() {
			c.push(name+"_bucket_per_s", m, inst, "le", formatFloat(bk.GetUpperBound()), "1/s", float64(bk.GetCumulativeCount()), true)
		}
		c.push(name+"_sum_per_s", m, inst, "", "", rateUnit(unit), h.GetSampleSum(), true)
		c.push(name+"_count_per_s", m, inst, "", "", "1/s", float64(h.GetSampleCount()), true)
	default: // untyped
		c.push(name, m, inst, "", "", unit, m.GetUntyped().GetValue(), false)
	}
}

func (c *Collector) push(base string, m *dto.Metric, inst, extraK, extraV, unit string, v float64, counter bool) {
	if math.IsNaN(v) {
		return
	}
	c.rows = append(c.rows, row{name: c.name(base, m, inst, extraK, extraV), unit: unit, v: v, counter: counter})
}

// name builds base{k=v,...} with labels sorted by name (the order
// Prometheus itself uses), values made CSV-safe by monitor.LabelValue.
func (c *Collector) name(base string, m *dto.Metric, inst, extraK, extraV string) string {
	var id strings.Builder
	id.WriteString(inst)
	id.WriteByte(0)
	id.WriteString(base)
	for _, lp := range m.GetLabel() {
		id.WriteByte(0)
		id.WriteString(lp.GetName())
		id.WriteByte(0)
		id.WriteString(lp.GetValue())
	}
	id.WriteByte(0)
	id.WriteString(extraK)
	id.WriteByte(0)
	id.WriteString(extraV)
	key := id.String()
	if n, ok := c.names[key]; ok {
		return n
	}
	type kv struct{ k, v string }
	labels := make([]kv, 0, len(m.GetLabel())+2)
	for _, lp := range m.GetLabel() {
		if inst != "" && lp.GetName() == "instance" {
			continue // the endpoint names the instance
		}
		labels = append(labels, kv{lp.GetName(), lp.GetValue()})
	}
	if inst != "" {
		labels = append(labels, kv{"instance", inst})
	}
	if extraK != "" {
		labels = append(labels, kv{extraK, extraV})
	}
	sort.Slice(labels, func(i, j int) bool { return labels[i].k < labels[j].k })
	pairs := make([]string, 0, 2*len(labels))
	for _, l := range labels {
		pairs = append(pairs, l.k, l.v)
	}
	n := monitor.MetricName(base, pairs...)
	if len(c.names) > 4*MaxSeries {
		clear(c.names) // series churn: start over rather than grow forever
	}
	c.names[key] = n
	return n
}

// unitOf reads the unit from the Prometheus naming convention.
func unitOf(name string) string {
	n := strings.TrimSuffix(name, "_total")
	switch {
	case strings.HasSuffix(n, "_bytes"):
		return "bytes"
	case strings.HasSuffix(n, "_seconds"):
		return "s"
	case strings.HasSuffix(n, "_ratio"):
		return "ratio"
	case strings.HasSuffix(n, "_celsius"):
		return "°C"
	}
	return ""
}

func rateUnit(u string) string {
	if u == "" {
		return "1/s"
	}
	return u + "/s"
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Close implements monitor.Collector.
func (c *Collector) Close() error {
	c.client.CloseIdleConnections()
	return nil
}
