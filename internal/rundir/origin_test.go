package rundir

import "testing"

// TestOrigin: a run.json with source_kind answers with it; one written
// before the field is classified by its status and imported files, so old
// run directories keep their report; system statistics never make a run an
// import of requests, and two request sources make it mixed.
func TestOrigin(t *testing.T) {
	t.Parallel()
	accessNoTimes := Holds{Bytes: true}
	cases := []struct {
		name  string
		info  Info
		kind  SourceKind
		holds Holds
	}{
		{"live, recorded", Info{Status: StatusCompleted, SourceKind: SourceLive}, SourceLive, HoldsOf(SourceLive)},
		{"live, older run.json", Info{Status: StatusInterrupted}, SourceLive, HoldsOf(SourceLive)},
		{"access log without times, recorded", Info{Status: StatusImported, SourceKind: SourceAccessLog, Holds: &accessNoTimes}, SourceAccessLog, accessNoTimes},
		{"jmeter, older run.json", Info{Status: StatusImported, Source: []string{"JMeter JTL results.jtl (CSV)"}}, SourceJMeter, HoldsOf(SourceJMeter)},
		{"locust with vmstat, older", Info{Status: StatusImported, Source: []string{"Locust stats a_stats.csv", "vmstat cpu.log"}}, SourceLocust, HoldsOf(SourceLocust)},
		{"vmstat alone, older", Info{Status: StatusImported, Source: []string{"vmstat cpu.log"}}, SourceSystem, Holds{}},
		{"two tools, older", Info{Status: StatusImported, Source: []string{"k6 JSON stream a.json", "JMeter JTL b.jtl"}}, SourceMixed, HoldsOf(SourceMixed)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, h := c.info.Origin()
			if k != c.kind || h != c.holds {
				t.Errorf("Origin() = %s %+v, want %s %+v", k, h, c.kind, c.holds)
			}
		})
	}
	if HoldsOf(SourceJMeter).PlannedLoad || HoldsOf(SourceJMeter).COCorrection || HoldsOf(SourceJMeter).GeneratorEnv {
		t.Error("a JMeter file holds no planned load, no CO correction and no generator environment")
	}
}

func TestAddSourceKind(t *testing.T) {
	t.Parallel()
	var in Info
	in.AddSourceKind(SourceSystem, Holds{})
	in.AddSourceKind(SourceLocust, HoldsOf(SourceLocust))
	in.AddSourceKind(SourceSystem, Holds{})
	if k, _ := in.Origin(); k != SourceLocust {
		t.Fatalf("vmstat + locust + jstat is %s, want locust", k)
	}
	in.AddSourceKind(SourceAccessLog, Holds{Bytes: true})
	k, h := in.Origin()
	if k != SourceMixed || h.Durations {
		t.Errorf("locust + an access log without times is %s %+v, want mixed without durations", k, h)
	}
	if !SourceJMeter.Imported() || SourceLive.Imported() || SourceMerged.Imported() {
		t.Error("Imported: jmeter is, live and merged are not")
	}
}
