package study

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/analysis/sla"
)

// Kind is what a question asks.
type Kind string

// Question kinds.
const (
	// Release: is the candidate release slower than the baseline
	// release, at each matching workload and load level?
	Release Kind = "release"
	// CapacityQ: the highest load meeting the requirements per workload
	// (or configuration), the knee and what limits it.
	CapacityQ Kind = "capacity"
	// Configurations: configurations side by side by knee, peak
	// throughput and capacity within the requirements.
	Configurations Kind = "configurations"
	// Repeatability: do repeats of one test agree (spread under a
	// bound, outliers named)?
	Repeatability Kind = "repeatability"
	// SoakQ: does a soak stay stable (latency drift, memory trend)?
	SoakQ Kind = "soak"
	// Interference: does one workload disturb another (its response
	// times and errors, each service's CPU, before, during and after)?
	Interference Kind = "interference"
)

// Kinds lists the question kinds in the order the document answers them.
var Kinds = []Kind{Release, CapacityQ, Configurations, Repeatability, SoakQ, Interference}

// Question is one question of a study with its expectation. Zero
// expectation fields take their defaults (Defaults).
type Question struct {
	Kind Kind   `json:"kind"`
	Text string `json:"question"`
	// Release: the baseline and candidate release (factor release
	// values); default the baseline run's release and every other.
	Baseline  string `json:"baseline,omitempty"`
	Candidate string `json:"candidate,omitempty"`
	// MaxSlowerPct: release — the candidate's average may be at most
	// this much slower; interference — the disturbed workload's average
	// may rise at most this much during the other.
	MaxSlowerPct float64 `json:"max_slower_pct,omitempty"`
	// MaxCVPct: repeatability — the coefficient of variation of the
	// repeats' averages may be at most this.
	MaxCVPct float64 `json:"max_cv_pct,omitempty"`
	// MaxDriftPct: soak — the average of the last fifth may be at most
	// this much above the first fifth's.
	MaxDriftPct float64 `json:"max_drift_pct,omitempty"`
	// MaxErrorPct: interference — error % may rise at most this many
	// percentage points during the other workload.
	MaxErrorPct float64 `json:"max_error_pct,omitempty"`
	// SLA: capacity — the requirements a load must meet (sla
	// expressions); default each run's own.
	SLA []string `json:"sla,omitempty"`
	// MinLoad: capacity — the load (users or req/s) that must meet the
	// requirements; 0: none expected, the question is answered.
	MinLoad float64 `json:"min_load,omitempty"`
	// Workload and Other: interference — the disturbed workload and the
	// one disturbing it; default the one that spans the run and the one
	// that runs in a window of it. Workload: capacity, configurations and
	// repeatability — the one workload asked about; default every
	// workload (repeatability: each workload apart when the runs have
	// several).
	Workload string `json:"workload,omitempty"`
	Other    string `json:"other,omitempty"`
	// Inferred is true when the study file named no questions and this
	// one was inferred from the runs.
	Inferred bool `json:"inferred,omitempty"`
	Line     int  `json:"-"`
}

// Default expectations.
const (
	DefaultMaxSlowerPct      = 5.0   // release: not slower than 5 %
	DefaultMaxCVPct          = 10.0  // repeats agree within 10 %
	DefaultMaxDriftPct       = 10.0  // a soak drifts by less than 10 %
	DefaultMaxErrorPct       = 1.0   // interference adds less than 1 point of errors
	DefaultMaxInterferingPct = 100.0 // and at most doubles the average
)

// withDefaults fills the expectations left out.
func (q Question) withDefaults() Question {
	switch q.Kind {
	case Release:
		if q.MaxSlowerPct == 0 {
			q.MaxSlowerPct = DefaultMaxSlowerPct
		}
	case Repeatability:
		if q.MaxCVPct == 0 {
			q.MaxCVPct = DefaultMaxCVPct
		}
	case SoakQ:
		if q.MaxDriftPct == 0 {
			q.MaxDriftPct = DefaultMaxDriftPct
		}
	case Interference:
		if q.MaxSlowerPct == 0 {
			q.MaxSlowerPct = DefaultMaxInterferingPct
		}
		if q.MaxErrorPct == 0 {
			q.MaxErrorPct = DefaultMaxErrorPct
		}
	}
	return q
}

