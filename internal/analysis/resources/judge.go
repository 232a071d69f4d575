package resources

// The judgements the report states about resources live here, next to the
// statistics they are made on, so each question has one answer and one
// home (the report only words them).

// CPUGrade grades a target's busiest phase.
type CPUGrade int

// CPU grades.
const (
	CPUOK         CPUGrade = iota // never near the ceiling
	CPUHigh                       // worth a look
	CPUSaturated                  // at the ceiling: the likely bottleneck
	CPUPerProcess                 // a process's share of one core: no ceiling to judge against
)

// Thresholds of a host's mean busy CPU (user + system + iowait …, 0–100 %)
// over a phase. A mean of 85 % over a phase leaves no headroom for the
// bursts within it; 70 % is where queueing at the CPU starts to show in
// response times (utilisation law, M/M/1: waiting ≈ ρ/(1−ρ) service times,
// 2.3 at 70 %, 5.7 at 85 %).
const (
	HighCPUPct      = 70.0
	SaturatedCPUPct = 85.0
)

// GradeCPU grades a phase's mean CPU: busy % of a host, or % of one core
// for a process or container, which has no fixed ceiling.
func GradeCPU(meanPct float64, host bool) CPUGrade {
	switch {
	case !host:
		return CPUPerProcess
	case meanPct >= SaturatedCPUPct:
		return CPUSaturated
	case meanPct >= HighCPUPct:
		return CPUHigh
	}
	return CPUOK
}

// Thresholds of a JVM's garbage collection over the run: more than one full
// collection a minute, or more than 10 % of the time spent collecting,
// means the heap is too small for the load (or leaks).
const (
	MaxFullGCPerMin = 1.0
	MaxGCTimePct    = 10.0
)

// GCBusy reports whether a JVM collected too often or too long.
func GCBusy(fullPerMin, gcTimePct float64) bool {
	return fullPerMin > MaxFullGCPerMin || gcTimePct > MaxGCTimePct
}
