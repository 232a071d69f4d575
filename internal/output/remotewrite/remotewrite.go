// Package remotewrite pushes a running test's metrics to a Prometheus
// remote-write 1.0 receiver (plateau run --out prometheus-rw=URL): Prometheus
// with --web.enable-remote-write-receiver, Mimir, Thanos receive,
// VictoriaMetrics, Grafana Cloud.
//
// Each snapshot is applied to a private prom.Exporter, so the series, names
// and labels are exactly those of the /metrics endpoint (one dashboard reads
// both); the plateau_ families are then gathered and sent as one
// snappy-compressed prompb.WriteRequest stamped with the end of the second.
// Histograms go out as classic buckets (_bucket, _sum, _count).
package remotewrite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/snappy"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/prompb"

	"github.com/plateau-perf/plateau/internal/output"
	"github.com/plateau-perf/plateau/internal/output/prom"
)

// Writer is the remote-write output. Add is called from one goroutine.
type Writer struct {
	url    string
	client *http.Client
	exp    *prom.Exporter
	// job and instance label the series as a scrape would.
	job, instance string
	last          int64 // last timestamp sent, ms: samples must not go back
}

var _ output.Output = (*Writer)(nil)

// New returns a writer to url. generator, when set, becomes the generator
// label as on /metrics.
func New(url, generator string) *Writer {
	inst := "plateau"
	if generator != "" {
		inst += "-" + generator
	}
	return &Writer{url: url, client: &http.Client{Timeout: 10 * time.Second}, exp: prom.NewBare(generator),
		job: "plateau", instance: inst}
}

// Add applies the second and sends every plateau_ series.
func (w *Writer) Add(s *output.Snapshot) error {
	if err := w.exp.Add(s); err != nil {
		return err
	}
	// A second is stamped at its end, but never in the future: the run's
	// last second is partial and ends when the load stopped. Samples must
	// not go back in time either.
	ms := min(s.Time.Add(time.Second).UnixMilli(), time.Now().UnixMilli())
	if s.Final {
		ms = time.Now().UnixMilli()
	}
	ms = max(ms, w.last+1)
	w.last = ms
	req, err := w.request(ms)
	if err != nil {
		return err
	}
	return w.send(req)
}

// request gathers the exporter into a write request.
func (w *Writer) request(ms int64) (*prompb.WriteRequest, error) {
	mfs, err := w.exp.Registry().Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering: %w", err)
	}
	req := &prompb.WriteRequest{}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "plateau_") {
			continue
		}
		typ := prompb.MetricMetadata_GAUGE
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			typ = prompb.MetricMetadata_COUNTER
		case dto.MetricType_HISTOGRAM:
			typ = prompb.MetricMetadata_HISTOGRAM
		}
		req.Metadata = append(req.Metadata, prompb.MetricMetadata{Type: typ, MetricFamilyName: name, Help: mf.GetHelp()})
		for _, m := range mf.GetMetric() {
			base := w.labels(m)
			add := func(n string, v float64, extra ...prompb.Label) {
				ls := append([]prompb.Label{{Name: "__name__", Value: n}}, base...)
				ls = append(ls, extra...)
				sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
				req.Timeseries = append(req.Timeseries, prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: v, Timestamp: ms}}})
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add(name+"_bucket", float64(b.GetCumulativeCount()), prompb.Label{Name: "le", Value: formatLe(b.GetUpperBound())})
				}
				add(name+"_bucket", float64(h.GetSampleCount()), prompb.Label{Name: "le", Value: "+Inf"})
				add(name+"_sum", h.GetSampleSum())
				add(name+"_count", float64(h.GetSampleCount()))
			}
		}
	}
	return req, nil
}

func (w *Writer) labels(m *dto.Metric) []prompb.Label {
	ls := []prompb.Label{{Name: "job", Value: w.job}, {Name: "instance", Value: w.instance}}
	for _, lp := range m.GetLabel() {
		ls = append(ls, prompb.Label{Name: lp.GetName(), Value: lp.GetValue()})
	}
	return ls
}

func formatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return fmt.Sprint(v)
}

// send posts one request as remote write 1.0 asks: protobuf, snappy block
// compression, the version header.
func (w *Writer) send(req *prompb.WriteRequest) error {
	raw, err := req.Marshal()
	if err != nil {
		return fmt.Errorf("encoding write request: %w", err)
	}
	body := snappy.Encode(nil, raw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("Content-Encoding", "snappy")
	hr.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	hr.Header.Set("User-Agent", "plateau")
	resp, err := w.client.Do(hr)
	if err != nil {
		return fmt.Errorf("remote write: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("remote write: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// Close does nothing: every Add sent its request.
func (w *Writer) Close() error { return nil }
