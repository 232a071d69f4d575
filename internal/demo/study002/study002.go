// Package study002 is `plateau demo 002`: reference study 002 (ohmage
// 2.16) scaled down. plateau datagen writes a data set from the
// reference's data-volume model (examples/school-data/school.yaml:
// teachers → classes → students → survey responses), which the bundled
// survey service loads; students then upload survey
// responses with a photo (multipart/form-data) at three client levels, and
// teachers browse responses through a 13-call flow at four levels. The
// service serves a bounded number of calls at once and answers 504 when a
// call took longer than its proxy timeout; the client's own timeouts are
// counted too.
package study002

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/datagen"
	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/study"
)

// UploadYAML and BrowseYAML are the two tests' plans.
var (
	//go:embed upload.yaml
	UploadYAML []byte
	//go:embed browse.yaml
	BrowseYAML []byte
)

// SchoolYAML is examples/school-data/school.yaml, reference 002's
// data-volume model as a plateau datagen spec (a test keeps them equal).
//
//go:embed school.yaml
var SchoolYAML []byte

// Service is the monitored survey process.
const Service = "ohmage"

// The reference's targets: sub-second responses, heavy operations (the
// uploads) under two seconds; and calls that succeed.
const (
	UploadTarget = "avg(response_time) < 2s"
	BrowseTarget = "avg(response_time) < 1s"
	ErrorTarget  = "error_rate < 1%"
)

// PhotoBytes is the reference's photo with its two scaled copies.
const PhotoBytes = 104638

type scale struct {
	dataScale              float64
	photoBytes             int
	uploads, browses       []int
	dur                    time.Duration
	workers                int
	proxyTimeout, clientTO time.Duration
	search                 searchScale
}

// searchScale bounds the capacity search run per workload: each probe's
// warm-up, measured part and cool-down, the resolution and the most
// probes (the search runs in the demo's tests, so they stay short).
type searchScale struct {
	warmup, probe, cooldown time.Duration
	resolution              string
	maxProbes               int
}

func scaleOf(s studykit.Scale) scale {
	return scale{
		dataScale:    studykit.Pick(s, 0.003, 0.01, 1.0),
		photoBytes:   studykit.Pick(s, 20000, PhotoBytes, PhotoBytes),
		uploads:      studykit.Pick(s, []int{4, 16, 64}, []int{10, 40, 160}, []int{500, 1000, 2000}),
		browses:      studykit.Pick(s, []int{2, 4, 6, 8}, []int{5, 10, 15, 20}, []int{100, 200, 300, 400}),
		dur:          studykit.Pick(s, 6*time.Second, 20*time.Second, 10*time.Minute),
		workers:      studykit.Pick(s, 4, 8, 200),
		proxyTimeout: studykit.Pick(s, 250*time.Millisecond, time.Second, 60*time.Second),
		clientTO:     studykit.Pick(s, time.Second, 3*time.Second, 120*time.Second),
		search: studykit.Pick(s,
			searchScale{time.Second, 3 * time.Second, 500 * time.Millisecond, "25%", 6},
			searchScale{2 * time.Second, 5 * time.Second, time.Second, "10%", 6},
			searchScale{30 * time.Second, 2 * time.Minute, 10 * time.Second, "5%", 12}),
	}
}

// searchLoad is the --set value of a workload's load that runs a capacity
// search over its users, from the lowest level to twice the highest,
// within sc's bounds: the search answers how many clients one instance
// takes within the plan's targets (its sla:).
func searchLoad(levels []int, sc searchScale) string {
	return fmt.Sprintf("{users: %d, duration: %s, search: {start: %d, max: %d, resolution: %q, warmup: %s, probe: %s, cooldown: %s, max_probes: %d}}",
		levels[0], sc.probe, levels[0], 2*levels[len(levels)-1], sc.resolution, sc.warmup, sc.probe, sc.cooldown, sc.maxProbes)
}

