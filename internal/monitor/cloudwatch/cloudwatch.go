// Package cloudwatch reads AWS CloudWatch metrics of the system under test
// (ECS services, RDS instances, MSK brokers…) for the run window once the
// run ends, with GetMetricData from the AWS SDK for Go v2. Each metric spec
// is expanded with ListMetrics into every matching dimension set (one series
// per ECS service, per database instance, per broker), whose dimensions
// become the series' labels. The series go to <stem>.range.csv like the
// promql monitor's; a metric with no data or an API error is a named note.
//
// Credentials come from the standard AWS chain (environment, shared config
// and credentials files, SSO, web identity, instance/task roles) and are
// never written anywhere. CloudWatch's own data arrives minutes late and
// each request costs money, so nothing is queried during the run.
package cloudwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	cw "github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/monitor"
)

// Config is a cloudwatch target's configuration.
type Config struct {
	// Region is the AWS region (default: the chain's, e.g. AWS_REGION).
	Region string `yaml:"region"`
	// Profile selects a shared-config profile.
	Profile string `yaml:"profile"`
	// Endpoint overrides the CloudWatch endpoint (an emulator, a VPC
	// endpoint).
	Endpoint string `yaml:"endpoint"`
	// Recipes add built-in metric sets: ecs, rds, msk.
	Recipes []string `yaml:"recipes"`
	// Dimensions narrow the recipes' metrics (ClusterName: folio).
	Dimensions map[string]string `yaml:"dimensions"`
	// Metrics are the user's own metric specs.
	Metrics map[string]Metric `yaml:"metrics"`
	// Period is the statistics period (default 60s, CloudWatch's finest
	// for most AWS metrics).
	Period duration `yaml:"period"`
	// Before and After widen the queried window (default 5m each).
	Before duration `yaml:"before"`
	After  duration `yaml:"after"`
}

