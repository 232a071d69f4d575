package analysis

import (
	"reflect"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/rundir/rundirtest"
)

// interfacesIn lists the paths of every interface-typed field reachable
// from t (through structs, pointers, slices, arrays and maps).
func interfacesIn(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	switch t.Kind() {
	case reflect.Interface:
		*out = append(*out, path+" ("+t.String()+")")
	case reflect.Pointer, reflect.Slice, reflect.Array:
		interfacesIn(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		interfacesIn(t.Key(), path+"{key}", seen, out)
		interfacesIn(t.Elem(), path+"{}", seen, out)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("json") == "-" {
				continue
			}
			interfacesIn(f.Type, path+"."+f.Name, seen, out)
		}
	}
}

// TestSummaryIsTyped: summary.json is typed Go values throughout, so no
// stage reads a section back out of an `any` (the report, the study and
// compare consume the same types the analysis fills).
func TestSummaryIsTyped(t *testing.T) {
	var found []string
	interfacesIn(reflect.TypeOf(Summary{}), "Summary", map[reflect.Type]bool{}, &found)
	for _, f := range found {
		t.Errorf("untyped field in summary.json: %s", f)
	}
	// The walk itself finds an interface where there is one.
	var probe []string
	interfacesIn(reflect.TypeOf(struct{ X []map[string]any }{}), "probe", map[reflect.Type]bool{}, &probe)
	if len(probe) != 1 {
		t.Errorf("the walk missed an any field: %v", probe)
	}
}

