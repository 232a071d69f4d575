// Package otlp pushes a running test's metrics over OTLP/HTTP (plateau run
// --out otlp=URL) with the OpenTelemetry Go SDK: an OpenTelemetry Collector,
// Grafana Alloy, Prometheus's OTLP receiver, any OTLP backend.
//
// Each snapshot is recorded into SDK instruments and exported at once through
// a manual reader (cumulative temporality), so every second reaches the
// receiver as one export request. Instruments (attributes in brackets):
//
//	plateau.requests            counter   {workload, phase, label}
//	plateau.errors              counter   {workload, phase, label, error.class}
//	plateau.transactions        counter   {workload, phase, label}
//	plateau.request.duration    histogram {workload, label}, seconds, explicit buckets as /metrics
//	plateau.active_users        gauge     {workload}
//	plateau.target_rate         gauge     {workload}, iterations/s
//	plateau.dropped_iterations  counter   {workload}
//	plateau.generator.cpu       counter   seconds of generator CPU
//
// The resource carries service.name=plateau, plateau.plan and, in a
// distributed run, plateau.generator.
package otlp

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/output"
	"github.com/plateau-perf/plateau/internal/output/prom"
)

// Writer is the OTLP output. Add is called from one goroutine.
type Writer struct {
	exp      *otlpmetrichttp.Exporter
	reader   *sdkmetric.ManualReader
	provider *sdkmetric.MeterProvider

	requests, errors, txs, dropped metric.Int64Counter
	cpu                            metric.Float64Counter
	duration                       metric.Float64Histogram
	users                          metric.Int64Gauge
	target                         metric.Float64Gauge
	lastCPU                        float64
	rm                             metricdata.ResourceMetrics
}

var _ output.Output = (*Writer)(nil)

// New returns a writer exporting to u: the full metrics URL
// (http://host:4318/v1/metrics), or a base URL to which /v1/metrics is added.
func New(u *url.URL, plan, generator string) (*Writer, error) {
	cp := *u
	if cp.Path == "" || cp.Path == "/" {
		cp.Path = "/v1/metrics"
	}
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(cp.String()), otlpmetrichttp.WithTimeout(10 * time.Second),
		// plateau's own queue bounds and counts what is lost; a failed
		// second is reported, not retried behind the next ones.
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false})}
	exp, err := otlpmetrichttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "plateau"), attribute.String("plateau.plan", plan)}
	if generator != "" {
		attrs = append(attrs, attribute.String("plateau.generator", generator))
	}
	res := resource.NewSchemaless(attrs...)
	w := &Writer{exp: exp, reader: sdkmetric.NewManualReader()}
	w.provider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(w.reader), sdkmetric.WithResource(res))
	m := w.provider.Meter("github.com/plateau-perf/plateau")
	var errs []error
	c := func(name, unit, desc string) metric.Int64Counter {
		x, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return x
	}
	w.requests = c("plateau.requests", "{request}", "Requests completed.")
	w.errors = c("plateau.errors", "{request}", "Failed requests by error class.")
	w.txs = c("plateau.transactions", "{transaction}", "Transactions (parent samples) completed.")
	w.dropped = c("plateau.dropped_iterations", "{iteration}", "Open-model iterations not started.")
	w.cpu, err = m.Float64Counter("plateau.generator.cpu", metric.WithUnit("s"), metric.WithDescription("Generator process CPU time."))
	errs = append(errs, err)
	w.duration, err = m.Float64Histogram("plateau.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Response time from the intended start (coordinated-omission corrected)."),
		metric.WithExplicitBucketBoundaries(prom.DurationBuckets...))
	errs = append(errs, err)
	w.users, err = m.Int64Gauge("plateau.active_users", metric.WithUnit("{user}"), metric.WithDescription("Active virtual users."))
	errs = append(errs, err)
	w.target, err = m.Float64Gauge("plateau.target_rate", metric.WithUnit("{iteration}/s"),
		metric.WithDescription("Iterations per second the running open-model phase asks for."))
	errs = append(errs, err)
	for _, e := range errs {
		if e != nil {
			return nil, fmt.Errorf("otlp instruments: %w", e)
		}
	}
	return w, nil
}

// Add records the second and exports.
func (w *Writer) Add(s *output.Snapshot) error {
	ctx := context.Background()
	for i := range s.Series {
		x := &s.Series[i]
		attrs := metric.WithAttributes(attribute.String("workload", x.Workload), attribute.String("phase", x.Phase),
			attribute.String("label", x.Label))
		if x.Tx {
			w.txs.Add(ctx, x.Count, attrs)
			continue
		}
		w.requests.Add(ctx, x.Count, attrs)
		for c, n := range x.ErrorsByClass {
			if n > 0 {
				w.errors.Add(ctx, n, metric.WithAttributes(attribute.String("workload", x.Workload), attribute.String("phase", x.Phase),
					attribute.String("label", x.Label), attribute.String("error.class", core.ErrorClass(c).String())))
			}
		}
		hattrs := metric.WithAttributes(attribute.String("workload", x.Workload), attribute.String("label", x.Label))
		for j, v := range x.Hist.Values {
			sec := float64(v) / 1e6
			for range x.Hist.Counts[j] {
				w.duration.Record(ctx, sec, hattrs)
			}
		}
	}
	for _, wl := range s.Workloads {
		a := metric.WithAttributes(attribute.String("workload", wl.Name))
		users, target := int64(wl.Users), wl.TargetRate
		if s.Final {
			users, target = 0, 0
		}
		w.users.Record(ctx, users, a)
		w.target.Record(ctx, target, a)
		w.dropped.Add(ctx, wl.Dropped, a)
	}
	if d := s.CPUSeconds - w.lastCPU; d > 0 {
		w.cpu.Add(ctx, d)
		w.lastCPU = s.CPUSeconds
	}
	if err := w.reader.Collect(ctx, &w.rm); err != nil {
		return fmt.Errorf("otlp collect: %w", err)
	}
	ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.exp.Export(ectx, &w.rm); err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	return nil
}

// Close shuts the SDK down.
func (w *Writer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := w.provider.Shutdown(ctx)
	if e := w.exp.Shutdown(ctx); err == nil {
		err = e
	}
	return err
}
