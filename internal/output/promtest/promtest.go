// Package promtest starts the real Prometheus server (the Debian package
// `prometheus`) on loopback for tests: scraping plateau's --listen endpoint or
// receiving remote write, then answering PromQL queries.
//
// Without the binary a test is skipped, except under CI=true where it fails:
// scripts/install-test-deps.sh installs it.
package promtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running Prometheus.
type Server struct {
	URL string // http://127.0.0.1:port
	t   testing.TB
}

// Options say what the server does.
type Options struct {
	// Scrape lists host:port targets scraped every ScrapeInterval at /metrics.
	Scrape         []string
	ScrapeInterval time.Duration // default 1s
	// RemoteWrite enables the remote-write receiver (/api/v1/write).
	RemoteWrite bool
	// NativeHistograms enables native histogram ingestion (protobuf scrape).
	NativeHistograms bool
}

// Binary returns the prometheus binary, skipping (or failing under CI) when
// it is not installed.
func Binary(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prometheus not installed under CI (scripts/install-test-deps.sh installs it): %v", err)
		}
		t.Skipf("prometheus not installed: %v", err)
	}
	return p
}

// FreePort returns a loopback host:port that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Start runs Prometheus until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\n", o.ScrapeInterval, o.ScrapeInterval)
	if len(o.Scrape) > 0 {
		fmt.Fprintf(&cfg, "scrape_configs:\n  - job_name: plateau\n    scrape_timeout: %s\n    static_configs:\n      - targets: [%s]\n",
			o.ScrapeInterval, strings.Join(o.Scrape, ", "))
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := FreePort(t)
	args := []string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}
	if o.RemoteWrite {
		args = append(args, "--web.enable-remote-write-receiver")
	}
	if o.NativeHistograms {
		args = append(args, "--enable-feature=native-histograms")
	}
	cmd := exec.Command(bin, args...)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	s := &Server{URL: "http://" + addr, t: t}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Sample is one element of an instant-query vector.
type Sample struct {
	Metric map[string]string
	Value  float64
	// Histogram is set for a native-histogram result.
	Histogram *Histogram
}

// Histogram is a native histogram result's count and sum.
type Histogram struct {
	Count, Sum float64
}

// Query runs an instant PromQL query and returns the vector. A query error
// (bad syntax, unknown function) is returned, never skipped.
func (s *Server) Query(q string) ([]Sample, error) { return s.QueryAt(q, time.Time{}) }

// QueryAt runs an instant query evaluated at t (now when zero).
func (s *Server) QueryAt(q string, t time.Time) ([]Sample, error) {
	form := url.Values{"query": {q}}
	if !t.IsZero() {
		form.Set("time", strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64))
	}
	resp, err := http.PostForm(s.URL+"/api/v1/query", form)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status    string `json:"status"`
		Error     string `json:"error"`
		ErrorType string `json:"errorType"`
		Data      struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric    map[string]string `json:"metric"`
				Value     []any             `json:"value"`
				Histogram []any             `json:"histogram"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %q: decoding answer: %w", q, err)
	}
	if body.Status != "success" {
		return nil, &QueryError{Query: q, Type: body.ErrorType, Msg: body.Error}
	}
	var out []Sample
	switch body.Data.ResultType {
	case "vector":
	case "scalar":
		return nil, fmt.Errorf("query %q: scalar result", q)
	default:
		return nil, fmt.Errorf("query %q: result type %s", q, body.Data.ResultType)
	}
	for _, r := range body.Data.Result {
		smp := Sample{Metric: r.Metric}
		if len(r.Value) == 2 {
			smp.Value, _ = strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
		}
		if len(r.Histogram) == 2 {
			if m, ok := r.Histogram[1].(map[string]any); ok {
				h := &Histogram{}
				h.Count, _ = strconv.ParseFloat(fmt.Sprint(m["count"]), 64)
				h.Sum, _ = strconv.ParseFloat(fmt.Sprint(m["sum"]), 64)
				smp.Histogram = h
			}
		}
		out = append(out, smp)
	}
	return out, nil
}

// Value runs a query expected to return one sample and returns its value.
func (s *Server) Value(q string) (float64, error) { return s.ValueAt(q, time.Time{}) }

// ValueAt is Value evaluated at t.
func (s *Server) ValueAt(q string, t time.Time) (float64, error) {
	v, err := s.QueryAt(q, t)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("query %q: %d samples, want 1", q, len(v))
	}
	return v[0].Value, nil
}

// Validate checks a PromQL expression's syntax with the server's parser
// (/api/v1/format_query is newer than Debian's 2.42, so a range query over
// the last minute stands in: it parses and evaluates the expression).
func (s *Server) Validate(q string) error {
	now := time.Now()
	resp, err := http.PostForm(s.URL+"/api/v1/query_range", url.Values{"query": {q},
		"start": {strconv.FormatInt(now.Add(-time.Minute).Unix(), 10)}, "end": {strconv.FormatInt(now.Unix(), 10)}, "step": {"5"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err
	}
	if body.Status != "success" {
		return fmt.Errorf("%s", body.Error)
	}
	return nil
}

// WaitTargets waits until Prometheus has picked up n scrape targets (its
// service discovery hands targets over up to 5 s after start), so that a
// run started next is scraped from its first second.
func (s *Server) WaitTargets(n int) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL + "/api/v1/targets?state=active")
		if err == nil {
			var body struct {
				Data struct {
					ActiveTargets []struct {
						ScrapeURL string `json:"scrapeUrl"`
					} `json:"activeTargets"`
				} `json:"data"`
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err == nil && len(body.Data.ActiveTargets) >= n {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("prometheus did not pick up %d targets in 30 s", n)
}

// Eventually runs a one-sample query until its value is want or 10 s have
// passed (a scrape is committed a moment after plateau has served it), and
// returns the last value.
func (s *Server) Eventually(q string, at time.Time, want float64) (float64, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := s.ValueAt(q, at)
		if err == nil && v == want {
			return v, nil
		}
		var qe *QueryError
		if errors.As(err, &qe) || time.Now().After(deadline) {
			return v, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// QueryError is a query Prometheus rejected (syntax, types).
type QueryError struct{ Query, Type, Msg string }

func (e *QueryError) Error() string { return fmt.Sprintf("query %q: %s: %s", e.Query, e.Type, e.Msg) }
