package cloudwatch

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	cw "github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// startMoto starts moto's CloudWatch emulator (testdata/install-deps.sh)
// and points the AWS credential chain at fake keys.
func startMoto(t *testing.T) string {
	t.Helper()
	bin := monitortest.Need(t, "moto_server")
	addr := monitortest.FreeAddr(t)
	host, port, _ := strings.Cut(addr, ":")
	monitortest.Start(t, "http://"+addr+"/moto-api/", bin, "-H", host, "-p", port)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTESTTESTTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-aws-secret-key")
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	return "http://" + addr
}

func put(t *testing.T, c *cw.Client, ns, metric string, dims map[string]string, at time.Time, v float64) {
	t.Helper()
	// In name order: moto matches a query's dimensions to a datum's as
	// ordered lists (CloudWatch itself treats them as a set), and the
	// collector sends them sorted by name.
	var ds []types.Dimension
	for _, k := range slices.Sorted(maps.Keys(dims)) {
		ds = append(ds, types.Dimension{Name: aws.String(k), Value: aws.String(dims[k])})
	}
	_, err := c.PutMetricData(context.Background(), &cw.PutMetricDataInput{Namespace: aws.String(ns),
		MetricData: []types.MetricDatum{{MetricName: aws.String(metric), Dimensions: ds, Timestamp: aws.Time(at), Value: aws.Float64(v)}}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMotoECSAndRDS: ECS service CPU and RDS connections put into the
// emulator come back per service and per instance, with the values put;
// a metric nobody published is a named note.
func TestMotoECSAndRDS(t *testing.T) {
	endpoint := startMoto(t)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	client := cw.NewFromConfig(cfg, func(o *cw.Options) { o.BaseEndpoint = aws.String(endpoint) })
	now := time.Now().UTC().Truncate(time.Minute)
	for i, v := range []float64{80, 82, 84} {
		at := now.Add(time.Duration(i-3) * time.Minute).Add(10 * time.Second)
		put(t, client, "AWS/ECS", "CPUUtilization", map[string]string{"ClusterName": "folio", "ServiceName": "mod-circulation"}, at, v)
		put(t, client, "AWS/ECS", "CPUUtilization", map[string]string{"ClusterName": "folio", "ServiceName": "mod-users"}, at, v/8)
		put(t, client, "AWS/ECS", "CPUUtilization", map[string]string{"ClusterName": "other", "ServiceName": "x"}, at, 99)
		put(t, client, "AWS/RDS", "DatabaseConnections", map[string]string{"DBInstanceIdentifier": "folio-db"}, at, 25+float64(i))
	}
	dir := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{Dir: dir, Kinds: map[string]monitor.Kind{monitor.KindCloudWatch: Kind()},
		Targets: []monitor.TargetConfig{
			{Kind: monitor.KindCloudWatch, Name: "ecs", Options: map[string]any{"endpoint": endpoint, "recipes": []any{"ecs"}, "dimensions": map[string]any{"ClusterName": "folio"}, "before": "5m"}},
			// ClusterName is an ECS dimension: it does not empty the RDS metrics.
			{Kind: monitor.KindCloudWatch, Name: "rds", Options: map[string]any{"endpoint": endpoint, "recipes": []any{"rds"}, "dimensions": map[string]any{"ClusterName": "folio"}, "before": "5m"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Status() {
		if !st.Started {
			t.Fatalf("%s not started: %s", st.Name, st.Error)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	series, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, s := range series {
		for _, p := range s.Points {
			got[s.Metric] = append(got[s.Metric], p.V)
		}
	}
	check := func(metric string, want []float64) {
		t.Helper()
		g := got[metric]
		if len(g) != len(want) {
			t.Errorf("%s: %v, want %v (all: %v)", metric, g, want, got)
			return
		}
		for i := range want {
			if g[i] != want[i] {
				t.Errorf("%s: %v, want %v", metric, g, want)
			}
		}
	}
	check("ecs_cpu_utilization_pct{ClusterName=folio,ServiceName=mod-circulation}", []float64{80, 82, 84})
	check("ecs_cpu_utilization_pct{ClusterName=folio,ServiceName=mod-users}", []float64{10, 10.25, 10.5})
	check("rds_connections{DBInstanceIdentifier=folio-db}", []float64{25, 26, 27})
	for m := range got {
		if strings.Contains(m, "other") {
			t.Errorf("the dimension filter let %s through", m)
		}
	}
	notes, err := monitor.ReadNotes(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty := map[string]bool{}
	for _, n := range notes {
		if n.Level == monitor.NoteEmpty {
			empty[n.Target+"/"+n.Subject] = true
		}
	}
	if !empty["ecs/ecs_memory_utilization_pct"] || !empty["rds/rds_freeable_memory"] {
		t.Errorf("metrics nobody published are not named: %+v", notes)
	}
	// CloudWatch publishes late: a datum that arrives after the run is in
	// the report's data once the run is read again (plateau report
	// --requery), and the spec file it is read from holds no credentials.
	late := time.Now().UTC()
	put(t, client, "AWS/ECS", "CPUUtilization", map[string]string{"ClusterName": "folio", "ServiceName": "mod-circulation"}, late, 90)
	lines, err := Requery(context.Background(), dir, time.Now().Add(time.Second))
	if err != nil || len(lines) != 2 {
		t.Fatalf("requery: %v %v", lines, err)
	}
	if series, _, err = monitor.Read(dir); err != nil {
		t.Fatal(err)
	}
	got = map[string][]float64{}
	for _, s := range series {
		for _, p := range s.Points {
			got[s.Metric] = append(got[s.Metric], p.V)
		}
	}
	if late.Truncate(time.Minute).Equal(now.Add(-time.Minute)) {
		check("ecs_cpu_utilization_pct{ClusterName=folio,ServiceName=mod-circulation}", []float64{80, 82, 87})
	} else {
		check("ecs_cpu_utilization_pct{ClusterName=folio,ServiceName=mod-circulation}", []float64{80, 82, 84, 90})
	}
	check("rds_connections{DBInstanceIdentifier=folio-db}", []float64{25, 26, 27})
	if _, err := Requery(context.Background(), t.TempDir(), time.Now()); !errors.Is(err, monitor.ErrNothingToRequery) {
		t.Errorf("a run without cloudwatch targets: %v", err)
	}
	// The secret key reaches no file.
	ents, _ := os.ReadDir(dir + "/monitor")
	if len(ents) == 0 {
		t.Fatal("no monitor files")
	}
	for _, e := range ents {
		b, _ := os.ReadFile(dir + "/monitor/" + e.Name())
		if strings.Contains(string(b), "s3cr3t-aws-secret-key") || strings.Contains(string(b), "AKIDTESTTESTTEST") {
			t.Errorf("%s holds AWS credentials", e.Name())
		}
	}
}

func TestConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		opts map[string]any
		want string
	}{
		"nothing":      {map[string]any{}, "no metrics"},
		"bad recipe":   {map[string]any{"recipes": []any{"ec2"}}, `unknown recipe "ec2"`},
		"bad endpoint": {map[string]any{"recipes": []any{"ecs"}, "endpoint": "ftp://x"}, "endpoint"},
		"no metric":    {map[string]any{"metrics": map[string]any{"x": map[string]any{"namespace": "AWS/EC2"}}}, "namespace and metric are required"},
		"unknown key":  {map[string]any{"recipes": []any{"ecs"}, "regoin": "x"}, "unknown field regoin"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Validate(monitor.TargetConfig{Kind: monitor.KindCloudWatch, Options: tc.opts})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
