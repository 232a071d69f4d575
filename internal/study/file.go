// Package study is the multi-run document model: several run directories
// with roles (baseline, candidate, repeat, configuration, soak) and the
// study's context become one document, written by the report's writers.
package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/locale"
)

// Roles a run can have in a study.
const (
	Baseline      = "baseline"
	Candidate     = "candidate"
	Repeat        = "repeat"
	Configuration = "configuration"
	Soak          = "soak"
)

var roles = []string{Baseline, Candidate, Repeat, Configuration, Soak}

// File is a study file (study.yaml).
type File struct {
	Title string `yaml:"title"`
	// Context of the study (all optional): what it is about, the system
	// under test (components and versions), its environment (a table of
	// name → value: hardware, instances, configuration), the method and
	// the hypothesis.
	Description string `yaml:"description"`
	System      []KV   `yaml:"-"`
	Environment []KV   `yaml:"-"`
	Method      string `yaml:"method"`
	Hypothesis  string `yaml:"hypothesis"`
	// Lang is the language the study document is written in ("en",
	// "da"); "" is English. plateau study --lang overrides it.
	Lang string   `yaml:"lang"`
	Runs []RunRef `yaml:"runs"`
	// Questions are what the study asks, each with its expectation; none
	// named: inferred from the runs' roles and factors (InferQuestions).
	Questions []Question `yaml:"-"`
	// Limits are configured limits of the system under test (pool sizes,
	// max connections, calls served at once), name → value: a knee that
	// no saturated resource explains is matched against them.
	Limits []Limit `yaml:"-"`
	// Path is the study file's path; run directories are relative to it.
	Path string `yaml:"-"`
}

// KV is one row of a context table, in file order.
type KV struct{ Name, Value string }

// RunRef is one run of the study.
type RunRef struct {
	Dir  string `yaml:"dir"`
	Role string `yaml:"role"`
	// Name is what the run is called in tables ("8 users", "config B",
	// "release 1.4"); default: role and number for repeats, else the
	// distinguishing setting (compare.Names).
	Name string `yaml:"name"`
	// Factors are what this run varies: release, workload, config,
	// repeat (text) and users or rate (its load level). Left out, they
	// are read from the run (its workloads and load) and its role.
	Factors Factors `yaml:"-"`
	// History, when set, selects this entry's runs from a results store
	// instead of naming a directory (Dir is empty); Load replaces the
	// entry by one RunRef per run it selects (history.go).
	History *HistorySel `yaml:"-"`
	// Line is where the run is declared in the study file.
	Line int `yaml:"-"`
}

// Factors are the settings a run of a study varies; the zero value of
// each means "not given".
type Factors struct {
	Release  string  `json:"release,omitempty"`
	Workload string  `json:"workload,omitempty"`
	Config   string  `json:"config,omitempty"`
	Repeat   string  `json:"repeat,omitempty"`
	Users    int     `json:"users,omitempty"`
	Rate     float64 `json:"rate_per_s,omitempty"`
}

// factorKeys are the keys of a run's factors: mapping.
var factorKeys = []string{"release", "workload", "config", "repeat", "users", "rate"}

// Limit is one configured limit of the system under test.
type Limit struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Error is a problem in a study file at a position.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Load reads and checks a study file strictly: unknown keys, wrong types
// and bad roles are errors naming file:line:col; every problem is
// reported (errors.Join). Runs selected from a results history (history:)
// are looked up and listed in their entries' places.
func Load(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading study: %w", err)
	}
	f, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	if err := f.ResolveHistory(context.Background()); err != nil {
		return nil, err
	}
	return f, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse parses a study file's bytes; name is used in errors.
