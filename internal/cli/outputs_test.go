package cli

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/plateau-perf/plateau/internal/output/promtest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// outputsPlan is an open-model plan with one failing label (every third
// /flaky request answers 500) and a second workload on a slower path, so
// errors, phases and several workloads reach the outputs.
func outputsPlan(t *testing.T, seconds int) string {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flaky":
			if n.Add(1)%3 == 0 {
				w.WriteHeader(500)
			}
		case "/slow":
			time.Sleep(50 * time.Millisecond)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return writePlan(t, fmt.Sprintf(`name: live
target: %s
workloads:
  shop:
    scenario:
      - request: {name: home, url: /}
      - request: {name: flaky, url: /flaky}
    load: {steps: [{rate: 20/s, duration: %ds}, {rate: 40/s, duration: %ds}], max_users: 200}
  crawl:
    scenario:
      - request: {name: slow, url: /slow}
    load: {rate: 10/s, duration: %ds, max_users: 50}
`, srv.URL, seconds/2, seconds-seconds/2, seconds))
}

// TestListenPrometheusScrape runs a plan with --listen while the real
// Prometheus scrapes it every second; after the run, Prometheus's counters
// equal summary.json exactly.
func TestListenPrometheusScrape(t *testing.T) {
	promtest.Binary(t)
	addr := promtest.FreePort(t)
	ps := promtest.Start(t, promtest.Options{Scrape: []string{addr}, NativeHistograms: true})
	planPath := outputsPlan(t, 4)
	out := filepath.Join(t.TempDir(), "run")
	// Prometheus must scrape during the run for plateau to wait for the
	// final scrape.
	ps.WaitTargets(1)
	code, stdout, stderr := runCLI(t, "run", planPath, "-o", out, "-q", "--listen", addr)
	// The final scrape happened before plateau returned; the series go
	// stale at the next, failed one. Queries are evaluated in between.
	ended := time.Now()
	if code != ExitOK && code != ExitNotHeld { // a busy machine may drop an iteration
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	checkPromTotals(t, ps, out, ended)
	// The native histogram's count is exact too.
	sum := readSummary(t, out)
	var home int64
	for _, l := range sum.Labels {
		if l.Label == "shop: home" {
			home = l.Samples
		}
	}
	hs, err := ps.QueryAt(`plateau_request_duration_seconds{label="home"}`, ended)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Histogram == nil {
		t.Fatalf("native histogram for home: %+v", hs)
	}
	if hs[0].Histogram.Count != float64(home) {
		t.Errorf("native histogram count %v, summary.json %d", hs[0].Histogram.Count, home)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Outputs) != 2 || info.Outputs[0].Name != "prometheus" || info.Outputs[0].Sent == 0 || info.Outputs[0].Dropped != 0 {
		t.Errorf("run.json outputs: %+v", info.Outputs)
	}
}

// TestRemoteWriteToPrometheus pushes a run with --out prometheus-rw to the
// real Prometheus's remote-write receiver: its counters equal summary.json.
func TestRemoteWriteToPrometheus(t *testing.T) {
	ps := promtest.Start(t, promtest.Options{RemoteWrite: true})
	planPath := outputsPlan(t, 4)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", planPath, "-o", out, "-q", "--out", "prometheus-rw="+ps.URL+"/api/v1/write")
	if code != ExitOK && code != ExitNotHeld { // a busy machine may drop an iteration
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	checkPromTotals(t, ps, out, time.Now())
	// Classic buckets arrive too: the +Inf bucket counts every request.
	if v, err := ps.Eventually(`sum(max_over_time(plateau_request_duration_seconds_bucket{le="+Inf"}[5m]))`, time.Now(),
		float64(readSummary(t, out).Labels[len(readSummary(t, out).Labels)-1].Samples)); err != nil {
		t.Errorf("+Inf bucket: %v (%v)", v, err)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Outputs) != 1 || info.Outputs[0].Name != "prometheus-rw" || info.Outputs[0].Sent == 0 ||
		info.Outputs[0].Dropped+info.Outputs[0].Failed != 0 {
		t.Errorf("run.json outputs: %+v", info.Outputs)
	}
}

// checkPromTotals compares Prometheus's counters, evaluated at ended, with
// the run's summary.json.
func checkPromTotals(t *testing.T, ps *promtest.Server, out string, ended time.Time) {
	t.Helper()
	sum := readSummary(t, out)
	var total, errs int64
	perLabel := map[string]int64{}
	for _, l := range sum.Labels {
		if l.Label == "TOTAL" {
			total, errs = l.Samples, l.Errors
			continue
		}
		perLabel[l.Label] = l.Samples
	}
	if total == 0 || errs == 0 {
		t.Fatalf("plan made no traffic or no errors: total %d errors %d", total, errs)
	}
	// Counters are monotonic: their largest value is the final one.
	q := func(expr string, want ...float64) float64 {
		t.Helper()
		var v float64
		var err error
		if len(want) == 1 {
			v, err = ps.Eventually(expr, ended, want[0])
		} else {
			v, err = ps.ValueAt(expr, ended)
		}
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := q(`sum(max_over_time(plateau_requests_total[5m]))`, float64(total)); got != float64(total) {
		t.Errorf("prometheus requests %v, summary.json %d", got, total)
	}
	for name, n := range perLabel {
		// summary.json names a label "workload: label" when the plan
		// has several workloads.
		workload, label, _ := strings.Cut(name, ": ")
		if got := q(fmt.Sprintf(`sum(max_over_time(plateau_requests_total{workload=%q,label=%q}[5m]))`, workload, label), float64(n)); got != float64(n) {
			t.Errorf("label %s: prometheus %v, summary.json %d", label, got, n)
		}
	}
	if got := q(`sum(max_over_time(plateau_errors_total[5m]))`, float64(errs)); got != float64(errs) {
		t.Errorf("prometheus errors %v, summary.json %d", got, errs)
	}
	for class, n := range sum.Errors.ByClass {
		if got := q(fmt.Sprintf(`sum(max_over_time(plateau_errors_total{class=%q}[5m]))`, class), float64(n)); got != float64(n) {
			t.Errorf("errors of class %s: prometheus %v, summary.json %d", class, got, n)
		}
	}
	var dropped int64
	for _, n := range sum.Dropped {
		dropped += n
	}
	if got := q(`sum(max_over_time(plateau_dropped_iterations_total[5m]))`, float64(dropped)); got != float64(dropped) {
		t.Errorf("prometheus dropped %v, summary.json %d", got, dropped)
	}
	// Phases, users and target rate were seen during the run.
	if got := q(`count(count_over_time(plateau_phase_active{workload="shop"}[5m]))`); got != 2 {
		t.Errorf("phases of shop seen: %v, want 2", got)
	}
	if got := q(`max(max_over_time(plateau_target_rate{workload="shop"}[5m]))`); got != 40 {
		t.Errorf("target rate peak %v, want 40", got)
	}
	if got := q(`max(max_over_time(plateau_active_users{workload="crawl"}[5m]))`); got < 1 || got > 50 {
		t.Errorf("crawl users peak %v, want 1..50", got)
	}
	if got := q(`max(max_over_time(plateau_generator_cpu_seconds_total[5m]))`); !(got > 0) || math.IsInf(got, 0) {
		t.Errorf("generator cpu %v", got)
	}
}

// influxReceiver is an InfluxDB-compatible /write endpoint that parses every
// body with the line-protocol decoder and sums what it got.
type influxReceiver struct {
	mu     sync.Mutex
	count  map[string]int64 // "statut/transaction" → sum of count
	errs   map[string]int64 // transaction → sum of countError
	lines  int
	bad    []string
	users  int64
	params []string
	// byGenerator, when set, sums count of statut=all,transaction=all
	// per generator tag.
	byGenerator map[string]int64
}

func newInfluxReceiver(t *testing.T) (*influxReceiver, string) {
	r := &influxReceiver{count: map[string]int64{}, errs: map[string]int64{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.params = append(r.params, req.URL.RawQuery)
		dec := lineprotocol.NewDecoderWithBytes(body)
		for dec.Next() {
			m, err := dec.Measurement()
			if err != nil || string(m) != "jmeter" {
				r.bad = append(r.bad, fmt.Sprintf("measurement %q %v", m, err))
				continue
			}
			tags := map[string]string{}
			for {
				k, v, err := dec.NextTag()
				if err != nil {
					r.bad = append(r.bad, err.Error())
				}
				if k == nil {
					break
				}
				tags[string(k)] = string(v)
			}
			for {
				k, v, err := dec.NextField()
				if err != nil {
					r.bad = append(r.bad, err.Error())
				}
				if k == nil {
					break
				}
				switch string(k) {
				case "count":
					r.count[tags["statut"]+"/"+tags["transaction"]] += v.IntV()
					if r.byGenerator != nil && tags["statut"] == "all" && tags["transaction"] == "all" {
						r.byGenerator[tags["generator"]] += v.IntV()
					}
				case "countError":
					r.errs[tags["transaction"]] += v.IntV()
				case "maxAT":
					r.users = max(r.users, v.IntV())
				}
			}
			if _, err := dec.Time(lineprotocol.Millisecond, time.Time{}); err != nil {
				r.bad = append(r.bad, err.Error())
			}
			r.lines++
		}
		if err := dec.Err(); err != nil {
			r.bad = append(r.bad, err.Error())
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL + "/write?db=plateau"
}

// TestInfluxDBLineProtocol pushes a run with --out influxdb to a receiver
// that parses the line protocol: per-second counts add up to summary.json.
func TestInfluxDBLineProtocol(t *testing.T) {
	recv, url := newInfluxReceiver(t)
	planPath := outputsPlan(t, 3)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", planPath, "-o", out, "-q", "--out", "influxdb="+url)
	if code != ExitOK && code != ExitNotHeld { // a busy machine may drop an iteration
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum := readSummary(t, out)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.bad) > 0 {
		t.Fatalf("line protocol problems: %v", recv.bad)
	}
	if recv.lines == 0 {
		t.Fatal("no lines received")
	}
	for _, l := range sum.Labels {
		tr := l.Label
		if tr == "TOTAL" {
			tr = "all"
		} else if _, label, ok := strings.Cut(tr, ": "); ok {
			tr = label
		}
		if got := recv.count["all/"+tr]; got != l.Samples {
			t.Errorf("%s: count %d, summary.json %d", tr, got, l.Samples)
		}
		if got := recv.errs[tr]; got != l.Errors {
			t.Errorf("%s: countError %d, summary.json %d", tr, got, l.Errors)
		}
		if ok, ko := recv.count["ok/"+tr], recv.count["ko/"+tr]; ok+ko != l.Samples || ko != l.Errors {
			t.Errorf("%s: ok %d + ko %d, summary.json %d samples %d errors", tr, ok, ko, l.Samples, l.Errors)
		}
	}
	if recv.users < 1 {
		t.Errorf("no active users reported")
	}
	if !strings.Contains(recv.params[0], "precision=ms") || !strings.Contains(recv.params[0], "db=plateau") {
		t.Errorf("query %q", recv.params[0])
	}
	// The report counts what the output delivered and dropped.
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`output influxdb \(http://127\.0\.0\.1:\d+/write\?db=plateau\): \d+ of \d+ per-second snapshots delivered, 0 dropped`).Match(md) {
		t.Errorf("report.md does not account for the influxdb output")
	}
}

// otlpReceiver is an OTLP/HTTP metrics endpoint decoding each request with
// the OpenTelemetry Collector's own OTLP data model (pdata/pmetricotlp, as
// its otlpreceiver does); it keeps the last cumulative value per series.
type otlpReceiver struct {
	mu       sync.Mutex
	last     map[string]float64 // metric|attributes → last value (histograms: count)
	requests int
	bad      []string
	resource map[string]string
}

func newOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{last: map[string]float64{}, resource: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.URL.Path != "/v1/metrics" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			r.bad = append(r.bad, req.URL.Path+" "+req.Header.Get("Content-Type"))
		}
		er := pmetricotlp.NewExportRequest()
		if err := er.UnmarshalProto(body); err != nil {
			r.bad = append(r.bad, err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.requests++
		rms := er.Metrics().ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			rm := rms.At(i)
			rm.Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
				r.resource[k] = v.AsString()
				return true
			})
			sms := rm.ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					key := func(a pcommon.Map) string {
						return m.Name() + "|" + a.AsRaw()["workload"].(string) + "|" + fmt.Sprint(a.AsRaw()["label"]) + "|" +
							fmt.Sprint(a.AsRaw()["phase"]) + "|" + fmt.Sprint(a.AsRaw()["error.class"])
					}
					switch m.Type() {
					case pmetric.MetricTypeSum:
						if !m.Sum().IsMonotonic() || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
							r.bad = append(r.bad, m.Name()+": not a cumulative monotonic sum")
						}
						dps := m.Sum().DataPoints()
						for d := 0; d < dps.Len(); d++ {
							dp := dps.At(d)
							if _, ok := dp.Attributes().Get("workload"); !ok {
								continue // generator cpu
							}
							v := float64(dp.IntValue())
							if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
								v = dp.DoubleValue()
							}
							r.last[key(dp.Attributes())] = v
						}
					case pmetric.MetricTypeHistogram:
						dps := m.Histogram().DataPoints()
						for d := 0; d < dps.Len(); d++ {
							r.last[key(dps.At(d).Attributes())] = float64(dps.At(d).Count())
						}
					}
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		resp, _ := pmetricotlp.NewExportResponse().MarshalProto()
		w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL + "/v1/metrics"
}

func (r *otlpReceiver) sum(prefix string) float64 {
	var s float64
	for k, v := range r.last {
		if strings.HasPrefix(k, prefix) {
			s += v
		}
	}
	return s
}

// TestOTLPExport pushes a run with --out otlp to a receiver decoding OTLP
// with the Collector's pdata: the last cumulative values equal summary.json.
func TestOTLPExport(t *testing.T) {
	recv, url := newOTLPReceiver(t)
	planPath := outputsPlan(t, 3)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", planPath, "-o", out, "-q", "--out", "otlp="+url)
	if code != ExitOK && code != ExitNotHeld { // a busy machine may drop an iteration
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum := readSummary(t, out)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.bad) > 0 {
		t.Fatalf("receiver problems: %v", recv.bad)
	}
	if recv.requests < 3 {
		t.Errorf("%d export requests for a 3 s run", recv.requests)
	}
	for _, l := range sum.Labels {
		if l.Label == "TOTAL" {
			if got := recv.sum("plateau.requests|"); got != float64(l.Samples) {
				t.Errorf("requests %v, summary.json %d", got, l.Samples)
			}
			if got := recv.sum("plateau.errors|"); got != float64(l.Errors) {
				t.Errorf("errors %v, summary.json %d", got, l.Errors)
			}
			if got := recv.sum("plateau.request.duration|"); got != float64(l.Samples) {
				t.Errorf("histogram count %v, summary.json %d", got, l.Samples)
			}
			continue
		}
		workload, label, _ := strings.Cut(l.Label, ": ")
		if got := recv.sum("plateau.requests|" + workload + "|" + label + "|"); got != float64(l.Samples) {
			t.Errorf("%s: requests %v, summary.json %d", l.Label, got, l.Samples)
		}
	}
	if recv.resource["service.name"] != "plateau" || recv.resource["plateau.plan"] != "live" {
		t.Errorf("resource %v", recv.resource)
	}
}

// TestGeneratorsPushWithGeneratorLabel: under --generators 2 each generator
// pushes its own share with generator=i; the shares add up to the merged
// summary.json.
func TestGeneratorsPushWithGeneratorLabel(t *testing.T) {
	recv, url := newInfluxReceiver(t)
	recv.byGenerator = map[string]int64{}
	planPath := outputsPlan(t, 3)
	out := filepath.Join(t.TempDir(), "run")
	b, err := plateauCmd("run", planPath, "--generators", "2", "-o", out, "-q", "--out", "influxdb="+url).CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitNotHeld {
			t.Fatalf("plateau run --generators 2: %v\n%s", err, b)
		}
	}
	sum := readSummary(t, out)
	total := sum.Labels[len(sum.Labels)-1]
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.byGenerator) != 2 || recv.byGenerator["0"] == 0 || recv.byGenerator["1"] == 0 {
		t.Fatalf("counts by generator %v", recv.byGenerator)
	}
	if got := recv.byGenerator["0"] + recv.byGenerator["1"]; got != total.Samples {
		t.Errorf("generators pushed %d requests, merged summary.json %d", got, total.Samples)
	}
}

func TestGeneratorListen(t *testing.T) {
	for _, c := range []struct {
		in   string
		i    int
		want string
	}{{"127.0.0.1:9464", 0, "127.0.0.1:9464"}, {"127.0.0.1:9464", 2, "127.0.0.1:9466"}, {"[::1]:0", 3, "[::1]:0"}} {
		if got, err := generatorListen(c.in, c.i); err != nil || got != c.want {
			t.Errorf("generatorListen(%q, %d) = %q, %v; want %q", c.in, c.i, got, err, c.want)
		}
	}
	if _, err := generatorListen("nohost", 0); err == nil {
		t.Error("no error for an address without port")
	}
}