// Metric is one CloudWatch metric spec; every dimension set of it that
// matches Dimensions becomes a series.
type Metric struct {
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"metric"`
	// Stat is Average, Maximum, Minimum, Sum, SampleCount or pNN
	// (default Average).
	Stat string `yaml:"stat"`
	// Unit is the unit recorded for the series ("%", "bytes", "1/s"…).
	Unit string `yaml:"unit"`
	// Dimensions filter the dimension sets (exact values).
	Dimensions map[string]string `yaml:"dimensions"`
	// Scale multiplies every value (1/60 turns a per-minute Sum into a rate).
	Scale float64 `yaml:"scale"`
}

type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration such as 5m", n.Value)
	}
	*d = duration(v)
	return nil
}

// recipes are the built-in metric sets, readable here and listed in
// docs/monitoring.md.
var recipes = map[string]map[string]Metric{
	// ECS services (Container Insights not needed: AWS/ECS per service).
	"ecs": {
		"ecs_cpu_utilization_pct":    {Namespace: "AWS/ECS", Name: "CPUUtilization", Stat: "Average", Unit: "%"},
		"ecs_memory_utilization_pct": {Namespace: "AWS/ECS", Name: "MemoryUtilization", Stat: "Average", Unit: "%"},
	},
	// RDS instances.
	"rds": {
		"rds_cpu_utilization_pct": {Namespace: "AWS/RDS", Name: "CPUUtilization", Stat: "Average", Unit: "%"},
		"rds_connections":         {Namespace: "AWS/RDS", Name: "DatabaseConnections", Stat: "Average"},
		"rds_freeable_memory":     {Namespace: "AWS/RDS", Name: "FreeableMemory", Stat: "Average", Unit: "bytes"},
		"rds_read_iops":           {Namespace: "AWS/RDS", Name: "ReadIOPS", Stat: "Average", Unit: "1/s"},
		"rds_write_iops":          {Namespace: "AWS/RDS", Name: "WriteIOPS", Stat: "Average", Unit: "1/s"},
	},
	// MSK brokers (per broker at the DEFAULT monitoring level).
	"msk": {
		"msk_cpu_user_pct":             {Namespace: "AWS/Kafka", Name: "CpuUser", Stat: "Average", Unit: "%"},
		"msk_bytes_in_per_s":           {Namespace: "AWS/Kafka", Name: "BytesInPerSec", Stat: "Average", Unit: "bytes/s"},
		"msk_messages_in_per_s":        {Namespace: "AWS/Kafka", Name: "MessagesInPerSec", Stat: "Average", Unit: "1/s"},
		"msk_memory_used_bytes":        {Namespace: "AWS/Kafka", Name: "MemoryUsed", Stat: "Average", Unit: "bytes"},
		"msk_max_offset_lag":           {Namespace: "AWS/Kafka", Name: "MaxOffsetLag", Stat: "Maximum"},
		"msk_kafka_data_logs_disk_pct": {Namespace: "AWS/Kafka", Name: "KafkaDataLogsDiskUsed", Stat: "Average", Unit: "%"},
	},
}

// namespaceDims are the dimensions of the recipes' namespaces.
var namespaceDims = map[string][]string{
	"AWS/ECS":   {"ClusterName", "ServiceName"},
	"AWS/RDS":   {"DBInstanceIdentifier", "DBClusterIdentifier", "DatabaseClass", "EngineName", "Role"},
	"AWS/Kafka": {"Cluster Name", "Broker ID", "Topic", "Consumer Group"},
}

// RecipeNames lists the built-in recipes.
func RecipeNames() []string {
	out := make([]string, 0, len(recipes))
	for n := range recipes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Kind is the cloudwatch monitor for monitor.Options.Kinds.
func Kind() monitor.Kind { return monitor.Kind{Open: Open, Validate: Validate} }

// spec is a parsed configuration with the recipes expanded.
type spec struct {
	Config
	metrics map[string]Metric
	names   []string
}

func parse(tc monitor.TargetConfig) (*spec, error) {
	var c Config
	if err := monitor.DecodeOptions(tc.Options, &c); err != nil {
		return nil, err
	}
	return expand(c)
}

// expand checks a configuration and expands its recipes; Requery expands
// the configuration a run recorded the same way.
func expand(c Config) (*spec, error) {
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("endpoint %q: want an http(s) URL", c.Endpoint)
		}
		if u.User != nil {
			return nil, errors.New("endpoint: credentials in the URL are refused; use the AWS credential chain")
		}
	}
	s := &spec{Config: c, metrics: map[string]Metric{}}
	for _, r := range c.Recipes {
		ms, ok := recipes[r]
		if !ok {
			return nil, fmt.Errorf("unknown recipe %q (known: %s)", r, strings.Join(RecipeNames(), ", "))
		}
		for n, m := range ms {
			// Only the dimensions this namespace has: ClusterName narrows
			// the ECS metrics without emptying the RDS ones.
			m.Dimensions = map[string]string{}
			for k, v := range c.Dimensions {
				if slices.Contains(namespaceDims[m.Namespace], k) {
					m.Dimensions[k] = v
				}
			}
			s.metrics[n] = m
		}
	}
	for n, m := range c.Metrics {
		if m.Namespace == "" || m.Name == "" {
			return nil, fmt.Errorf("metric %s: namespace and metric are required", n)
		}
		if m.Dimensions == nil {
			m.Dimensions = c.Dimensions
		}
		s.metrics[n] = m
	}
	if len(s.metrics) == 0 {
		return nil, fmt.Errorf("no metrics: set metrics: or recipes: (%s)", strings.Join(RecipeNames(), ", "))
	}
	for n, m := range s.metrics {
		if m.Stat == "" {
			m.Stat = "Average"
		}
		if m.Scale == 0 {
			m.Scale = 1
		}
		s.metrics[n] = m
		s.names = append(s.names, n)
	}
	sort.Strings(s.names)
	return s, nil
}

// Validate checks the configuration without contacting AWS.
func Validate(tc monitor.TargetConfig) error {
	_, err := parse(tc)
	return err
}

// Collector queries CloudWatch once, at the end of the session.
type Collector struct {
	spec   *spec
	client *cw.Client
	env    monitor.Env
	target string
	start  time.Time
}

// Open loads the AWS configuration (the credential chain; no request is
// sent).
func Open(ctx context.Context, tc monitor.TargetConfig, env monitor.Env) (monitor.Collector, error) {
	s, err := parse(tc)
	if err != nil {
		return nil, err
	}
	client, err := newClient(ctx, s)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	return &Collector{spec: s, client: client, env: env, target: monitor.TargetName(tc), start: now()}, nil
}

// newClient loads the AWS configuration (the credential chain; no request
// is sent).
func newClient(ctx context.Context, s *spec) (*cw.Client, error) {
	var opts []func(*config.LoadOptions) error
	if s.Region != "" {
		opts = append(opts, config.WithRegion(s.Region))
	}
	if s.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set region: or AWS_REGION")
	}
	return cw.NewFromConfig(cfg, func(o *cw.Options) {
		if s.Endpoint != "" {
			o.BaseEndpoint = aws.String(s.Endpoint)
		}
	}), nil
}

// Collect records nothing: CloudWatch is read once the run is over.
func (c *Collector) Collect(context.Context, *monitor.Batch) error { return nil }

func orDefault(d duration, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}

// Finish lists the matching dimension sets of every metric and reads them
// with GetMetricData over the run window.
func (c *Collector) Finish(ctx context.Context) error {
	now := time.Now
	if c.env.Now != nil {
		now = c.env.Now
	}
	end := now()
	sf := specFile{Target: c.target, Stem: c.env.Stem, Config: c.spec.Config, RunStart: c.start.UTC(), RunEnd: end.UTC()}
	return c.queryWindow(ctx, c.env.Dir, &sf, end)
}

// SpecSuffix names <stem>.cloudwatch.json, what Requery needs to read a
// finished run's window again: the configuration (region, profile and
// endpoint names, metrics; never credentials) and the run's span.
const SpecSuffix = ".cloudwatch.json"

type specFile struct {
	Target    string    `json:"target"`
	Stem      string    `json:"stem"`
	Config    Config    `json:"config"`
	RunStart  time.Time `json:"run_start"`
	RunEnd    time.Time `json:"run_end"`
	QueriedAt time.Time `json:"queried_at"`
}

// queryWindow reads the run's window (widened by before/after, up to now)
// and writes <stem>.range.csv, <stem>.notes.json and the spec file.
func (c *Collector) queryWindow(ctx context.Context, dir string, sf *specFile, now time.Time) error {
	period := orDefault(c.spec.Period, time.Minute).Truncate(time.Second)
	if period < time.Second {
		period = time.Second
	}
	from := sf.RunStart.Add(-orDefault(c.spec.Before, 5*time.Minute)).Truncate(period)
	to := sf.RunEnd.Add(orDefault(c.spec.After, 5*time.Minute))
	if to.After(now) {
		to = now
	}
	to = to.Truncate(period).Add(period)
	series, notes := c.query(ctx, from, to, period)
	var errs []error
	if len(series) > 0 {
		if err := monitor.WriteRange(dir, sf.Stem, sf.Target, monitor.KindCloudWatch, series); err != nil {
			errs = append(errs, err)
		}
	} else if err := os.Remove(filepath.Join(dir, sf.Stem+monitor.RangeSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := monitor.WriteNotes(dir, sf.Stem, notes); err != nil {
		errs = append(errs, err)
	}
	sf.QueriedAt = now.UTC()
	b, err := json.MarshalIndent(sf, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, sf.Stem+SpecSuffix), append(b, '\n'), 0o644)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("writing query spec: %w", err))
	}
	return errors.Join(errs...)
}

// Requery reads every cloudwatch target of a finished run again (its
// monitor directory's *.cloudwatch.json) — CloudWatch publishes minutes
// late, so a report written an hour later has the whole window — replacing
// the range series and notes. It returns one line per target, and
// monitor.ErrNothingToRequery when the run has no cloudwatch target.
func Requery(ctx context.Context, runDir string, now time.Time) ([]string, error) {
	return monitor.RequerySpecs(runDir, SpecSuffix, func(dir string, sf *specFile) (string, error) {
		s, err := expand(sf.Config)
		if err == nil {
			var client *cw.Client
			if client, err = newClient(ctx, s); err == nil {
				c := &Collector{spec: s, client: client, target: sf.Target}
				err = c.queryWindow(ctx, dir, sf, now)
			}
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", sf.Target, err)
		}
		return fmt.Sprintf("%s: %d CloudWatch metrics", sf.Target, len(s.names)), nil
	})
}

// query is one request per page of at most 500 metric queries.
func (c *Collector) query(ctx context.Context, from, to time.Time, period time.Duration) ([]core.Series, []monitor.Note) {
	var notes []monitor.Note
	note := func(subject, level, text string) {
		notes = append(notes, monitor.Note{Target: c.target, Kind: monitor.KindCloudWatch, Subject: subject, Level: level, Text: text})
	}
	type item struct {
		name, unit string
		scale      float64
		labels     []string
		q          types.MetricDataQuery
	}
	var items []item
	for _, name := range c.spec.names {
		m := c.spec.metrics[name]
		var filters []types.DimensionFilter
		keys := make([]string, 0, len(m.Dimensions))
		for k := range m.Dimensions {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			filters = append(filters, types.DimensionFilter{Name: aws.String(k), Value: aws.String(m.Dimensions[k])})
		}
		var found []types.Metric
		p := cw.NewListMetricsPaginator(c.client, &cw.ListMetricsInput{Namespace: aws.String(m.Namespace), MetricName: aws.String(m.Name), Dimensions: filters})
		var err error
		for p.HasMorePages() && err == nil {
			var out *cw.ListMetricsOutput
			if out, err = p.NextPage(ctx); err == nil {
				found = append(found, out.Metrics...)
			}
		}
		if err != nil {
			note(name, monitor.NoteError, "ListMetrics failed: "+err.Error())
			continue
		}
		if len(found) == 0 {
			note(name, monitor.NoteEmpty, fmt.Sprintf("no %s %s metric matches the dimensions; check the names, the region and the dimensions", m.Namespace, m.Name))
			continue
		}
		seen := map[string]bool{}
		for _, f := range found {
			dims := append([]types.Dimension(nil), f.Dimensions...)
			sort.Slice(dims, func(i, j int) bool { return aws.ToString(dims[i].Name) < aws.ToString(dims[j].Name) })
			var labels []string
			for _, d := range dims {
				labels = append(labels, aws.ToString(d.Name), aws.ToString(d.Value))
			}
			// A dimension set listed twice (emulators list one entry
			// per datum) is queried once.
			key := strings.Join(labels, "\x00")
			if seen[key] {
				continue
			}
			seen[key] = true
			id := fmt.Sprintf("q%d", len(items))
			items = append(items, item{name: name, unit: m.Unit, scale: m.Scale, labels: labels, q: types.MetricDataQuery{
				Id: aws.String(id),
				MetricStat: &types.MetricStat{Metric: &types.Metric{Namespace: f.Namespace, MetricName: f.MetricName, Dimensions: dims},
					Period: aws.Int32(int32(period / time.Second)), Stat: aws.String(m.Stat)},
				ReturnData: aws.Bool(true),
			}})
		}
	}
	byID := map[string]*item{}
	for i := range items {
		byID[aws.ToString(items[i].q.Id)] = &items[i]
	}
	points := map[string][]core.Point{}
	failed := map[string]bool{}
	for lo := 0; lo < len(items); lo += 500 {
		hi := min(lo+500, len(items))
		qs := make([]types.MetricDataQuery, 0, hi-lo)
		for _, it := range items[lo:hi] {
			qs = append(qs, it.q)
		}
		p := cw.NewGetMetricDataPaginator(c.client, &cw.GetMetricDataInput{StartTime: aws.Time(from), EndTime: aws.Time(to),
			MetricDataQueries: qs, ScanBy: types.ScanByTimestampAscending})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				for _, it := range items[lo:hi] {
					if !failed[it.name] {
						failed[it.name] = true
						note(it.name, monitor.NoteError, "GetMetricData failed: "+err.Error())
					}
				}
				break
			}
			for _, r := range out.MetricDataResults {
				id := aws.ToString(r.Id)
				for i := range r.Timestamps {
					if i < len(r.Values) && !math.IsNaN(r.Values[i]) {
						points[id] = append(points[id], core.Point{T: r.Timestamps[i].UTC(), V: r.Values[i] * byID[id].scale})
					}
				}
				for _, m := range r.Messages {
					note(byID[id].name, monitor.NoteInfo, "CloudWatch: "+aws.ToString(m.Value))
				}
			}
		}
	}
	var out []core.Series
	have := map[string]bool{}
	for _, it := range items {
		pts := points[aws.ToString(it.q.Id)]
		if len(pts) == 0 {
			continue
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].T.Before(pts[j].T) })
		have[it.name] = true
		out = append(out, core.Series{Target: c.target, Kind: monitor.KindCloudWatch, Metric: monitor.MetricName(it.name, it.labels...), Unit: it.unit, Points: pts})
	}
	for _, name := range c.spec.names {
		listed := false
		for _, it := range items {
			listed = listed || it.name == name
		}
		if listed && !have[name] && !failed[name] {
			note(name, monitor.NoteEmpty, "no data points in the run window (CloudWatch publishes most AWS metrics every minute, a few minutes late: query again later with a longer after:)")
		}
	}
	return out, notes
}

// Close implements monitor.Collector.
func (c *Collector) Close() error { return nil }
