package engine

import (
	"fmt"

	"github.com/plateau-perf/plateau/internal/plan"
)

// Names are the names a run of a plan will record under, known before the
// first request: so that a requirement naming a label, workload or phase
// the plan does not have is found before the load starts, not after it.
type Names struct {
	Workloads []string
	// Labels maps a workload to its request and transaction labels.
	Labels map[string][]string
	// Phases lists every phase name the run can record (a stepped load
	// stopped early by its rule records fewer).
	Phases []string
}

// PlanNames compiles p's workloads as a run would and returns their names.
func PlanNames(p *plan.Plan) (*Names, error) {
	n := &Names{Labels: map[string][]string{}}
	feeders := map[string]*feeder{}
	for name, f := range p.Data {
		feeders[name] = newFeeder(f, 0, 1)
	}
	for i, w := range p.Workloads {
		prog, err := compile(p, w, i, feeders, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
		n.Workloads = append(n.Workloads, w.Name)
		n.Labels[w.Name] = append([]string(nil), prog.labels...)
		steps := []string{""}
		if len(w.Load.Steps) > 0 {
			steps = steps[:0]
			for j, st := range w.Load.Steps {
				name := st.Name
				if name == "" {
					name = fmt.Sprintf("step %d", j+1)
				}
				steps = append(steps, name)
			}
		}
		for _, st := range steps {
			n.Phases = append(n.Phases, phaseName(len(p.Workloads), w.Name, st))
		}
	}
	return n, nil
}

// PhaseName names a phase as a run records it: the step's name (the
// workload's when it has no steps), prefixed with the workload's when the
// plan has several workloads.
func PhaseName(workloads int, workload, step string) string {
	return phaseName(workloads, workload, step)
}

func phaseName(workloads int, workload, step string) string {
	switch {
	case step == "":
		return workload
	case workloads == 1:
		return step
	}
	return workload + " " + step
}
