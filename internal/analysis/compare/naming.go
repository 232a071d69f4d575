package compare

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// RunFacts is what tells runs apart: the plan's name, the run directory,
// an optional role given by the user (baseline, candidate, "config B",
// "release 1.4") and the load the run applied.
type RunFacts struct {
	Plan, Dir, Role string
	// Users is the largest number of concurrent users of any phase, Rate
	// the largest arrival rate (iterations/s); 0 when the phase has none.
	Users int
	Rate  float64
	// Phases are the run's phase names in order.
	Phases []string
}

// Load is the run's load level as a phrase ("20 users", "50/s"), "" when
// the run records none (an import without load information).
func (f RunFacts) Load() string {
	switch {
	case f.Users == 1 && f.Rate > 0:
		return fmt.Sprintf("1 user at %g/s", f.Rate)
	case f.Users == 1:
		return "1 user"
	case f.Users > 0 && f.Rate > 0:
		return fmt.Sprintf("%d users at %g/s", f.Users, f.Rate)
	case f.Users > 0:
		return fmt.Sprintf("%d users", f.Users)
	case f.Rate > 0:
		return fmt.Sprintf("%g/s", f.Rate)
	}
	return ""
}

// Naming words the parts of a run's name that are words, not names: its
// load level ("20 users") and the ordinal of a run whose name still
// collides ("run 2"). Nil functions are English; a report passes its
// language's (compare words nothing itself beyond that).
type Naming struct {
	Load func(RunFacts) string
	Nth  func(n int) string
}

// Names names each run for tables and sentences by what distinguishes it:
// its role when given, else the plan name with the load when the loads
// differ, else the plan name with the directory when the plan names are
// the same, so no two runs share a name only because they share a plan.
// Names that would still collide get the directory, then " (run N)",
// appended.
func Names(runs []RunFacts) []string { return NamesWith(runs, Naming{}) }

// NamesWith is Names with the words of w.
func NamesWith(runs []RunFacts, w Naming) []string {
	if w.Load == nil {
		w.Load = RunFacts.Load
	}
	if w.Nth == nil {
		w.Nth = func(n int) string { return fmt.Sprintf("run %d", n) }
	}
	out := make([]string, len(runs))
	plans := map[string]int{}
	loads := map[string]bool{}
	for _, r := range runs {
		plans[r.Plan]++
		loads[r.Load()] = true
	}
	for i, r := range runs {
		plan := strings.TrimSpace(r.Plan)
		dir := filepath.Base(filepath.Clean(r.Dir))
		switch {
		case strings.TrimSpace(r.Role) != "":
			out[i] = strings.TrimSpace(r.Role)
		case plan == "":
			out[i] = dir
		case plans[r.Plan] == 1:
			out[i] = plan
		case len(loads) > 1 && r.Load() != "":
			out[i] = plan + ", " + w.Load(r)
		default:
			out[i] = plan + " (" + dir + ")"
		}
	}
	seen := map[string]int{}
	for _, n := range out {
		seen[n]++
	}
	for i, n := range out {
		if dir := filepath.Base(filepath.Clean(runs[i].Dir)); seen[n] > 1 && runs[i].Dir != "" && !strings.HasSuffix(n, "("+dir+")") {
			out[i] = n + " (" + dir + ")"
		}
	}
	clear(seen)
	for _, n := range out {
		seen[n]++
	}
	k := map[string]int{}
	for i, n := range out {
		if seen[n] > 1 {
			k[n]++
			out[i] = fmt.Sprintf("%s (%s)", n, w.Nth(k[n]))
		}
	}
	return out
}

// Kind says how a set of runs relates.
type Kind string

const (
	// Repeats are runs at the same load: their spread is run-to-run noise.
	Repeats Kind = "repeats"
	// Series are runs at different load levels: a curve of throughput and
	// response time against load, whose spread is not noise.
	Series Kind = "series"
)

// Classify tells a load series from repeats: runs whose load levels differ
// are a series.
func Classify(runs []RunFacts) Kind {
	for _, r := range runs[min(1, len(runs)):] {
		if r.Users != runs[0].Users || r.Rate != runs[0].Rate {
			return Series
		}
	}
	return Repeats
}

// SamePhases reports whether two runs have the same phases (names in
// order), so a whole-run delta between them compares like with like.
func SamePhases(a, b RunFacts) bool {
	return slices.Equal(a.Phases, b.Phases)
}
