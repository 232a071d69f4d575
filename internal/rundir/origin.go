package rundir

import "strings"

// SourceKind says where a run's request samples came from. The report
// states only what its source can support (a JMeter file has no planned
// load, an access log may have no durations), so it reads this, never the
// wording of the imported files' descriptions.
type SourceKind string

// Source kinds, as written in run.json's source_kind.
const (
	SourceLive      SourceKind = "live"      // plateau's own load generator
	SourceMerged    SourceKind = "merged"    // segments of distributed generators merged (plateau merge)
	SourceJMeter    SourceKind = "jmeter"    // an imported JMeter JTL
	SourceK6        SourceKind = "k6"        // an imported k6 JSON stream (and summary export)
	SourceLocust    SourceKind = "locust"    // imported Locust CSV statistics
	SourceAccessLog SourceKind = "accesslog" // an imported server access log: the servers' own times
	SourceSystem    SourceKind = "system"    // only system statistics (vmstat, jstat, docker stats): no requests
	SourceMixed     SourceKind = "mixed"     // several request sources, or one this version does not know
)

// Imported reports whether the samples were read from another tool's files.
func (k SourceKind) Imported() bool {
	return k != SourceLive && k != SourceMerged && k != ""
}

// Holds says what a run's data holds, and so what its report may state.
// A false field is a quantity the data does not have: the report says once
// that it cannot know it, and never states a figure for it.
type Holds struct {
	// Durations: response times were recorded (an access log without a
	// request-time field has none).
	Durations bool `json:"durations"`
	// PlannedLoad: the load that was asked for is known per phase, so the
	// load applied can be judged against it.
	PlannedLoad bool `json:"planned_load"`
	// COCorrection: response times count from the intended start, so a
	// late start is counted as waiting (coordinated omission corrected).
	COCorrection bool `json:"co_correction"`
	// ThinkTime: whether the users' time between requests is known (zero
	// or stated), which Little's-law checks of the generator need.
	ThinkTime bool `json:"think_time"`
	// Bytes: response sizes were recorded.
	Bytes bool `json:"bytes"`
	// GeneratorEnv: run.json's host is the machine that generated the
	// load (for an import it is the machine that imported the files).
	GeneratorEnv bool `json:"generator_environment"`
}

// HoldsOf is what a source of kind k holds when nothing more specific is
// known; an importer that knows better (an access log with request times)
// records its own Holds.
func HoldsOf(k SourceKind) Holds {
	switch k {
	case SourceLive, SourceMerged:
		return Holds{Durations: true, PlannedLoad: true, COCorrection: true, ThinkTime: true, Bytes: true, GeneratorEnv: true}
	case SourceJMeter, SourceK6:
		return Holds{Durations: true, Bytes: true}
	case SourceLocust:
		return Holds{Durations: true}
	case SourceAccessLog:
		return Holds{Durations: true, Bytes: true}
	case SourceSystem:
		return Holds{}
	}
	return Holds{Durations: true}
}

// Origin is where the run's data came from and what it holds: run.json's
// source_kind and holds, or for a run.json written before those fields,
// what its status and imported-file descriptions imply.
func (in *Info) Origin() (SourceKind, Holds) {
	if in.SourceKind != "" {
		if in.Holds != nil {
			return in.SourceKind, *in.Holds
		}
		return in.SourceKind, HoldsOf(in.SourceKind)
	}
	k := legacyKind(in)
	return k, HoldsOf(k)
}

// legacyKind infers the source of a run.json without source_kind (written
// before it existed) from its status and the importers' descriptions.
func legacyKind(in *Info) SourceKind {
	if in.Status != StatusImported && len(in.Source) == 0 {
		return SourceLive
	}
	found := SourceKind("")
	for _, s := range in.Source {
		var k SourceKind
		switch {
		case strings.HasPrefix(s, "JMeter JTL"):
			k = SourceJMeter
		case strings.HasPrefix(s, "k6 "):
			k = SourceK6
		case strings.HasPrefix(s, "Locust"):
			k = SourceLocust
		case strings.HasPrefix(s, "access log"), strings.HasPrefix(s, "external-call log"):
			k = SourceAccessLog
		case strings.HasPrefix(s, "vmstat"), strings.HasPrefix(s, "jstat"), strings.HasPrefix(s, "docker stats"):
			continue
		default:
			k = SourceMixed
		}
		if found != "" && found != k {
			return SourceMixed
		}
		found = k
	}
	if found == "" {
		if len(in.Source) > 0 {
			return SourceSystem
		}
		return SourceMixed
	}
	return found
}

// AddSourceKind records that samples of kind k were added to the run: the
// first kind is kept, a different second one makes the run mixed; system
// statistics never change a request source.
func (in *Info) AddSourceKind(k SourceKind, h Holds) {
	switch {
	case in.SourceKind == "" || in.SourceKind == SourceSystem:
		in.SourceKind, in.Holds = k, &h
	case k == SourceSystem || k == in.SourceKind:
	default:
		in.SourceKind = SourceMixed
		m := HoldsOf(SourceMixed)
		if in.Holds != nil {
			m.Durations = in.Holds.Durations && h.Durations
		}
		in.Holds = &m
	}
}
