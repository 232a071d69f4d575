package sut

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/datagen"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// send posts body (JSON when a string) to url with headers and returns
// the status and body.
func send(t testing.TB, method, url, contentType string, body io.Reader, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func postJSON(t testing.TB, url, body string, headers ...string) (int, string) {
	t.Helper()
	code, _, b := send(t, http.MethodPost, url, "application/json", strings.NewReader(body), headers...)
	return code, b
}

// The reference's model gives the reference's table: 360 teachers, 720
// classes, 21,600 students over three years; its responses (8,722,312)
// were drawn, the model's expectation is within 0.5 % of them.
func TestSurveyModelCountsMatchReference(t *testing.T) {
	c := ReferenceSurveyModel().Counts()
	if c.Teachers != 360 || c.Classes != 720 || c.Students != 21600 {
		t.Fatalf("teachers %d, classes %d, students %d; want 360, 720, 21600", c.Teachers, c.Classes, c.Students)
	}
	if d := float64(c.Responses-8722312) / 8722312; d < -0.005 || d > 0.005 {
		t.Errorf("responses %d, %.2f %% from the reference's 8,722,312", c.Responses, 100*d)
	}
	if c.PromptResponses != 10*c.Responses {
		t.Errorf("prompt responses %d, want 10 per response", c.PromptResponses)
	}
	// The reference's worked example: the second year has 9,600 students
	// and 3,888,000 responses.
	m := ReferenceSurveyModel()
	m.Years = 2
	if c := m.Counts(); c.Students != 9600 || c.Responses != 3888000 {
		t.Errorf("two years: %d students, %d responses; want 9600, 3888000", c.Students, c.Responses)
	}
}

func startCirculation(t *testing.T, cfg CirculationConfig) (*Circulation, *server) {
	t.Helper()
	c, err := NewCirculation(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, startServer(t, c.Serve)
}

func login(t *testing.T, base string) string {
	t.Helper()
	code, h, _ := send(t, http.MethodPost, base+"/authn/login", "application/json", strings.NewReader(`{"username":"u","password":"p"}`))
	if code != http.StatusCreated || h.Get("X-Okapi-Token") == "" {
		t.Fatalf("login: %d, token %q", code, h.Get("X-Okapi-Token"))
	}
	return h.Get("X-Okapi-Token")
}

// checkInOut runs the flow of reference 001 against a circulation service.
func checkInOut(t *testing.T, base string) {
	tok := login(t, base)
	h := []string{"X-Okapi-Token", tok}
	if r := get(t, base+"/users?query=barcode=="+PatronBarcode(3), h...); r.status != 200 || !strings.Contains(r.body, `"totalRecords":1`) {
		t.Fatalf("users: %d %s", r.status, r.body)
	}
	if r := get(t, base+"/inventory/items?query=barcode=="+ItemBarcode(3), h...); r.status != 200 || !strings.Contains(r.body, `"Available"`) {
		t.Fatalf("items: %d %s", r.status, r.body)
	}
	out := `{"itemBarcode":"` + ItemBarcode(3) + `","userBarcode":"` + PatronBarcode(3) + `"}`
	if code, b := postJSON(t, base+"/circulation/check-out-by-barcode", out, h...); code != http.StatusCreated {
		t.Fatalf("check-out: %d %s", code, b)
	}
	if code, _ := postJSON(t, base+"/circulation/check-out-by-barcode", out, h...); code != http.StatusUnprocessableEntity {
		t.Errorf("second check-out of the same item: %d, want 422", code)
	}
	if r := get(t, base+"/circulation/loans?query=userBarcode=="+PatronBarcode(3), h...); !strings.Contains(r.body, `"totalRecords":1`) {
		t.Errorf("open loans: %s", r.body)
	}
	in := `{"itemBarcode":"` + ItemBarcode(3) + `"}`
	if code, b := postJSON(t, base+"/circulation/check-in-by-barcode", in, h...); code != http.StatusOK {
		t.Fatalf("check-in: %d %s", code, b)
	}
	if code, _ := postJSON(t, base+"/circulation/check-in-by-barcode", in, h...); code != http.StatusUnprocessableEntity {
		t.Errorf("second check-in: %d, want 422", code)
	}
	if code, _ := postJSON(t, base+"/circulation/check-out-by-barcode", out); code != http.StatusUnauthorized {
		t.Errorf("check-out without a token: %d, want 401", code)
	}
	// The data preparation makes a checked-out item available again.
	if code, _ := postJSON(t, base+"/circulation/check-out-by-barcode", out, h...); code != http.StatusCreated {
		t.Fatalf("check-out again: %d", code)
	}
	if code, _ := postJSON(t, base+"/admin/prepare", ""); code != http.StatusOK {
		t.Fatalf("prepare: %d", code)
	}
	if code, _ := postJSON(t, base+"/circulation/check-out-by-barcode", out, h...); code != http.StatusCreated {
		t.Errorf("check-out after the preparation: %d, want 201", code)
	}
}

func TestCirculationCheckInOut(t *testing.T) {
	for _, rel := range []string{ReleaseCurrent, ReleasePrevious} {
		t.Run(rel, func(t *testing.T) {
			_, s := startCirculation(t, CirculationConfig{SQLite: filepath.Join(t.TempDir(), "c.db"), Items: 50, Patrons: 50, HistoryLoans: 500, Release: rel})
			checkInOut(t, s.URL)
		})
	}
}

// The same flow on PostgreSQL (the placeholders are rewritten).
func TestCirculationOnPostgres(t *testing.T) {
	dsn := monitortest.Postgres(t)
	_, s := startCirculation(t, CirculationConfig{DSN: dsn, Items: 50, Patrons: 50, HistoryLoans: 500})
	checkInOut(t, s.URL)
}

// The planted leak keeps memory per check-out and makes check-ins slower
// the longer the service runs.
func TestCirculationLeak(t *testing.T) {
	c, s := startCirculation(t, CirculationConfig{SQLite: filepath.Join(t.TempDir(), "c.db"), Items: 300, Patrons: 300, HistoryLoans: -1,
		LeakBytes: 1024, LeakCost: 100 * time.Microsecond})
	h := []string{"X-Okapi-Token", login(t, s.URL)}
	checkin := func(i int) time.Duration {
		out := `{"itemBarcode":"` + ItemBarcode(i) + `","userBarcode":"` + PatronBarcode(i) + `"}`
		if code, _ := postJSON(t, s.URL+"/circulation/check-out-by-barcode", out, h...); code != http.StatusCreated {
			t.Fatalf("check-out %d: %d", i, code)
		}
		start := time.Now()
		if code, _ := postJSON(t, s.URL+"/circulation/check-in-by-barcode", `{"itemBarcode":"`+ItemBarcode(i)+`"}`, h...); code != http.StatusOK {
			t.Fatalf("check-in %d: %d", i, code)
		}
		return time.Since(start)
	}
	first := checkin(1)
	for i := 2; i < 300; i++ {
		checkin(i)
	}
	last := checkin(300)
	// What the leak did, counted: one entry kept per check-out, each
	// walked by every check-in after it (the oldest by all 300, the
	// newest by one), and the last check-in made to wait 300 × 100 µs.
	// (A comparison with the first check-in's time failed when a loaded
	// machine made that one slow.)
	c.leakMu.Lock()
	n := len(c.leaked)
	var walks []byte
	if n == 300 {
		walks = []byte{c.leaked[0][0], c.leaked[149][0], c.leaked[299][0]}
	}
	c.leakMu.Unlock()
	if n != 300 {
		t.Fatalf("leaked %d entries, want one per check-out (300)", n)
	}
	if want := []byte{byte(300 % 256), 151, 1}; string(walks) != string(want) {
		t.Errorf("entries 1, 150 and 300 walked %v times, want %v (every later check-in walks every entry)", walks, want)
	}
	if last < 300*100*time.Microsecond {
		t.Errorf("check-in after 300 check-outs took %v, want at least the leak's 30 ms", last)
	}
	t.Logf("check-in took %v first and %v after 300 check-outs", first, last)
}

// A data-import chunk goes through the circulation service to the module
// and back into the circulation service's database.
func TestDataImportThroughCirculation(t *testing.T) {
	d, err := NewDataImport(DataImportConfig{Work: 1})
	if err != nil {
		t.Fatal(err)
	}
	di := startServer(t, d.Serve)
	c, s := startCirculation(t, CirculationConfig{SQLite: filepath.Join(t.TempDir(), "c.db"), Items: 10, Patrons: 10, HistoryLoans: -1, DataImportURL: di.URL})
	h := []string{"X-Okapi-Token", login(t, s.URL)}
	if code, b := postJSON(t, s.URL+"/data-import/chunks", `{"records":120,"job":"j1"}`, h...); code != http.StatusCreated {
		t.Fatalf("import: %d %s", code, b)
	}
	var n int
	if err := c.db.QueryRow(`SELECT COUNT(*) FROM instance WHERE job = 'j1'`).Scan(&n); err != nil || n != 120 {
		t.Errorf("instances %d (%v), want 120", n, err)
	}
	if code, _ := postJSON(t, s.URL+"/data-import/chunks", `{"records":1,"job":"j2"}`); code != http.StatusUnauthorized {
		t.Errorf("import without a token: %d, want 401", code)
	}
	// Called directly with a gateway address that is not loopback, the
	// module refuses to call it.
	if code, _ := postJSON(t, di.URL+"/data-import/chunks", `{"records":1,"job":"j3"}`, OkapiURLHeader, "http://192.0.2.1:9130"); code != http.StatusBadRequest {
		t.Errorf("non-loopback gateway: %d, want 400", code)
	}
}

// The manager answers through the worker and the beekeeper in every log
// configuration; synchronous and asynchronous logging write one line per
// call, none writes nothing.
func TestCompanyLogConfigurations(t *testing.T) {
	w, err := NewCompany(CompanyConfig{Role: "worker", Compute: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ws := startServer(t, w.Serve)
	b, err := NewCompany(CompanyConfig{Role: "beekeeper", WorkerURL: ws.URL})
	if err != nil {
		t.Fatal(err)
	}
	bs := startServer(t, b.Serve)
	for _, cfg := range []string{LogSync, LogAsync, LogNone} {
		t.Run(cfg, func(t *testing.T) {
			logf := filepath.Join(t.TempDir(), "manager.log")
			m, err := NewCompany(CompanyConfig{Role: "manager", WorkerURL: ws.URL, BeekeeperURL: bs.URL, Log: cfg, LogFile: logf, LineCost: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ms := startServer(t, m.Serve)
			code, h, _ := send(t, http.MethodPost, ms.URL+"/doorman/login", "application/x-www-form-urlencoded", strings.NewReader("username=jordan&password=pw"))
			if code != 200 || h.Get("Authorization") == "" {
				t.Fatalf("login: %d", code)
			}
			auth := []string{"Authorization", h.Get("Authorization")}
			want := map[string]string{"/manager/worker/fibonacci/term?n=10": `"term":55`,
				"/manager/beekeeper/drone/ancestors/10": `"ancestors":89`, "/manager/beekeeper/queen/ancestors/10": `"ancestors":144`}
			for u, body := range want {
				if r := get(t, ms.URL+u, auth...); r.status != 200 || !strings.Contains(r.body, body) {
					t.Errorf("%s: %d %s, want %s", u, r.status, r.body, body)
				}
			}
			if r := get(t, ms.URL+"/manager/worker/fibonacci/term?n=1"); r.status != http.StatusUnauthorized {
				t.Errorf("without a token: %d", r.status)
			}
			ms.stop() // flushes the asynchronous queue
			lines := readLines(t, logf)
			if n := map[string]int{LogSync: 3, LogAsync: 3, LogNone: 0}[cfg]; len(lines) != n {
				t.Errorf("log has %d lines, want %d", len(lines), n)
			}
		})
	}
	if _, err := NewCompany(CompanyConfig{Role: "manager", WorkerURL: ws.URL, BeekeeperURL: bs.URL, Log: "stdout"}); err == nil {
		t.Error("an unknown log configuration is accepted")
	}
}

// surveyData writes a small data set with plateau datagen in the shape of
// examples/school-data/school.yaml.
func surveyData(t *testing.T) (string, *datagen.Result) {
	t.Helper()
	spec, err := datagen.Parse("school.yaml", []byte(`seed: 7
entities:
  campaigns:
    count: 2
    fields:
      campaign_id: seq
      urn: {type: template, template: "urn:campaign:${campaign_id}"}
      name: {type: choice, values: [Media, Sleep]}
  teachers:
    count: 2
    fields:
      teacher_id: seq
      username: {type: template, template: "t${teacher_id}"}
      password: {type: pattern, pattern: "Pw-****"}
  classes:
    parent: teachers
    per_parent: 2
    fields:
      class_id: seq
      teacher_id: parent.teacher_id
      urn: {type: template, template: "urn:class:${class_id}"}
      campaign_id: {type: ref, entity: campaigns}
  students:
    parent: classes
    per_parent: 3
    fields:
      student_id: seq
      class_id: parent.class_id
      username: {type: template, template: "s${student_id}"}
      password: {type: pattern, pattern: "Pw-****"}
  responses:
    parent: students
    per_parent: 4
    format: ndjson
    fields:
      response_id: seq
      student_id: parent.student_id
      campaign_id: parent.parent.campaign_id
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := datagen.Generate(context.Background(), spec, datagen.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// csvField returns column col of the first data row of dir/name.
func csvField(t *testing.T, dir, name, col string) string {
	t.Helper()
	var v string
	if err := csvRows(dir, name, func(line int, r map[string]string) error {
		if line == 2 {
			v = r[col]
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// The survey service loads a datagen data set (every response with its
// prompts); uploads are multipart with a JPEG photo, and a wrong password,
// a photo that is no JPEG and a missing photo are refused; a teacher sees
// the campaigns of their classes and the students who answered.
func TestSurveyUploadAndBrowse(t *testing.T) {
	data, gen := surveyData(t)
	s, err := NewSurvey(context.Background(), SurveyConfig{DB: filepath.Join(t.TempDir(), "s.db"), DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	var n, p int
	if err := s.db.QueryRow(`SELECT COUNT(*), (SELECT COUNT(*) FROM prompt_response) FROM survey_response`).Scan(&n, &p); err != nil {
		t.Fatal(err)
	}
	for _, e := range gen.Entities {
		if e.Name == "responses" && (int64(n) != e.Rows || int64(p) != 10*e.Rows) {
			t.Fatalf("loaded %d responses and %d prompts; datagen wrote %d responses", n, p, e.Rows)
		}
	}
	srv := startServer(t, s.Serve)
	photo, err := SurveyPhoto(1, 5000)
	if err != nil {
		t.Fatal(err)
	}
	student, pw := csvField(t, data, "students.csv", "username"), csvField(t, data, "students.csv", "password")
	upload := func(pw string, img []byte) int {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		_ = w.WriteField("user", student)
		_ = w.WriteField("password", pw)
		_ = w.WriteField("surveys", `[{"survey_id":"daily"}]`)
		if img != nil {
			f, _ := w.CreateFormFile("images", "photo.jpg")
			_, _ = f.Write(img)
		}
		_ = w.Close()
		code, _, _ := send(t, http.MethodPost, srv.URL+"/app/survey/upload", w.FormDataContentType(), &body)
		return code
	}
	if c := upload(pw, photo); c != 200 {
		t.Errorf("upload: %d", c)
	}
	if c := upload("wrong", photo); c != http.StatusUnauthorized {
		t.Errorf("wrong password: %d", c)
	}
	if c := upload(pw, []byte("not a jpeg")); c != http.StatusBadRequest {
		t.Errorf("not a JPEG: %d", c)
	}
	if c := upload(pw, nil); c != http.StatusBadRequest {
		t.Errorf("no photo: %d", c)
	}
	teacher, tpw := csvField(t, data, "teachers.csv", "username"), csvField(t, data, "teachers.csv", "password")
	form := func(path, body string) (int, string) {
		code, _, b := send(t, http.MethodPost, srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader(body))
		return code, b
	}
	code, body := form("/app/user/auth_token", "user="+teacher+"&password="+tpw)
	var tok struct{ Token string }
	if err := json.Unmarshal([]byte(body), &tok); code != 200 || err != nil || tok.Token == "" {
		t.Fatalf("auth token: %d %s", code, body)
	}
	code, body = form("/app/campaign/read", "auth_token="+tok.Token+"&user="+teacher)
	var camps struct{ Data [][2]string }
	if err := json.Unmarshal([]byte(body), &camps); code != 200 || err != nil || len(camps.Data) == 0 {
		t.Fatalf("campaigns: %d %s", code, body)
	}
	code, body = form("/app/survey_response/read", "auth_token="+tok.Token+"&output=users&campaign_urn="+camps.Data[0][0])
	if code != 200 || !strings.Contains(body, `"s`) {
		t.Errorf("responses' users: %d %s", code, body)
	}
	if code, _ := form("/app/survey_response/read", "auth_token=forged&campaign_urn="+camps.Data[0][0]); code != http.StatusUnauthorized {
		t.Errorf("forged token: %d", code)
	}
}

// A call that takes longer than the proxy timeout is answered 504.
func TestSurveyProxyTimeout(t *testing.T) {
	data, _ := surveyData(t)
	s, err := NewSurvey(context.Background(), SurveyConfig{DB: filepath.Join(t.TempDir(), "s.db"), DataDir: data, Workers: 1, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, s.Serve)
	if r := get(t, srv.URL+"/app/user/whoami?user=x"); r.status != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", r.status)
	}
}

// The manager counts its slots on its metrics page: calls holding one,
// the slots, and calls waiting — what a study's capacity analysis judges
// the knee against. Three calls against two slots, held by a worker that
// answers only when told: two hold a slot, one waits; afterwards none.
// The scrapes stay out of the access log.
func TestCompanyManagerSlots(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		_, _ = io.WriteString(w, `{"term":1}`)
	}))
	defer worker.Close()
	access := filepath.Join(t.TempDir(), "access.log")
	m, err := NewCompany(CompanyConfig{Role: "manager", WorkerURL: worker.URL, BeekeeperURL: worker.URL, Workers: 2, Log: LogNone, AccessLog: access})
	if err != nil {
		t.Fatal(err)
	}
	ms := startServer(t, m.Serve)
	code, h, _ := send(t, http.MethodPost, ms.URL+"/doorman/login", "application/x-www-form-urlencoded", strings.NewReader("username=jordan&password=pw"))
	if code != 200 {
		t.Fatalf("login: %d", code)
	}
	metrics := func() map[string]string {
		r := get(t, ms.URL+CompanyMetricsPath)
		out := map[string]string{}
		for _, l := range strings.Split(r.body, "\n") {
			if k, v, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "#") {
				out[k] = v
			}
		}
		return out
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get(t, ms.URL+"/manager/worker/fibonacci/term?n=1", "Authorization", h.Get("Authorization"))
		}()
	}
	<-arrived
	<-arrived // two calls hold the two slots
	// The third call is counted as waiting once its request is read; the
	// manager's own count says when, not a clock.
	deadline := time.After(30 * time.Second)
	for got := metrics(); got["manager_queued"] != "1"; got = metrics() {
		select {
		case <-deadline:
			t.Fatalf("the third call never waited: %v", got)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := metrics(); got["manager_connections"] != "2" || got["manager_max_connections"] != "2" {
		t.Errorf("two calls in two slots: %v", got)
	}
	close(release)
	wg.Wait()
	if got := metrics(); got["manager_connections"] != "0" || got["manager_queued"] != "0" {
		t.Errorf("after the calls: %v", got)
	}
	ms.stop()
	lines := readLines(t, access)
	if len(lines) != 4 { // the login and the three calls
		t.Errorf("access log has %d lines, want 4 (no scrapes):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.Contains(l, CompanyMetricsPath) {
			t.Errorf("a scrape in the access log: %s", l)
		}
	}
}
