package plan

import (
	"fmt"
	"math"

	"gopkg.in/yaml.v3"
)

// Machine is what the machine that checks or runs a plan can hold. The
// CLI reads it (Options.Machine); the plan package reads nothing itself.
// A zero field is unknown and bounds nothing.
type Machine struct {
	CPUs int // logical CPUs the process may use
	// OpenFiles is the open-file limit (RLIMIT_NOFILE; Go raises the soft
	// limit to the hard one at start, so the hard one).
	OpenFiles int
	// Memory is what the process may use, in bytes: the machine's RAM or
	// its cgroup's limit, whichever is lower.
	Memory int64
	// Generators is how many generators share the plan (--segment i/N,
	// --generators N): each holds 1/N of the users and the rate. 0 or 1:
	// one.
	Generators int
}

const (
	// MinCPUPerRequest is the least CPU time a request costs the
	// generator: half the 2.0 µs of user CPU plateau's fastest measured
	// closed loop spent per request (docs/performance.md). A rate above
	// CPUs / MinCPUPerRequest cannot be sent by this machine whatever the
	// server does.
	MinCPUPerRequest = 1e-6 // seconds
	// MinBytesPerUser is the least memory a virtual user holds: the 3.4
	// KiB of heap and stacks a thinking user measured (BenchmarkUsers in
	// internal/engine, docs/performance.md), rounded down.
	MinBytesPerUser = 3 << 10
	// reservedFiles are open files kept for the run itself (its run
	// directory, monitors, the listener).
	reservedFiles = 64
)

// demand is a load size the checker compares with the machine once the
// whole plan is decoded (the connections setting is known then).
type demand struct {
	at       *yaml.Node
	key      string  // "users", "max_users", "rate"
	n        float64 // users, or iterations per second
	explicit bool    // written in the plan (max_users has a default)
}

func (d *decoder) demand(at *yaml.Node, key string, n float64, explicit bool) {
	if d.opt.Machine != nil && n > 0 {
		d.demands = append(d.demands, demand{at: at, key: key, n: n, explicit: explicit})
	}
}

// checkMachine refuses loads the machine cannot hold: a rate beyond what
// its CPUs can send, more users than its memory holds, and more users
// holding a connection each than it may open files. Each error names the
// limit, its figure and why, at the key that asks for too much.
func (d *decoder) checkMachine(p *Plan) {
	m := d.opt.Machine
	if m == nil {
		return
	}
	gens := max(m.Generators, 1)
	share := func(n float64) float64 { return math.Ceil(n / float64(gens)) }
	split := "split it over several machines (plateau run --segment i/N on each)"
	if gens > 1 {
		split = fmt.Sprintf("split it over more than %d machines", gens)
	}
	perUser := p.HTTP.Connections != "shared"
	for _, dm := range d.demands {
		n := share(dm.n)
		of := ""
		if gens > 1 {
			of = fmt.Sprintf(" (%s per generator of %d)", thousands(n), gens)
		}
		switch dm.key {
		case "rate":
			if m.CPUs <= 0 {
				continue
			}
			most := float64(m.CPUs) / MinCPUPerRequest
			if n > most {
				d.errorf(dm.at, "load: rate %s/s%s is more than this machine can send: a request costs the generator at least %v of CPU and its %d CPUs send at most %s/s; lower the rate or %s",
					thousands(dm.n), of, "1µs", m.CPUs, thousands(most), split)
			}
		case "users", "max_users":
			what := "users"
			if dm.key == "max_users" {
				what = "max_users"
				if !dm.explicit {
					continue // the default
				}
			}
			if files := m.OpenFiles - reservedFiles; m.OpenFiles > 0 && (perUser || dm.key == "max_users") && n > float64(files) {
				why := "each user keeps its own connections (http.connections: per_user)"
				if dm.key == "max_users" {
					why = "each running iteration holds a connection"
				}
				d.errorf(dm.at, "load: %s %s%s is more than this machine may open: %s and the open-file limit (RLIMIT_NOFILE) is %s; raise it (ulimit -n), lower %s or %s",
					what, thousands(dm.n), of, why, thousands(float64(m.OpenFiles)), what, split)
				continue
			}
			if need := n * MinBytesPerUser; m.Memory > 0 && need > float64(m.Memory) {
				d.errorf(dm.at, "load: %s %s%s needs more memory than this machine has: a user holds at least %d KiB, so %s, and it has %s; lower %s or %s",
					what, thousands(dm.n), of, MinBytesPerUser>>10, bytesText(need), bytesText(float64(m.Memory)), what, split)
			}
		}
	}
}

// thousands renders a count with thousands separators: 1,000,000.
func thousands(x float64) string {
	if x >= 1e18 || x != math.Trunc(x) {
		return fmt.Sprintf("%.4g", x)
	}
	s := fmt.Sprintf("%.0f", x)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// bytesText renders a size: "3.2 TiB", "512 MiB".
func bytesText(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 100 || i == 0 {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
