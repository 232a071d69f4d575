// Package study002 is `plateau demo 002`: reference study 002 (ohmage
// 2.16) scaled down. The bundled survey service generates its database
// from the reference's data-volume model (teachers → classes → students →
// survey responses with prompts and photos); students then upload survey
// responses with a photo (multipart/form-data) at three client levels, and
// teachers browse responses through a 13-call flow at four levels. The
// service serves a bounded number of calls at once and answers 504 when a
// call took longer than its proxy timeout; the client's own timeouts are
// counted too.
package study002

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

// Service is the monitored survey process.
const Service = "ohmage"

type scale struct {
	model                  sut.SurveyModel
	maxResponses           int
	uploads, browses       []int
	dur                    time.Duration
	workers                int
	proxyTimeout, clientTO time.Duration
}

func scaleOf(s studykit.Scale) scale {
	ref := sut.ReferenceSurveyModel()
	small := sut.SurveyModel{Years: 1, Teachers: 4, NewTeachers: 0, ClassesPerTeacher: 2, StudentsPerClass: 10, Days: 10, SurveysPerDay: 3, Prompts: 10, SubmitProb: 0.75, PhotoBytes: 20000}
	mid := sut.SurveyModel{Years: 2, Teachers: 10, NewTeachers: 20, ClassesPerTeacher: 2, StudentsPerClass: 30, Days: 20, SurveysPerDay: 3, Prompts: 10, SubmitProb: 0.75, PhotoBytes: ref.PhotoBytes}
	return scale{
		model:        studykit.Pick(s, small, mid, ref),
		maxResponses: studykit.Pick(s, 0, 30000, 0),
		uploads:      studykit.Pick(s, []int{4, 16, 64}, []int{10, 40, 160}, []int{500, 1000, 2000}),
		browses:      studykit.Pick(s, []int{2, 4, 6, 8}, []int{5, 10, 15, 20}, []int{100, 200, 300, 400}),
		dur:          studykit.Pick(s, 6*time.Second, 30*time.Second, 10*time.Minute),
		workers:      studykit.Pick(s, 4, 8, 200),
		proxyTimeout: studykit.Pick(s, 250*time.Millisecond, time.Second, 60*time.Second),
		clientTO:     studykit.Pick(s, time.Second, 3*time.Second, 120*time.Second),
	}
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
	// The generated data: the logins the plans read, and the photo.
	c := sc.model.Counts()
	var students, teachers strings.Builder
	students.WriteString("user,password,campaign\n")
	for i := 1; i <= c.Students; i++ {
		u, p := sut.SurveyStudent(i)
		fmt.Fprintf(&students, "%s,%s,%s\n", u, p, sut.SurveyCampaign(1+(i-1)/sc.model.StudentsPerClass))
	}
	teachers.WriteString("user,password,campaign\n")
	for t := 1; t <= c.Teachers; t++ {
		fmt.Fprintf(&teachers, "teacher%04d,pw,%s\n", t, sut.SurveyCampaign(t))
	}
	photo, err := sut.SurveyPhoto(1, sc.model.PhotoBytes)
	if err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"students.csv": []byte(students.String()), "teachers.csv": []byte(teachers.String()), "photo.jpg": photo} {
		if _, err := studykit.WriteFile(planDir, name, b); err != nil {
			return "", err
		}
	}
	logs, err := env.LogDir()
	if err != nil {
		return "", err
	}
	model, _ := json.Marshal(sc.model)
	svc := env.NewServices()
	defer svc.Stop()
	env.Logf("generating the data (%d students, %d survey responses in the model)…", c.Students, c.Responses)
	p, err := svc.Start(ctx, Service, "survey", "--db", filepath.Join(env.Dir, "ohmage.db"), "--model", string(model),
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
		ups = append(ups, r)
	}
	for _, n := range sc.browses {
		r, err := env.Do(ctx, browse, fmt.Sprintf("browse-%d", n), study.Candidate, fmt.Sprintf("browse, %d threads", n),
			[]string{"target=" + studykit.URL(p), "monitor={interval: 1s}", "http.timeout=" + sc.clientTO.String(),
				fmt.Sprintf("workloads.browse.load={users: %d, duration: %s}", n, sc.dur)}, svc.Monitors())
		if err != nil {
			return "", err
		}
		brs = append(brs, r)
	}
	svc.Stop()
	out, _, err := env.Write(studykit.Context{
		Title:       "Reference 002 (demo): capacity of one survey-service instance — uploads and the browse flow",
		Description: "the approximate maximum load one instance withstands with acceptable performance (sub-second, heavy operations under two seconds): survey-response uploads with a photo, then a teacher's browse flow",
		System: []study.KV{{Name: Service, Value: fmt.Sprintf("plateau demo serve-study survey (%d calls at once, proxy timeout %s, SQLite)", sc.workers, sc.proxyTimeout)},
			{Name: "client", Value: fmt.Sprintf("plateau, client timeout %s", sc.clientTO)}},
		Environment: []study.KV{{Name: "hosts", Value: "one machine, loopback; generator and service share its CPUs"},
			{Name: "data", Value: "generated from the data-volume model at service start (in the demo, not with plateau datagen)"}},
		Method: fmt.Sprintf("uploads with %s concurrent clients, then the 13-call browse flow with %s threads, %s each; each client repeats without think time",
			joinInts(sc.uploads), joinInts(sc.browses), sc.dur),
		Hypothesis: "one instance keeps uploads under two seconds and browsing under one second up to the middle level",
	}, append(ups, brs...), sections(sc, ups, brs))
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
func sections(sc scale, ups, brs []*studykit.Run) []doc.Section {
	c := sc.model.Counts()
	gen := c
	if sc.maxResponses > 0 && int64(sc.maxResponses) < gen.Responses {
		gen.Responses, gen.PromptResponses, gen.Imgs = int64(sc.maxResponses), int64(sc.maxResponses)*int64(sc.model.Prompts), int64(sc.maxResponses)
	}
	dv := doc.Section{ID: "ref-data", Title: "Data volume"}
	years := fmt.Sprintf("%d years", sc.model.Years)
	if sc.model.Years == 1 {
		years = "1 year"
	}
	t := studykit.Table("The data-volume model ("+years+") and the data generated", "Field", "Model", "Generated")
	mb := func(n int64) string { return studykit.F1(float64(n) * float64(sc.model.PhotoBytes) / 1e6) }
	studykit.AddRow(t, "Teachers", strconv.Itoa(c.Teachers), strconv.Itoa(gen.Teachers))
	studykit.AddRow(t, "Classes", strconv.Itoa(c.Classes), strconv.Itoa(gen.Classes))
	studykit.AddRow(t, "Students", strconv.Itoa(c.Students), strconv.Itoa(gen.Students))
	studykit.AddRow(t, "Survey Responses", studykit.Int(c.Responses), studykit.Int(gen.Responses))
	studykit.AddRow(t, "Prompt Responses", studykit.Int(c.PromptResponses), studykit.Int(gen.PromptResponses))
	studykit.AddRow(t, "Images", studykit.Int(c.Imgs), "one photo file, uploaded with each response")
	studykit.AddRow(t, "Image Data (MB)", mb(c.Imgs), mb(gen.Imgs)+" (not stored: scaled copies are made and dropped)")
	dv.Blocks = append(dv.Blocks, t, studykit.Note(fmt.Sprintf("Model: %d teachers the first year and %d more each year, %d new classes per teacher a year of %d students, %d surveys a day on %d days answered with probability %.2f, %d prompts each, one photo of %d bytes (with its two scaled copies).",
		sc.model.Teachers, sc.model.NewTeachers, sc.model.ClassesPerTeacher, sc.model.StudentsPerClass, sc.model.SurveysPerDay, sc.model.Days, sc.model.SubmitProb, sc.model.Prompts, sc.model.PhotoBytes)))

	up := doc.Section{ID: "ref-upload", Title: "Upload"}
	t = studykit.Table("Survey-response upload", "Concurrent Threads", "Percentage of Successful Calls", "Response Time (ms)", "Calls", "Client timeouts", "Proxy timeouts (504)", "Throughput (calls/s)")
	for i, r := range ups {
		st := r.Total()
		by := r.ErrorsByStatus()
		studykit.AddRow(t, strconv.Itoa(sc.uploads[i]), studykit.F2(100-st.ErrorPct), studykit.Ms(st.MeanMs), studykit.Int(st.Samples),
			studykit.Int(by[0]), studykit.Int(by[504]), studykit.F1(st.ThroughputRPS))
	}
	up.Blocks = append(up.Blocks, t, studykit.Note("Client timeouts are calls without an answer within the client's timeout; proxy timeouts are the service's 504 after its own timeout (the work may still have been done, as in the reference)."))

	br := doc.Section{ID: "ref-browse", Title: "Browse"}
	t = studykit.Table("The 13-call browse flow", "Number of Concurrent Threads", "Average Response Time", "90% Line", "Calls", "Error %")
	for i, r := range brs {
		st := r.Total()
		studykit.AddRow(t, strconv.Itoa(sc.browses[i]), studykit.Ms(st.MeanMs), studykit.Ms(st.P90Ms), studykit.Int(st.Samples), studykit.F2(st.ErrorPct))
	}
	br.Blocks = append(br.Blocks, t)
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