// questionKeys are the keys each kind of question takes (besides kind
// and question).
var questionKeys = map[Kind][]string{
	Release:        {"baseline", "candidate", "max_slower_pct"},
	CapacityQ:      {"sla", "min_load", "workload"},
	Configurations: {"sla", "workload"},
	Repeatability:  {"max_cv_pct", "workload"},
	SoakQ:          {"max_drift_pct"},
	Interference:   {"workload", "other", "max_slower_pct", "max_error_pct"},
}

// parseQuestions reads questions: a list of {kind: …, …}.
func parseQuestions(v *yaml.Node, bad badFunc) []Question {
	if v.Kind != yaml.SequenceNode {
		bad(v, "questions must be a list of {kind: release|capacity|configurations|repeatability|soak|interference, …}")
		return nil
	}
	var out []Question
	kinds := make([]string, len(Kinds))
	for i, k := range Kinds {
		kinds[i] = string(k)
	}
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode {
			bad(item, "a question is a mapping {kind: …}")
			continue
		}
		q := Question{Line: item.Line}
		var kindNode *yaml.Node
		for j := 0; j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value == "kind" {
				kindNode = item.Content[j+1]
			}
		}
		if kindNode == nil {
			bad(item, "question has no kind (one of %s)", strings.Join(kinds, ", "))
			continue
		}
		q.Kind = Kind(kindNode.Value)
		if !slices.Contains(Kinds, q.Kind) {
			bad(kindNode, "unknown question kind %q (one of %s)", kindNode.Value, strings.Join(kinds, ", "))
			continue
		}
		num := func(n *yaml.Node, key string, dst *float64) {
			x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n.Value), "%")), 64)
			if n.Kind != yaml.ScalarNode || err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				bad(n, "%s must be a number of 0 or more, not %q", key, n.Value)
				return
			}
			*dst = x
		}
		text := func(n *yaml.Node, key string, dst *string) {
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				bad(n, "%s must be text", key)
				return
			}
			*dst = n.Value
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, val := item.Content[j], item.Content[j+1]
			switch k.Value {
			case "kind":
				continue
			case "question":
				text(val, k.Value, &q.Text)
				continue
			}
			if !slices.Contains(questionKeys[q.Kind], k.Value) {
				bad(k, "key %q does not apply to a %s question (question, %s)", k.Value, q.Kind, strings.Join(questionKeys[q.Kind], ", "))
				continue
			}
			switch k.Value {
			case "baseline":
				text(val, k.Value, &q.Baseline)
			case "candidate":
				text(val, k.Value, &q.Candidate)
			case "workload":
				text(val, k.Value, &q.Workload)
			case "other":
				text(val, k.Value, &q.Other)
			case "max_slower_pct":
				num(val, k.Value, &q.MaxSlowerPct)
			case "max_cv_pct":
				num(val, k.Value, &q.MaxCVPct)
			case "max_drift_pct":
				num(val, k.Value, &q.MaxDriftPct)
			case "max_error_pct":
				num(val, k.Value, &q.MaxErrorPct)
			case "min_load":
				num(val, k.Value, &q.MinLoad)
			case "sla":
				add := func(e *yaml.Node) {
					if _, err := sla.Parse(e.Value); err != nil {
						bad(e, "sla %q: %v", e.Value, err)
						return
					}
					q.SLA = append(q.SLA, e.Value)
				}
				switch val.Kind {
				case yaml.ScalarNode:
					add(val)
				case yaml.SequenceNode:
					for _, e := range val.Content {
						if e.Kind != yaml.ScalarNode {
							bad(e, "sla: each requirement is text (e.g. avg(response_time) < 1s)")
							continue
						}
						add(e)
					}
				default:
					bad(val, "sla must be a requirement or a list of them")
				}
			}
		}
		out = append(out, q)
	}
	return out
}

// checkQuestions checks the questions against the runs' factors where the
// file states them: a release named by a question must be one a run has.
func checkQuestions(f *File, doc *yaml.Node, bad badFunc) {
	releases := map[string]bool{}
	for _, r := range f.Runs {
		if r.Factors.Release != "" {
			releases[r.Factors.Release] = true
		}
	}
	for _, q := range f.Questions {
		if q.Kind != Release || len(releases) == 0 {
			continue
		}
		for _, v := range []string{q.Baseline, q.Candidate} {
			if v != "" && !releases[v] {
				bad(&yaml.Node{Line: q.Line, Column: 5}, "release %q is no run's release factor (%s)", v, strings.Join(sortedKeys(releases), ", "))
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
