package study

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// soakMember is a 20-minute soak: a check-in transaction whose average
// rises from 5 ms by riseMs over the run, and a service whose memory grows
// by growMB, both with seeded noise.
func soakMember(name string, riseMs, growMB float64, seed uint64) *member {
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Date(2025, 5, 13, 10, 0, 0, 0, time.UTC)
	const seconds = 1200
	k := analysis.LabelKey{Workload: "circulation", Label: "Check-In Controller", Tx: true}
	d := &analysis.Dataset{Info: &rundir.Info{}, Start: start, End: start.Add(seconds * time.Second),
		Run: map[analysis.LabelKey]*metrics.Agg{k: metrics.NewAgg()}, Timeline: map[analysis.LabelKey][]analysis.Tick{}}
	mem := core.Series{Target: "mod-circulation", Kind: mondata.KindProcess, Metric: "rss_bytes", Unit: "bytes"}
	for i := range seconds {
		t := start.Add(time.Duration(i) * time.Second)
		mean := 5 + riseMs*float64(i)/seconds + rng.NormFloat64()*0.3
		d.Timeline[k] = append(d.Timeline[k], analysis.Tick{T: t, Count: 10, MeanMs: mean})
		d.Run[k].AddValue(int64(mean * 1000))
		mem.Points = append(mem.Points, core.Point{T: t, V: (60 + growMB*float64(i)/seconds + rng.NormFloat64()*0.2) * 1e6})
	}
	return &member{name: name, role: Soak, d: d, series: []core.Series{mem}, red: report.NewRedactor(nil, nil)}
}

// A soak with a planted leak drifts and names the leaking service; a flat
// one is stable.
func TestSoakPlantedLeak(t *testing.T) {
	t.Parallel()
	leak := soakMember("current release, soak", 10, 15, 1)
	flat := soakMember("previous release, soak", 0, 0, 2)
	a := wd.answerSoak(Question{Kind: SoakQ}.withDefaults(), []*member{leak, flat})
	if a.Outcome != Failed || len(a.Soak) != 2 {
		t.Fatalf("outcome %s, %d soaks: %s", a.Outcome, len(a.Soak), a.Line)
	}
	l, f := a.Soak[0], a.Soak[1]
	if !l.Drifting || len(l.Labels) != 1 || !l.Labels[0].Drifting || l.Labels[0].ChangePct < 100 {
		t.Errorf("leak: %+v", l)
	}
	if len(l.Memory) != 1 || l.Memory[0].Verdict != "growing" {
		t.Errorf("leak's memory: %+v", l.Memory)
	}
	if f.Drifting || f.Labels[0].Drifting || f.Memory[0].Verdict == "growing" {
		t.Errorf("flat soak: %+v", f)
	}
	for _, want := range []string{"current release, soak: drifting over 20 min", "memory of mod-circulation grew", "a leak", "Previous release, soak: stable over 20 min"} {
		if !strings.Contains(a.Line, want) {
			t.Errorf("answer lacks %q: %s", want, a.Line)
		}
	}
	if a.Confidence != english.ConfIndicative {
		t.Errorf("a 20-minute soak's confidence %q, want indicative", a.Confidence)
	}
}

// interferenceMember is a run whose workload "circulation" spans 3
// minutes and "data-import" its middle minute, during which circulation's
// average is during ms (10 ms otherwise).
func interferenceMember(name string, during float64) *member {
	start := time.Date(2025, 5, 13, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	k := analysis.LabelKey{Workload: "circulation", Label: "check-in"}
	d := &analysis.Dataset{Info: &rundir.Info{}, Start: start, End: at(180),
		Phases: []core.Phase{{Name: "circulation", Workload: "circulation", Start: at(0), End: at(180), Users: 30},
			{Name: "data-import", Workload: "data-import", Start: at(60), End: at(120), Users: 1}},
		Run: map[analysis.LabelKey]*metrics.Agg{k: metrics.NewAgg()}, Timeline: map[analysis.LabelKey][]analysis.Tick{}}
	for s := range 180 {
		mean := 10.0
		if s >= 60 && s < 120 {
			mean = during
		}
		d.Timeline[k] = append(d.Timeline[k], analysis.Tick{T: at(s), Count: 20, MeanMs: mean})
	}
	return &member{name: name, d: d, sum: &analysis.Summary{}, red: report.NewRedactor(nil, nil)}
}

// A workload whose average triples while the other runs is disturbed; one
// that holds is not.
func TestInterferencePlanted(t *testing.T) {
	t.Parallel()
	q := Question{Kind: Interference}.withDefaults()
	a := wd.answerInterference(q, []*member{interferenceMember("test 1", 10.5), interferenceMember("test 2", 30)})
	if a.Outcome != Failed || len(a.Interference) != 2 {
		t.Fatalf("outcome %s: %s", a.Outcome, a.Line)
	}
	if a.Interference[0].Disturbed || !a.Interference[1].Disturbed {
		t.Errorf("disturbed: %v, %v", a.Interference[0].Disturbed, a.Interference[1].Disturbed)
	}
	w := a.Interference[1].Windows
	if w[0].MeanMs != 10 || w[1].MeanMs != 30 || w[2].MeanMs != 10 || w[1].Requests != 60*20 {
		t.Errorf("windows %+v", w)
	}
	if !strings.HasPrefix(a.Line, "yes: data-import disturbed circulation in 1 of 2 runs; most in test 2: average 30.0 ms while data-import ran against 10.0 ms before") {
		t.Errorf("answer: %s", a.Line)
	}
	b := wd.answerInterference(q, []*member{interferenceMember("test 1", 10.5)})
	if b.Outcome != Passed || !strings.HasPrefix(b.Line, "no: ") {
		t.Errorf("undisturbed: %s %s", b.Outcome, b.Line)
	}
}

// wd words the answers of the tests that call the answering functions
// directly, in English (as a study file without lang: does).
var wd = wordsIn(nil)
