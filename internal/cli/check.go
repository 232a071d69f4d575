package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/plan"
)

func newCheckCmd(st *State) *cobra.Command {
	var set []string
	c := &cobra.Command{
		Use:   "check PLAN.yaml",
		Short: "Check a test plan and its SLA selectors without sending a request",
		Long: `Check a test plan as plateau run would before it starts: every problem is reported
with its file, line and column, and every label an SLA names must be a label the
plan records (a request name, a transaction or an until wait). Exit code 0 when the
plan is sound, 2 otherwise. Nothing is sent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := loadPlan(st, args[0], set)
			if err != nil {
				return err
			}
			if err := checkPlan(p); err != nil {
				return err
			}
			_, err = fmt.Fprintf(st.Stdout, "%s: plan %q is sound: %d workload(s), %d label(s), %d SLA requirement(s)\n",
				args[0], p.Name, len(p.Workloads), len(p.Labels()), len(p.SLA))
			return err
		},
	}
	c.Flags().StringArrayVar(&set, "set", nil, "override a plan value, as plateau run --set")
	return c
}

// checkPlan compiles the plan as the engine would and checks that every
// label an SLA selects exists in the plan.
func checkPlan(p *plan.Plan) error {
	var errs plan.Errors
	if err := engine.Check(p); err != nil {
		errs = append(errs, plan.Error{File: p.File, Pos: plan.Pos{Line: 1, Col: 1}, Msg: err.Error()})
	}
	labels := p.Labels()
	for _, s := range p.SLA {
		e, err := sla.Parse(s.Expr)
		if err != nil || e.Label == "" || e.Label == core.TotalLabel || slices.Contains(labels, e.Label) {
			continue
		}
		errs = append(errs, plan.Error{File: p.File, Pos: s.Pos,
			Msg: fmt.Sprintf("sla: no label %q in the plan (labels: %s)", e.Label, strings.Join(labels, ", "))})
	}
	if len(errs) > 0 {
		var pe plan.Errors
		err := error(errs)
		if errors.As(err, &pe) {
			return fmt.Errorf("the plan has %d problem(s):\n%w", len(pe), err)
		}
		return err
	}
	return nil
}
