package core

import "time"

// PhaseOfCoarse is PhaseOf for a completion time known only to a
// resolution: a log that writes whole seconds ($time_local,
// $time_iso8601, Apache %t) says a request completed somewhere in
// [completed, completed+resolution). The sample belongs to the phase
// holding that instant's start (PhaseOf); when none does, to the phase
// that starts within the interval, since the sample may have completed
// after that phase began and nothing ran before it. So the first, partial
// second of a phase — whose bounds (from --phases or run.json) have finer
// precision than the log — is not lost between phases. With resolution
// ≤ 0 it is PhaseOf.
func PhaseOfCoarse(phases []Phase, workload string, completed time.Time, resolution time.Duration) int {
	if i := PhaseOf(phases, workload, completed); i >= 0 || resolution <= 0 {
		return i
	}
	end := completed.Add(resolution)
	for i, p := range phases {
		if workload != "" && p.Workload != "" && p.Workload != workload {
			continue
		}
		if p.Start.After(completed) && p.Start.Before(end) {
			return i
		}
	}
	return -1
}
