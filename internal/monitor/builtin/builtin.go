// Package builtin wires every monitor kind of this repository into the
// name → implementation map that monitor.Start takes, so the command line
// can start a session from plan targets with one call.
package builtin

import (
	"context"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/cgroup"
	"github.com/plateau-perf/plateau/internal/monitor/cloudwatch"
	"github.com/plateau-perf/plateau/internal/monitor/host"
	"github.com/plateau-perf/plateau/internal/monitor/jvm"
	"github.com/plateau-perf/plateau/internal/monitor/mysql"
	"github.com/plateau-perf/plateau/internal/monitor/postgres"
	"github.com/plateau-perf/plateau/internal/monitor/process"
	"github.com/plateau-perf/plateau/internal/monitor/promql"
	"github.com/plateau-perf/plateau/internal/monitor/promscrape"
)

// Kinds returns a fresh map of every monitor kind.
func Kinds() map[string]monitor.Kind {
	return map[string]monitor.Kind{
		monitor.KindHost:       host.Kind(),
		monitor.KindProcess:    process.Kind(),
		monitor.KindJVM:        jvm.Kind(),
		monitor.KindCgroup:     cgroup.Kind(),
		monitor.KindPostgres:   postgres.Kind(),
		monitor.KindPrometheus: promscrape.Kind(),
		monitor.KindPromQL:     promql.Kind(),
		monitor.KindRecipe:     promql.Kind(),
		monitor.KindMySQL:      mysql.Kind(),
		monitor.KindCloudWatch: cloudwatch.Kind(),
	}
}

// Start is monitor.Start with every built-in kind available (unless
// opt.Kinds is already set).
func Start(ctx context.Context, opt monitor.Options) (*monitor.Session, error) {
	if opt.Kinds == nil {
		opt.Kinds = Kinds()
	}
	return monitor.Start(ctx, opt)
}

// Validate checks one target against the built-in kinds without touching
// the system: for the plan validator.
func Validate(cfg monitor.TargetConfig) error {
	return monitor.ValidateTarget(cfg, Kinds())
}
