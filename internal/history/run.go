// Package history is plateau's results store: every run a team makes,
// release after release, kept with its metadata (plan, tags such as
// release, build and environment, the plan's context keys), its per-label
// and per-phase figures, its SLA verdicts, its capacity and its per-service
// resources — enough to draw every trend without the run directory, which
// may since have been moved or deleted.
//
// The store is an SQLite file (a pure-Go driver, so the binary builds
// without cgo) or a PostgreSQL database, with one schema and versioned
// migrations (store.go, schema.go; the tables are documented in
// docs/history.md for Grafana). Over the stored runs, Analyze draws each
// series (a label's p95 or mean per phase, throughput, error %, capacity, a
// service's CPU per request) and finds its change points with
// internal/analysis/changepoint, and judges the latest run against the last
// stable segment (trend.go).
package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/secret"
)

// WholeRun is the phase name of a run's whole-run rows (label figures and
// resources over the whole run rather than one phase).
const WholeRun = ""

// Run is one stored run. Times are UTC.
type Run struct {
	// ID is run.json's id (rundir.Info.RunID): the key that makes adding
	// idempotent.
	ID   string `json:"id"`
	Plan string `json:"plan"`
	// Start and End bound the run; End is zero for a run that never ended.
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	// Status is run.json's status, Verdict summary.json's test status.
	Status  string `json:"status"`
	Verdict string `json:"verdict"`
	Passed  bool   `json:"passed"`
	Tool    string `json:"tool"` // "plateau 0.1.0"
	Host    string `json:"host"`
	Source  string `json:"source_kind"`
	// Dir is where the run directory was when it was added (informative:
	// nothing is read from it again).
	Dir   string    `json:"dir"`
	Added time.Time `json:"added"`
	// Tags are the user's labels of the run (release, build, environment
	// …); Context the plan's context keys, flattened as
	// "system.KEY", "environment.KEY", "description", "method",
	// "hypothesis". Values of secret names are stored masked.
	Tags    map[string]string `json:"tags"`
	Context map[string]string `json:"context"`
	Phases  []Phase           `json:"phases"`
	// Labels are the label figures over the whole run (Phase WholeRun)
	// and per phase.
	Labels    []LabelRow    `json:"labels"`
	SLA       []SLARow      `json:"sla"`
	Capacity  *CapacityRow  `json:"capacity"`
	Resources []ResourceRow `json:"resources"`
}

// Phase is one phase of a stored run.
type Phase struct {
	Index    int       `json:"index"`
	Name     string    `json:"name"`
	Workload string    `json:"workload"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Users    int       `json:"users"`
	Rate     float64   `json:"rate_per_s"`
}

// LabelRow is one label's figures over the whole run or one phase, as in
// summary.json (times in ms, error % in [0, 100], throughput in req/s).
type LabelRow struct {
	Phase         string  `json:"phase"`
	Label         string  `json:"label"`
	Transaction   bool    `json:"transaction"`
	Samples       int64   `json:"samples"`
	Errors        int64   `json:"errors"`
	ErrorPct      float64 `json:"error_pct"`
	MeanMs        float64 `json:"mean_ms"`
	P50Ms         float64 `json:"p50_ms"`
	P90Ms         float64 `json:"p90_ms"`
	P95Ms         float64 `json:"p95_ms"`
	P99Ms         float64 `json:"p99_ms"`
	MaxMs         float64 `json:"max_ms"`
	ThroughputRPS float64 `json:"throughput_rps"`
	// NoTimes marks a row without response times (an access log without
	// durations): its time figures are not series.
	NoTimes bool `json:"no_response_times"`
}

// SLARow is one requirement's verdict over its scope.
type SLARow struct {
	Index    int     `json:"index"`
	Expr     string  `json:"expr"`
	Scope    string  `json:"scope"`
	Passed   bool    `json:"passed"`
	NoData   bool    `json:"no_data"`
	Observed float64 `json:"observed"`
	Unit     string  `json:"unit"`
}

// CapacityRow is the run's capacity analysis in figures; nil fields were
// not found (no knee, no USL peak, no load meeting the SLA).
type CapacityRow struct {
	LoadUnit          string   `json:"load_unit"`
	KneeLoad          *float64 `json:"knee_load"`
	KneeThroughputRPS *float64 `json:"knee_throughput_rps"`
	PeakThroughputRPS *float64 `json:"usl_peak_throughput_rps"`
	MaxLoadMeetingSLA *float64 `json:"max_load_meeting_sla"`
	Bottleneck        string   `json:"bottleneck"`
}

// ResourceRow is one monitored metric of one target over the whole run
// (Phase WholeRun) or one phase, in the metric's unit.
type ResourceRow struct {
	Target string  `json:"target"`
	Kind   string  `json:"kind"`
	Phase  string  `json:"phase"`
	Metric string  `json:"metric"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Max    float64 `json:"max"`
}

