package cli

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

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
			for _, name := range slices.Sorted(maps.Keys(p.Data)) {
				if fd := p.Data[name]; fd.Pending {
					fmt.Fprintf(st.Stdout, "%s: data %q: %s does not exist yet; a prepare command must write it (checked after the prepare commands when the plan runs)\n",
						args[0], name, nonEmptyStr(fd.CSV, fd.JSON, fd.NDJSON))
				}
			}
			_, err = fmt.Fprintf(st.Stdout, "%s: plan %q is sound: %d workload(s), %d label(s), %d SLA requirement(s)\n",
				args[0], p.Name, len(p.Workloads), len(p.Labels()), len(p.SLA))
			return err
		},
	}
	c.Flags().StringArrayVar(&set, "set", nil, "override a plan value, as plateau run --set")
	return c
}

// checkPlan compiles the plan as the engine would and checks every SLA
// selector against the names the run will record (checkSLANames, the rule
// plateau run applies).
func checkPlan(p *plan.Plan) error {
	if err := engine.Check(p); err != nil {
		return fmt.Errorf("the plan has 1 problem(s):\n%w", plan.Errors{{File: p.File, Pos: plan.Pos{Line: 1, Col: 1}, Msg: err.Error()}})
	}
	if _, err := serverInputs(p); err != nil {
		return err
	}
	return checkSLANames(p)
}