func Parse(name string, src []byte) (*File, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Line: 1, Col: 1, Msg: "study file is empty"}
		}
		e := &Error{File: name, Line: 1, Col: 1, Msg: "YAML syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = "YAML syntax: " + m[2]
		}
		return nil, e
	}
	f := &File{Path: name}
	var errs []error
	bad := func(n *yaml.Node, format string, a ...any) {
		errs = append(errs, &Error{File: name, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, a...)})
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		bad(doc, "a study file is a mapping (title:, runs:, …)")
		return nil, errors.Join(errs...)
	}
	str := func(v *yaml.Node, key string, dst *string) {
		if v.Kind != yaml.ScalarNode {
			bad(v, "%s must be text", key)
			return
		}
		*dst = v.Value
	}
	table := func(v *yaml.Node, key string) []KV {
		if v.Kind != yaml.MappingNode {
			bad(v, "%s must be a mapping of name: value (e.g. cpu: 4 vCPU)", key)
			return nil
		}
		var out []KV
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			if val.Kind != yaml.ScalarNode {
				bad(val, "%s.%s must be text", key, k.Value)
				continue
			}
			out = append(out, KV{k.Value, val.Value})
		}
		return out
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if seen[k.Value] {
			bad(k, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "title":
			str(v, k.Value, &f.Title)
		case "description":
			str(v, k.Value, &f.Description)
		case "method":
			str(v, k.Value, &f.Method)
		case "hypothesis":
			str(v, k.Value, &f.Hypothesis)
		case "lang":
			str(v, k.Value, &f.Lang)
			if err := locale.Check(f.Lang); err != nil {
				bad(v, "lang: %v", err)
			}
		case "system":
			f.System = table(v, k.Value)
		case "environment":
			f.Environment = table(v, k.Value)
		case "runs":
			if v.Kind != yaml.SequenceNode {
				bad(v, "runs must be a list of {dir, role, name}")
				continue
			}
			for _, item := range v.Content {
				if item.Kind != yaml.MappingNode {
					bad(item, "a run is a mapping {dir: …, role: …}")
					continue
				}
				r := RunRef{Line: item.Line}
				for j := 0; j+1 < len(item.Content); j += 2 {
					rk, rv := item.Content[j], item.Content[j+1]
					switch rk.Value {
					case "dir":
						str(rv, "dir", &r.Dir)
					case "role":
						str(rv, "role", &r.Role)
						if r.Role != "" && !slices.Contains(roles, r.Role) {
							bad(rv, "unknown role %q (one of %s)", r.Role, strings.Join(roles, ", "))
						}
					case "name":
						str(rv, "name", &r.Name)
					case "factors":
						r.Factors = parseFactors(rv, bad)
					case "history":
						r.History = parseHistorySel(rv, bad)
					default:
						bad(rk, "unknown run key %q (dir, history, role, name, factors)", rk.Value)
					}
				}
				switch {
				case r.Dir != "" && r.History != nil:
					bad(item, "a run has dir or history, not both")
				case r.Dir == "" && r.History == nil:
					bad(item, "run has no dir (or history: to select runs from a results store)")
				case r.History != nil && r.Role == Baseline && r.History.Last != 1:
					bad(item, "a baseline is one run: give its history selection last: 1")
				}
				if r.Role == "" {
					r.Role = Candidate
				}
				f.Runs = append(f.Runs, r)
			}
		case "questions":
			f.Questions = parseQuestions(v, bad)
		case "limits":
			f.Limits = parseLimits(v, bad)
		default:
			bad(k, "unknown key %q (title, description, system, environment, method, hypothesis, runs, questions, limits)", k.Value)
		}
	}
	fromHistory := slices.ContainsFunc(f.Runs, func(r RunRef) bool { return r.History != nil })
	if len(f.Runs) < 2 && len(errs) == 0 && !fromHistory {
		// (runs selected from a history are counted once selected)
		bad(doc, "a study needs at least two runs (runs: - dir: … role: baseline)")
	}
	nb := 0
	for _, r := range f.Runs {
		if r.Role == Baseline {
			nb++
		}
	}
	if nb > 1 {
		bad(doc, "a study has one baseline; %d runs have role baseline", nb)
	}
	checkQuestions(f, doc, bad)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// badFunc reports a problem at a node.
type badFunc func(n *yaml.Node, format string, a ...any)

// parseFactors reads a run's factors: mapping.
func parseFactors(v *yaml.Node, bad badFunc) Factors {
	var fa Factors
	if v.Kind != yaml.MappingNode {
		bad(v, "factors must be a mapping (e.g. {release: 1.5, users: 20})")
		return fa
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if seen[k.Value] {
			bad(k, "factor %q given twice", k.Value)
		}
		seen[k.Value] = true
		if val.Kind != yaml.ScalarNode || val.Value == "" {
			bad(val, "factor %s must be a value", k.Value)
			continue
		}
		switch k.Value {
		case "release":
			fa.Release = val.Value
		case "workload":
			fa.Workload = val.Value
		case "config":
			fa.Config = val.Value
		case "repeat":
			fa.Repeat = val.Value
		case "users":
			n, err := strconv.Atoi(val.Value)
			if err != nil || n <= 0 {
				bad(val, "factor users must be a whole number above 0, not %q", val.Value)
			}
			fa.Users = n
		case "rate":
			x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(val.Value), "/s"), 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				bad(val, "factor rate must be a number of iterations per second above 0, not %q", val.Value)
			}
			fa.Rate = x
		default:
			bad(k, "unknown factor %q (%s)", k.Value, strings.Join(factorKeys, ", "))
		}
	}
	return fa
}

// parseLimits reads limits: a mapping of name → number.
func parseLimits(v *yaml.Node, bad badFunc) []Limit {
	if v.Kind != yaml.MappingNode {
		bad(v, "limits must be a mapping of name: number (e.g. db pool size: 20)")
		return nil
	}
	var out []Limit
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		x, err := strconv.ParseFloat(val.Value, 64)
		if val.Kind != yaml.ScalarNode || err != nil || !(x > 0) || math.IsInf(x, 0) {
			bad(val, "limit %s must be a number above 0, not %q", k.Value, val.Value)
			continue
		}
		out = append(out, Limit{Name: k.Value, Value: x})
	}
	return out
}

// DirOf resolves a run directory relative to the study file.
func (f *File) DirOf(r RunRef) string {
	if filepath.IsAbs(r.Dir) {
		return r.Dir
	}
	return filepath.Join(filepath.Dir(f.Path), r.Dir)
}