// ErrNoSummary is returned by FromDir for a run directory without
// summary.json (a run whose report was never written).
var ErrNoSummary = errors.New("no summary.json (write it with plateau report)")

// FromDir reads a run directory's run.json and summary.json into a Run,
// with tags (which override nothing of the run; secret-named tags are
// masked).
func FromDir(dir string, tags map[string]string) (*Run, error) {
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, rundir.SummaryFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoSummary)
	} else if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var sum analysis.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return FromRun(info, &sum, abs, tags), nil
}

// FromRun builds a Run from a run's run.json and summary.json values.
func FromRun(info *rundir.Info, sum *analysis.Summary, dir string, tags map[string]string) *Run {
	rule := secret.NewRule(info.Secrets, nil)
	r := &Run{ID: info.RunID(), Plan: info.Name, Start: info.Start.UTC(), Status: info.Status,
		Verdict: sum.Verdict, Passed: sum.Passed, DurationS: sum.DurationS,
		Tool: strings.TrimSpace(info.Tool + " " + info.Version), Host: info.Host.Hostname, Dir: dir,
		Tags: map[string]string{}, Context: map[string]string{}}
	if kind, _ := info.Origin(); kind != "" {
		r.Source = string(kind)
	}
	if info.End != nil {
		r.End = info.End.UTC()
	} else if !sum.End.IsZero() {
		r.End = sum.End.UTC()
	}
	if r.Plan == "" {
		r.Plan = sum.Name
	}
	for k, v := range tags {
		r.Tags[k] = maskValue(rule, k, v)
	}
	if c := info.Context; c != nil {
		put := func(k, v string) {
			if v != "" {
				r.Context[k] = maskValue(rule, k, v)
			}
		}
		put("description", c.Description)
		put("method", c.Method)
		put("hypothesis", c.Hypothesis)
		for _, k := range slices.Sorted(maps.Keys(c.System)) {
			r.Context["system."+k] = maskValue(rule, k, c.System[k])
		}
		for _, k := range slices.Sorted(maps.Keys(c.Environment)) {
			r.Context["environment."+k] = maskValue(rule, k, c.Environment[k])
		}
	}
	for i, p := range sum.Phases {
		r.Phases = append(r.Phases, Phase{Index: i, Name: p.Name, Workload: p.Workload, Start: p.Start.UTC(),
			End: p.End.UTC(), Users: p.Users, Rate: p.Rate})
	}
	for _, l := range sum.Labels {
		if l.Label == core.TotalLabel && len(sum.WorkloadTotals) > 0 {
			continue // a run of several workloads: its TOTAL is per workload
		}
		r.Labels = append(r.Labels, labelRow(WholeRun, l))
	}
	for _, w := range sum.WorkloadTotals {
		row := labelRow(WholeRun, w.LabelStats)
		row.Label = WorkloadTotalLabel(w.Workload)
		r.Labels = append(r.Labels, row)
	}
	for _, p := range sum.Phases {
		for _, l := range p.Labels {
			r.Labels = append(r.Labels, labelRow(p.Name, l))
		}
	}
	for i, s := range sum.SLA {
		r.SLA = append(r.SLA, SLARow{Index: i, Expr: s.Expr, Scope: s.Scope, Passed: s.Passed, NoData: s.NoData,
			Observed: s.Observed, Unit: s.Unit})
	}
	if c := sum.Capacity; c != nil {
		cr := &CapacityRow{LoadUnit: c.LoadUnit, MaxLoadMeetingSLA: c.MaxLoadMeetingSLA}
		if c.Knee != nil {
			load, tp := c.Knee.Load, c.Knee.ThroughputRPS
			cr.KneeLoad, cr.KneeThroughputRPS = &load, &tp
		}
		if c.USL != nil {
			cr.PeakThroughputRPS = c.USL.PeakThroughputRPS
		}
		if c.Bottleneck != nil {
			cr.Bottleneck = c.Bottleneck.Target
		}
		r.Capacity = cr
	}
	for _, e := range sum.Resources {
		phase := WholeRun
		if e.Phase != nil {
			phase = *e.Phase
		}
		for _, m := range slices.Sorted(maps.Keys(e.Metrics)) {
			st := e.Metrics[m]
			r.Resources = append(r.Resources, ResourceRow{Target: e.Target, Kind: e.Kind, Phase: phase, Metric: m,
				Min: st.Min, Mean: st.Mean, Max: st.Max})
		}
	}
	r.normalize()
	return r
}