// Run runs the study and returns the study document's directory.
func Run(ctx context.Context, env *studykit.Env) (string, error) {
	sc := scaleOf(env.Scale)
	planDir := filepath.Join(env.Dir, "plan")
	upload, err := studykit.WriteFile(planDir, "upload.yaml", UploadYAML)
	if err != nil {
		return "", err
	}
	browse, err := studykit.WriteFile(planDir, "browse.yaml", BrowseYAML)
	if err != nil {
		return "", err
	}
	specPath, err := studykit.WriteFile(planDir, "school.yaml", SchoolYAML)
	if err != nil {
		return "", err
	}
	// The data set: plateau datagen from the reference's model.
	spec, err := datagen.Parse(specPath, SchoolYAML)
	if err != nil {
		return "", err
	}
	dataDir := filepath.Join(planDir, "data")
	env.Logf("generating the data set (plateau datagen school.yaml --scale %g)…", sc.dataScale)
	gen, err := datagen.Generate(ctx, spec, datagen.Options{Dir: dataDir, Scale: sc.dataScale})
	if err != nil {
		return "", fmt.Errorf("generating the data: %w", err)
	}
	photo, err := sut.SurveyPhoto(1, sc.photoBytes)
	if err != nil {
		return "", err
	}
	if _, err := studykit.WriteFile(planDir, "photo.jpg", photo); err != nil {
		return "", err
	}
	logs, err := env.LogDir()
	if err != nil {
		return "", err
	}
	svc := env.NewServices()
	defer svc.Stop()
	// Loading is the data preparation, done before the service starts (at
	// --full scale it takes long).
	env.Logf("loading it into the survey service's database…")
	db := filepath.Join(env.Dir, "ohmage.db")
	if err := sut.LoadSurveyData(ctx, db, dataDir); err != nil {
		return "", fmt.Errorf("loading the data: %w", err)
	}
	p, err := svc.Start(ctx, Service, "survey", "--db", db, "--data", dataDir,
		"--workers", strconv.Itoa(sc.workers), "--timeout", sc.proxyTimeout.String(), "--access-log", filepath.Join(logs, "ohmage-access.log"))
	if err != nil {
		return "", err
	}
	var ups, brs []*studykit.Run
	for i, n := range sc.uploads {
		role := study.Candidate
		if i == 0 {
			role = study.Baseline
		}
		r, err := env.Do(ctx, upload, fmt.Sprintf("upload-%d", n), role, fmt.Sprintf("upload, %d clients", n),
			[]string{"target=" + studykit.URL(p), "monitor={interval: 1s}", "http.timeout=" + sc.clientTO.String(),
				fmt.Sprintf("workloads.upload.load={users: %d, duration: %s}", n, sc.dur)}, svc.Monitors())
		if err != nil {
			return "", err
		}
		r.Factors = study.Factors{Workload: "upload"}
		ups = append(ups, r)
	}
	for _, n := range sc.browses {
		r, err := env.Do(ctx, browse, fmt.Sprintf("browse-%d", n), study.Candidate, fmt.Sprintf("browse, %d threads", n),
			[]string{"target=" + studykit.URL(p), "monitor={interval: 1s}", "http.timeout=" + sc.clientTO.String(),
				fmt.Sprintf("workloads.browse.load={users: %d, duration: %s}", n, sc.dur)}, svc.Monitors())
		if err != nil {
			return "", err
		}
		r.Factors = study.Factors{Workload: "browse"}
		brs = append(brs, r)
	}
	// The capacity question, answered by a search per workload: probes
	// at loads it chooses, up and then bisecting, until it brackets the
	// most clients within the targets.
	var searches []*studykit.Run
	for _, w := range []struct {
		name, plan string
		levels     []int
	}{{"upload", upload, sc.uploads}, {"browse", browse, sc.browses}} {
		r, err := env.Do(ctx, w.plan, w.name+"-search", study.Candidate, w.name+", capacity search",
			[]string{"target=" + studykit.URL(p), "monitor={interval: 1s}", "http.timeout=" + sc.clientTO.String(),
				"workloads." + w.name + ".load=" + searchLoad(w.levels, sc.search)}, svc.Monitors())
		if err != nil {
			return "", err
		}
		r.Factors = study.Factors{Workload: w.name}
		searches = append(searches, r)
	}
	svc.Stop()
	out, _, err := env.Write(studykit.Context{
		Title:       "Reference 002 (demo): capacity of one survey-service instance — uploads and the browse flow",
		Description: "the approximate maximum load one instance withstands with acceptable performance (sub-second, heavy operations under two seconds): survey-response uploads with a photo, then a teacher's browse flow",
		System: []study.KV{{Name: Service, Value: fmt.Sprintf("plateau demo serve-study survey (%d calls at once, proxy timeout %s, SQLite)", sc.workers, sc.proxyTimeout)},
			{Name: "client", Value: fmt.Sprintf("plateau, client timeout %s", sc.clientTO)}},
		Environment: []study.KV{{Name: "hosts", Value: "one machine, loopback; generator and service share its CPUs"},
			{Name: "data", Value: fmt.Sprintf("plateau datagen school.yaml --scale %g (seed %d), loaded at service start", gen.Scale, gen.Seed)}},
		Method: fmt.Sprintf("uploads with %s concurrent clients, then the 13-call browse flow with %s threads, %s each; each client repeats without think time. The capacity of each is then searched (plateau capacity): probes of %s after a %s warm-up, from %d and %d clients upward and then bisecting to %s, at most %d probes each. The reference's first part, reading observer-stream data from a 50-million-row data set on eight virtual machines, is left out: the bundled survey service has no observer streams",
			joinInts(sc.uploads), joinInts(sc.browses), sc.dur, sc.search.probe, sc.search.warmup, sc.uploads[0], sc.browses[0], sc.search.resolution, sc.search.maxProbes),
		Hypothesis: "one instance keeps uploads under two seconds and browsing under one second up to the middle level",
		Questions: []study.Question{
			// The hypothesis: within the targets up to the middle level.
			{Kind: study.CapacityQ, Workload: "upload", SLA: []string{UploadTarget, ErrorTarget}, MinLoad: float64(sc.uploads[1])},
			{Kind: study.CapacityQ, Workload: "browse", SLA: []string{BrowseTarget, ErrorTarget}, MinLoad: float64(sc.browses[1])},
		},
		Limits: []study.Limit{{Name: Service + " calls at once", Value: float64(sc.workers)}},
	}, append(append(ups, brs...), searches...), func(*study.Study) []doc.Section { return sections(sc, gen, ups, brs) })
	return out, err
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, "/")
}

