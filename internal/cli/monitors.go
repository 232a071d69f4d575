package cli

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/builtin"
	"github.com/plateau-perf/plateau/internal/plan"
)

// monitorRun is the server-side sampling that accompanies a run.
type monitorRun struct {
	sess *monitor.Session
}

// monitorTargets converts the plan's monitor section.
func monitorTargets(p *plan.Plan) []monitor.TargetConfig {
	out := make([]monitor.TargetConfig, 0, len(p.Monitor.Targets))
	for i := range p.Monitor.Targets {
		out = append(out, monitorTarget(&p.Monitor.Targets[i]))
	}
	return out
}

func monitorTarget(t *plan.MonitorTarget) monitor.TargetConfig {
	return monitor.TargetConfig{Kind: t.Kind, Name: t.Name, Pid: t.Pid, PidFile: t.PidFile,
		Match: t.Match, Children: t.Children, Path: t.Path, DSN: t.DSN, URL: t.URL, Endpoints: t.Targets,
		Series: t.Series, Interval: t.Interval, Options: t.Options, Role: planRole(t.Role)}
}

// planRole is a plan's role: ("sut" short for system_under_test); the plan
// has checked it.
func planRole(s string) monitor.Role {
	r, _ := mondata.ParseRole(s)
	return r
}

// startMonitors starts the plan's monitors; a monitor that cannot start is
// reported and the run goes on.
func startMonitors(ctx context.Context, st *State, p *plan.Plan, dir string) *monitorRun {
	targets := monitorTargets(p)
	if len(targets) == 0 {
		return &monitorRun{}
	}
	sess, err := builtin.Start(context.WithoutCancel(ctx), monitor.Options{Dir: dir, Interval: p.Monitor.Interval,
		Targets: targets, Getenv: st.Getenv, Logf: func(format string, args ...any) {
			fmt.Fprintf(st.Stderr, "plateau: monitor: "+format+"\n", args...)
		}})
	if err != nil {
		fmt.Fprintf(st.Stderr, "plateau: monitors not started: %v\n", err)
		return &monitorRun{}
	}
	for _, s := range sess.Status() {
		if !s.Started {
			fmt.Fprintf(st.Stderr, "plateau: monitor %s (%s) could not start: %s — the run goes on without it\n", s.Name, s.Kind, s.Error)
		}
	}
	return &monitorRun{sess: sess}
}

func (m *monitorRun) stop() error {
	if m.sess == nil {
		return nil
	}
	return m.sess.Stop()
}

// parseMonitorFlags turns --monitor values (KIND or KIND:key=value,…) into
// plan monitor targets, checked by the monitor package's own rules. Keys are
// the plan's: name, pid, pid_file, match, children, path, dsn, url, series
// (separated by "|"), interval.
func parseMonitorFlags(flags []string) ([]plan.MonitorTarget, error) {
	var out []plan.MonitorTarget
	for _, fl := range flags {
		kind, rest, _ := strings.Cut(fl, ":")
		t := plan.MonitorTarget{Kind: strings.TrimSpace(kind)}
		if rest != "" {
			for _, kv := range strings.Split(rest, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("--monitor %q: %q is not key=value", fl, kv)
				}
				var err error
				switch k = strings.TrimSpace(k); k {
				case "name":
					t.Name = v
				case "pid":
					t.Pid, err = strconv.Atoi(v)
				case "pid_file":
					t.PidFile = v
				case "match":
					t.Match = v
				case "children":
					t.Children, err = strconv.ParseBool(v)
				case "path":
					t.Path = v
				case "dsn":
					if optionKind(t.Kind) {
						if t.Options == nil {
							t.Options = map[string]any{}
						}
						t.Options[k] = v
						break
					}
					t.DSN = v
				case "url":
					if optionKind(t.Kind) {
						if t.Options == nil {
							t.Options = map[string]any{}
						}
						t.Options[k] = v
						break
					}
					t.URL = v
				case "series":
					t.Series = strings.Split(v, "|")
				case "targets":
					t.Targets = strings.Split(v, "|")
				case "interval":
					t.Interval, err = plan.ParseDuration(v)
				case "role":
					if _, ok := mondata.ParseRole(v); !ok {
						err = fmt.Errorf("unknown role %q (sut, system_under_test, generator, database, balancer)", v)
					}
					t.Role = v
				default:
					if optionKind(t.Kind) {
						// The kind checks its own keys (url, recipe, filter…);
						// lists (recipes) are separated by "|".
						if t.Options == nil {
							t.Options = map[string]any{}
						}
						if k == "recipes" || strings.Contains(v, "|") {
							var l []any
							for _, x := range strings.Split(v, "|") {
								l = append(l, x)
							}
							t.Options[k] = l
							break
						}
						t.Options[k] = v
						break
					}
					return nil, fmt.Errorf("--monitor %q: unknown key %q (name, pid, pid_file, match, children, path, dsn, url, targets, series, interval, role)", fl, k)
				}
				if err != nil {
					return nil, fmt.Errorf("--monitor %q: %s: %w", fl, k, err)
				}
			}
		}
		if t.Name == "" {
			t.Name = t.Kind
			if t.Match != "" {
				t.Name = t.Match
			}
		}
		if err := builtin.Validate(monitorTarget(&t)); err != nil {
			return nil, fmt.Errorf("--monitor %q: %w", fl, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// optionKind reports whether a monitor kind parses its own fields, so
// --monitor passes its keys through as options.
func optionKind(kind string) bool {
	switch kind {
	case monitor.KindPromQL, monitor.KindRecipe, monitor.KindMySQL, monitor.KindCloudWatch:
		return true
	}
	return false
}

// panelLines are the live panel's monitor lines: per target with data, the
// readings with the highest values among CPU-like units (%, cores) first,
// at most three, so a PromQL target's busiest pods show while the run goes.
func (m *monitorRun) panelLines() []string {
	if m.sess == nil {
		return nil
	}
	var out []string
	for _, l := range m.sess.Latest() {
		rs := slices.Clone(l.Readings)
		rank := func(r monitor.Reading) int {
			switch r.Unit {
			case "cores", "%":
				return 0
			}
			return 1
		}
		slices.SortStableFunc(rs, func(a, b monitor.Reading) int {
			if ra, rb := rank(a), rank(b); ra != rb {
				return ra - rb
			}
			return cmp.Compare(b.Value, a.Value)
		})
		var parts []string
		for _, r := range rs {
			if len(parts) == 3 || math.IsNaN(r.Value) || strings.HasPrefix(r.Metric, "scrape_") {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s%s", r.Metric, strconv.FormatFloat(r.Value, 'g', 4, 64), unitSuffix(r.Unit)))
		}
		state := ""
		if l.Lost {
			state = " (lost)"
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("monitor %s%s: %s", l.Name, state, strings.Join(parts, ", ")))
		}
	}
	return out
}

func unitSuffix(u string) string {
	switch u {
	case "":
		return ""
	case "%":
		return "%"
	}
	return " " + u
}
