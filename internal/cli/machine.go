package cli

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/plan"
)

// thisMachine is what this machine can hold, for the plan checker
// (plan.Options.Machine): its CPUs, its open-file limit and its memory (the
// RAM, or its cgroup's limit when lower). generators is how many
// generators share the plan across machines (--segment i/N); local
// generators (--generators) share this machine, so they count as one.
func thisMachine(generators int) *plan.Machine {
	m := &plan.Machine{CPUs: runtime.NumCPU(), Generators: max(generators, 1)}
	m.OpenFiles = openFileLimit()
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					m.Memory = kb << 10
				}
			}
		}
	}
	// cgroup v2: the limit of the cgroup this process is in ("max": none).
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if p, ok := strings.CutPrefix(l, "0::"); ok {
				if lim, err := os.ReadFile("/sys/fs/cgroup" + p + "/memory.max"); err == nil {
					if n, err := strconv.ParseInt(strings.TrimSpace(string(lim)), 10, 64); err == nil && n > 0 && (m.Memory == 0 || n < m.Memory) {
						m.Memory = n
					}
				}
			}
		}
	}
	return m
}