// sections are reference 002's tables in its order.
func sections(sc scale, gen *datagen.Result, ups, brs []*studykit.Run) []doc.Section {
	ref := sut.ReferenceSurveyModel().Counts()
	rows := map[string]datagen.EntityResult{}
	for _, e := range gen.Entities {
		rows[e.Name] = e
	}
	dv := doc.Section{ID: "ref-data", Title: "Data volume"}
	t := studykit.Table(fmt.Sprintf("The data-volume model and the data set generated (scale %g)", gen.Scale), "Field", "Model (3 years, scale 1)", "Expected at this scale", "Generated")
	for _, f := range []struct {
		field, entity string
		model         int64
	}{{"Teachers", "teachers", int64(ref.Teachers)}, {"Classes", "classes", int64(ref.Classes)}, {"Students", "students", int64(ref.Students)},
		{"Survey Responses", "responses", ref.Responses}} {
		e := rows[f.entity]
		studykit.AddRow(t, f.field, studykit.Int(f.model), studykit.F1(e.Expected), studykit.Int(e.Rows))
	}
	resp := rows["responses"]
	studykit.AddRow(t, "Prompt Responses", studykit.Int(ref.PromptResponses), studykit.F1(10*resp.Expected), studykit.Int(10*resp.Rows))
	studykit.AddRow(t, "Images", studykit.Int(ref.Imgs), studykit.F1(resp.Expected), studykit.Int(resp.Rows))
	studykit.AddRow(t, "Image Data (GB)", studykit.F1(float64(ref.Imgs)*PhotoBytes/1e9), studykit.F1(resp.Expected*PhotoBytes/1e9),
		studykit.F2(float64(resp.Rows)*PhotoBytes/1e9)+" (modelled; uploads carry a real photo)")
	dv.Blocks = append(dv.Blocks, t, studykit.Note("Model: the reference's arithmetic (40 teachers the first year and 80 more each year, 2 classes per teacher a year, 30 students per class, 180 days × 3 surveys × 0.75, 10 prompts, one photo of 104,638 bytes with its scaled copies). The data set is written by plateau datagen from examples/school-data/school.yaml (one year of responses per student) and loaded into the service; each response gets its 10 prompt responses there."))
	if resp.Expected > 0 {
		dv.Blocks = append(dv.Blocks, studykit.Assess(fmt.Sprintf("the data set holds %d survey responses, %s %% of the %s the model expects at scale %g.",
			resp.Rows, studykit.F1(100*float64(resp.Rows)/resp.Expected), studykit.F1(resp.Expected), gen.Scale)))
	}

	up := doc.Section{ID: "ref-upload", Title: "Upload"}
	t = studykit.Table("Survey-response upload", "Concurrent Threads", "Percentage of Successful Calls", "Response Time (ms)", "Calls", "Client timeouts", "Proxy timeouts (504)", "Throughput (calls/s)")
	for i, r := range ups {
		st := r.Total()
		by := r.ErrorsByStatus()
		studykit.AddRow(t, strconv.Itoa(sc.uploads[i]), studykit.F2(100-st.ErrorPct), studykit.Ms(st.MeanMs), studykit.Int(st.Samples),
			studykit.Int(by[0]), studykit.Int(by[504]), studykit.F1(st.ThroughputRPS))
	}
	up.Blocks = append(up.Blocks, t, studykit.Note("Client timeouts are calls without an answer within the client's timeout; proxy timeouts are the service's 504 after its own timeout (the work may still have been done, as in the reference)."))
	up.Blocks = append(up.Blocks, levelCharts("ref-upload", "Upload", "Concurrent threads", sc.uploads, ups)...)
	up.Blocks = append(up.Blocks, studykit.Assess(within("uploads", sc.uploads, ups, 2000)))

	br := doc.Section{ID: "ref-browse", Title: "Browse"}
	t = studykit.Table("The 13-call browse flow", "Number of Concurrent Threads", "Average Response Time", "90% Line", "Calls", "Error %")
	for i, r := range brs {
		st := r.Total()
		studykit.AddRow(t, strconv.Itoa(sc.browses[i]), studykit.Ms(st.MeanMs), studykit.Ms(st.P90Ms), studykit.Int(st.Samples), studykit.F2(st.ErrorPct))
	}
	br.Blocks = append(br.Blocks, t)
	br.Blocks = append(br.Blocks, levelCharts("ref-browse", "Browse", "Concurrent threads", sc.browses, brs)...)
	br.Blocks = append(br.Blocks, studykit.Assess(within("browsing", sc.browses, brs, 1000)))
	if len(brs) > 0 {
		last := brs[len(brs)-1]
		t = studykit.Table(fmt.Sprintf("Calls of the browse flow (%d threads)", sc.browses[len(sc.browses)-1]), "Call", "Average (ms)", "90% Line (ms)", "Calls")
		for _, l := range last.LabelNames() {
			if st, ok := last.Label(l); ok {
				studykit.AddRow(t, l, studykit.F1(st.MeanMs), studykit.F1(st.P90Ms), studykit.Int(st.Samples))
			}
		}
		br.Blocks = append(br.Blocks, t)
	}
	return []doc.Section{dv, up, br}
}