// freeText lists the paths of every plain string field reachable from t:
// free text. A named string type (a verdict, a kind) is a word from a
// closed list, not text.
func freeText(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	switch t.Kind() {
	case reflect.String:
		if t == reflect.TypeOf("") {
			*out = append(*out, path)
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		freeText(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		freeText(t.Key(), path+"{key}", seen, out)
		freeText(t.Elem(), path+"{}", seen, out)
	case reflect.Struct:
		if seen[t] || t == reflect.TypeOf(time.Time{}) {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			freeText(f.Type, path+"."+f.Name, seen, out)
		}
	}
}

// TestAnalysesHoldNoText: the knee, the USL fit, Little's law, the memory
// trend and the comparison answer in kinds and numbers; their words are
// the report's (report/words.go). A free-text field in their results is a
// sentence written on the wrong side of the seam.
func TestAnalysesHoldNoText(t *testing.T) {
	for _, v := range []any{knee.Result{}, trend.MemoryResult{}, compare.Result{}} {
		var found []string
		freeText(reflect.TypeOf(v), reflect.TypeOf(v).String(), map[reflect.Type]bool{}, &found)
		for _, f := range found {
			t.Errorf("free text in an analysis result: %s", f)
		}
	}
	var probe []string
	freeText(reflect.TypeOf(struct {
		K compare.Verdict
		R []struct{ Reason string }
	}{}), "probe", map[reflect.Type]bool{}, &probe)
	if len(probe) != 1 || probe[0] != "probe.R[].Reason" {
		t.Errorf("the walk found %v, want only the Reason", probe)
	}
}

// TestRequirementsAndRulesHoldNoText: what a requirement judges
// (sla.Subject), the resource rules' measures and the network faults are
// kinds and numbers; their words are report/words.go's (SubjectText,
// MeasureText). The only plain strings left are names a user or a
// monitor gave (a label, a workload, a server, a component) and
// identifiers of a closed list (a resource, a unit), listed here one by
// one: a new string field fails until it is judged a name or moved to a
// kind.
func TestRequirementsAndRulesHoldNoText(t *testing.T) {
	names := map[string]bool{
		"sla.Subject.Label": true, "sla.Subject.Workload": true, "sla.Subject.Server": true,
		"resources.Rule.Aspect": true, "resources.Rule.Unit": true,
		"resources.NetFault.Target": true, "resources.NetFault.Component": true,
	}
	for _, v := range []any{sla.Subject{}, resources.Rule{}, resources.NetFault{}} {
		var found []string
		freeText(reflect.TypeOf(v), reflect.TypeOf(v).String(), map[reflect.Type]bool{}, &found)
		for _, f := range found {
			if !names[f] {
				t.Errorf("free text in a requirement or a rule: %s", f)
			}
		}
	}
	// The words left analysis: no rule carries a word, no expression
	// describes itself.
	if _, ok := reflect.TypeOf(resources.Rule{}).FieldByName("Word"); ok {
		t.Error("resources.Rule has a Word again: its measure is a kind (Measure)")
	}
	if _, ok := reflect.TypeOf(&sla.Expr{}).MethodByName("Describe"); ok {
		t.Error("sla.Expr describes itself again: its subject is a kind (Subject)")
	}
	for _, r := range resources.ServiceRules {
		if r.Measure < resources.MeasureCores || r.Measure > resources.MeasureConnections {
			t.Errorf("rule %s/%s has no measure of the closed list: %v", r.Aspect, r.Unit, r.Measure)
		}
	}
}

// TestAnalysisLeavesWordsToReport: summary.json's worded fields (the
// knee's sentence, why no knee, why no USL fit, Little's-law notes, the
// memory trend's method and reason, the comparison's note, the capacity
// search's answer) are empty when the analysis hands its result over;
// their typed twins are set. report.Words fills the words.
func TestAnalysisLeavesWordsToReport(t *testing.T) {
	d, err := Load(rundirtest.WriteSteps(t))
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(d, []string{"avg(response_time) < 400ms"})
	cr := Capacity(d, s, nil)
	if cr.Result == nil {
		t.Fatalf("no capacity: skip %v err %v", cr.Skip, cr.Err)
	}
	c := cr.Result
	if c.KneeReason != "" || c.USLReason != "" || (c.Knee != nil && c.Knee.Sentence != "") {
		t.Errorf("capacity worded by the analysis: %q %q %+v", c.KneeReason, c.USLReason, c.Knee)
	}
	if (c.Knee == nil) == (c.NoKnee == nil) || c.USL == nil && c.USLSkip == nil {
		t.Errorf("capacity without its typed reasons: knee %v no knee %v usl %v skip %v", c.Knee, c.NoKnee, c.USL, c.USLSkip)
	}
	for _, p := range c.Points {
		if p.LittleNote != "" {
			t.Errorf("Little's-law note worded by the analysis: %q", p.LittleNote)
		}
	}

	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mem := &core.Series{Target: "svc", Kind: "process", Metric: "rss_bytes"}
	for i := range 120 {
		mem.Points = append(mem.Points, core.Point{T: t0.Add(time.Duration(i) * 10 * time.Second), V: float64(100e6 + 1e5*i)})
	}
	mts := MemoryTrends([]resources.Target{{Name: "svc", Kind: "process", Series: []*core.Series{mem}}})
	if len(mts) != 1 {
		t.Fatalf("memory trends %d, want 1", len(mts))
	}
	if m := mts[0]; m.Method != "" || m.Reason != "" || m.Basis == nil || m.Why.Kind != trend.MemoryGrowing {
		t.Errorf("memory trend: method %q reason %q basis %+v why %+v; want no words, a basis and growing", m.Method, m.Reason, m.Basis, m.Why)
	}

	for _, r := range Compare(d, d, nil) {
		if r.Note != "" {
			t.Errorf("comparison note worded by the analysis: %q", r.Note)
		}
	}

	cs := &capacity.Search{Unit: "users", Probes: []capacity.SearchProbe{{N: 1, Load: 2, ThroughputRPS: 10, MeanMs: 200, Held: true, Verdict: capacity.Good}}}
	FinishSearch(cs, nil)
	if cs.Sentence != "" || cs.USLReason != "" || cs.USLSkip == nil || cs.USLSkip.Kind != knee.USLTooFewProbes {
		t.Errorf("search: sentence %q reason %q skip %+v; want no words and too few probes", cs.Sentence, cs.USLReason, cs.USLSkip)
	}
}
