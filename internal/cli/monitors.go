package cli

import (
	"context"
	"fmt"

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
		Match: t.Match, Children: t.Children, Path: t.Path, DSN: t.DSN, URL: t.URL, Series: t.Series,
		Interval: t.Interval}
}

// startMonitors starts the plan's monitors; a monitor that cannot start is
// reported and the run goes on.
func startMonitors(ctx context.Context, st *State, p *plan.Plan, dir string) *monitorRun {
	targets := monitorTargets(p)
	if len(targets) == 0 {
		return &monitorRun{}
	}
	sess, err := builtin.Start(context.WithoutCancel(ctx), monitor.Options{Dir: dir, Interval: p.Monitor.Interval,
		Targets: targets, Logf: func(format string, args ...any) {
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
