package core

import "time"

// PhaseOf is plateau's one rule for which phase a sample belongs to. The
// engine tags samples by it, the importers assign imported samples by it,
// and so every figure built on phases — the per-phase tables, the stop
// rule's note, the SLA per phase, the knee and the conclusions — counts the
// same samples:
//
// A sample belongs to the phase of its workload that was running when the
// sample completed: the phase whose [Start, End) holds the completion time.
// A sample that completed outside every phase of its workload — a request
// still in flight when the last step ended and finishing during the
// graceful stop, an access-log line before the first phase — belongs to no
// phase (−1) and counts in the whole-run figures only.
//
// Completion, not start, because throughput is completed requests per
// second of a span everywhere in plateau, because a stop rule deciding at
// the end of a step can only count what has completed, and because logs
// (access logs, JTL with elapsed) give the completion time or both.
//
// workload "" matches phases of any workload (a single-workload import);
// otherwise phases of other workloads are skipped. When phases of one
// workload overlap, the one started last wins. phases must be in start
// order, as run.json keeps them.
func PhaseOf(phases []Phase, workload string, completed time.Time) int {
	for i := len(phases) - 1; i >= 0; i-- {
		p := phases[i]
		if workload != "" && p.Workload != "" && p.Workload != workload {
			continue
		}
		if p.Contains(completed) {
			return i
		}
	}
	return -1
}