// WorkloadTotalLabel is the stored label of workload w's requests over
// the whole run of a run of several workloads ("data-import: TOTAL", as
// the run's own labels are named "data-import: upload"). Such a run
// stores no TOTAL of all its requests: that average weighs its workloads
// by how many of each it happened to send, and a series of it moves with
// the mix with nothing slower.
func WorkloadTotalLabel(w string) string { return w + ": " + core.TotalLabel }

// IsTotal reports whether a stored label is a TOTAL: of all requests, or
// of one workload's (WorkloadTotalLabel).
func IsTotal(label string) bool {
	return label == core.TotalLabel || strings.HasSuffix(label, ": "+core.TotalLabel)
}

// normalize puts r in the form the store gives back: times to the
// microsecond (PostgreSQL's precision) in UTC, label rows and resources in
// a fixed order (sortLabels, sortResources).
func (r *Run) normalize() {
	us := func(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }
	r.Start, r.End = us(r.Start), us(r.End)
	for i := range r.Phases {
		r.Phases[i].Start, r.Phases[i].End = us(r.Phases[i].Start), us(r.Phases[i].End)
	}
	sortLabels(r.Labels, r.Phases)
	sortResources(r.Resources)
}

func labelRow(phase string, l core.LabelStats) LabelRow {
	return LabelRow{Phase: phase, Label: l.Label, Transaction: l.Transaction, Samples: l.Samples, Errors: l.Errors,
		ErrorPct: l.ErrorPct, MeanMs: l.MeanMs, P50Ms: l.P50Ms, P90Ms: l.P90Ms, P95Ms: l.P95Ms, P99Ms: l.P99Ms,
		MaxMs: l.MaxMs, ThroughputRPS: l.ThroughputRPS, NoTimes: l.NoTimes}
}

// maskValue masks a value whose name is secret (internal/secret's rule:
// Authorization, token, password … and the run's own secret names), and any
// literal secret in the others.
func maskValue(rule *secret.Rule, name, v string) string {
	if rule.Named(name) {
		return secret.Mask
	}
	return rule.String(v)
}

// ParseTags parses k=v pairs (--tag release=ramsons).
func ParseTags(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("tag %q is not key=value", p)
		}
		out[k] = v
	}
	return out, nil
}