// within is a section's assessment from its own table: the highest level
// whose average stayed under the target with under 1 % errors.
func within(what string, levels []int, runs []*studykit.Run, targetMs float64) string {
	best := -1
	for i, r := range runs {
		st := r.Total()
		if st.MeanMs >= targetMs || st.ErrorPct >= 1 {
			break
		}
		best = i
	}
	target := studykit.F1(targetMs/1000) + " s"
	if best < 0 {
		st := runs[0].Total()
		return fmt.Sprintf("%s missed the target (average under %s, errors under 1 %%) already at %d clients: average %s ms, %s %% errors.", what, target, levels[0], studykit.Ms(st.MeanMs), studykit.F2(st.ErrorPct))
	}
	st := runs[best].Total()
	s := fmt.Sprintf("%s stayed within the target (average under %s, errors under 1 %%) up to %d clients (average %s ms, %s %% errors)", what, target, levels[best], studykit.Ms(st.MeanMs), studykit.F2(st.ErrorPct))
	if best+1 < len(runs) {
		n := runs[best+1].Total()
		s += fmt.Sprintf("; at %d clients the average was %s ms with %s %% errors", levels[best+1], studykit.Ms(n.MeanMs), studykit.F2(n.ErrorPct))
	}
	return s + "."
}

// levelCharts are response time and throughput per level.
func levelCharts(name, what, xLabel string, levels []int, runs []*studykit.Run) []doc.Block {
	var x, avg, tput []float64
	for i, r := range runs {
		st := r.Total()
		x, avg, tput = append(x, float64(levels[i])), append(avg, st.MeanMs), append(tput, st.ThroughputRPS)
	}
	if len(x) == 0 {
		return nil
	}
	return []doc.Block{studykit.LoadChart(name, what+": average response time and throughput per level", xLabel, "Average response time (ms)", "ms", x,
		[]studykit.Line{{Name: "average response time", Y: avg}, {Name: "throughput", Y: tput, Right: true}}, "Throughput (calls/s)", "req/s")}
}
