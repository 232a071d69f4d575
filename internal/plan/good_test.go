package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testEnv is the environment the fixtures are loaded with.
func testEnv(name string) (string, bool) {
	v, ok := map[string]string{"REPORT_TOKEN": "tok-from-env", "TARGET": "http://127.0.0.1:18080"}[name]
	return v, ok
}

func mustLoad(t *testing.T, path string, opt Options) *Plan {
	t.Helper()
	if opt.Env == nil {
		opt.Env = testEnv
	}
	p, err := LoadFile(path, opt)
	if err != nil {
		t.Fatalf("LoadFile(%s):\n%v", path, err)
	}
	return p
}

// TestGoodFixtures loads every *.good.yaml; each must load without error and
// keep its source.
func TestGoodFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.good.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("good fixtures: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			p := mustLoad(t, f, Options{})
			src, _ := os.ReadFile(f)
			if string(p.Source) != string(src) {
				t.Errorf("Source differs from the file although no override was given")
			}
			if p.File != f || p.Dir != "testdata" {
				t.Errorf("File, Dir = %q, %q", p.File, p.Dir)
			}
		})
	}
}

func TestIssueExample(t *testing.T) {
	t.Parallel()
	var slas []string
	p := mustLoad(t, "testdata/issue-example.good.yaml", Options{CheckSLA: func(s string) error {
		slas = append(slas, s)
		return nil
	}})
	if p.Name != "allergy-read" || p.Target != "http://127.0.0.1:18080" {
		t.Errorf("name, target = %q, %q", p.Name, p.Target)
	}
	if p.HTTP.Timeout != 5*time.Second || p.HTTP.ConnectTimeout != 5*time.Second || p.HTTP.Redirects != 10 ||
		p.HTTP.MaxBody != 1<<20 || !*p.HTTP.KeepAlive || !*p.HTTP.Cookies || p.HTTP.Connections != ConnPerUser {
		t.Errorf("http defaults: %+v", p.HTTP)
	}
	f := p.Data["patients"]
	if f == nil || f.Order != OrderUnique || f.OnExhausted != ExhaustedStop || !reflect.DeepEqual(f.Columns, []string{"cpr"}) {
		t.Fatalf("feeder: %+v", f)
	}
	csv, _ := os.ReadFile("testdata/patients.csv")
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(f.Rows) != len(lines)-1 || f.Rows[0][0] != lines[1] || f.Rows[len(f.Rows)-1][0] != lines[len(lines)-1] {
		t.Errorf("rows: %d, want %d; first %v", len(f.Rows), len(lines)-1, f.Rows[0])
	}
	if f.Pos != (Pos{6, 3}) {
		t.Errorf("feeder pos %v", f.Pos)
	}
	if len(p.Workloads) != 1 {
		t.Fatalf("workloads: %d", len(p.Workloads))
	}
	w := p.Workloads[0]
	if w.Name != "read" || w.Pos != (Pos{11, 3}) || len(w.Setup) != 1 || len(w.Scenario) != 2 {
		t.Fatalf("workload: %+v", w)
	}
	login := w.Setup[0].Request
	if login.Name != "login" || login.Method != "POST" || login.URL.Raw != "/token" || !login.URL.IsConst() {
		t.Errorf("login: %+v", login)
	}
	if got := string(login.JSON.Append(nil, nil)); got != `{"user":"perf"}` {
		t.Errorf("login json = %s", got)
	}
	if e := login.Extract["token"]; e == nil || e.JSON != "$.access_token" {
		t.Errorf("extract: %+v", login.Extract)
	}
	list := w.Scenario[0].Request
	vars := map[string]string{"patients.cpr": "0101", "token": "abc"}
	if got := string(list.URL.Append(nil, func(n string) string { return vars[n] })); got != "/allergies?cpr=0101" {
		t.Errorf("url renders %q", got)
	}
	if len(list.Headers) != 1 || list.Headers[0].Name != "Authorization" ||
		string(list.Headers[0].Value.Append(nil, func(n string) string { return vars[n] })) != "Bearer abc" {
		t.Errorf("headers: %+v", list.Headers)
	}
	if !reflect.DeepEqual(list.Checks[0].Status, []int{200}) || list.Method != "GET" || list.Name != "list allergies" {
		t.Errorf("request: %+v", list)
	}
	if th := w.Scenario[1].Think; th == nil || th.Fixed != time.Second || th.IsUniform() {
		t.Errorf("think: %+v", th)
	}
	if l := w.Load; l.Users != 10 || l.RampUp != 5*time.Second || l.Duration != 30*time.Second || l.MaxUsers != 0 {
		t.Errorf("load: %+v", l)
	}
	want := []string{"avg(response_time) < 200ms", "error_rate < 1%"}
	if !reflect.DeepEqual(slas, want) || len(p.SLA) != 2 || p.SLA[0].Expr != want[0] || p.SLA[1].Pos != (Pos{30, 5}) {
		t.Errorf("sla: %+v (checked %q)", p.SLA, slas)
	}
}

func TestGoodFeatures(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, "testdata/features.good.yaml", Options{})
	if p.Target != "https://127.0.0.1:8443/api" {
		t.Errorf("target %q: trailing / not trimmed", p.Target)
	}
	h := p.HTTP
	if h.Timeout != 10*time.Second || h.ConnectTimeout != 2*time.Second || !h.Insecure || h.Redirects != 0 || !h.Compression ||
		h.Connections != ConnShared || *h.KeepAlive || *h.Cookies || h.MaxBody != 64<<10 || len(h.Headers) != 2 {
		t.Errorf("http: %+v", h)
	}
	if p.Vars["tenant"] != "acme" || !reflect.DeepEqual(p.Secrets, []string{"X-Tenant-Key", "api_key"}) {
		t.Errorf("vars %v secrets %v", p.Vars, p.Secrets)
	}
	users, items := p.Data["users"], p.Data["items"]
	if users.Delimiter != "\t" || users.Order != OrderRandom || users.OnExhausted != ExhaustedRecycle ||
		!reflect.DeepEqual(users.Columns, []string{"login", "password"}) || len(users.Rows) != 2 || users.Rows[1][1] != "hunter2" {
		t.Errorf("users feeder: %+v", users)
	}
	if items.CSV != "items.csv" || items.Order != OrderSequential || items.Rows[1][1] != "1,5" {
		t.Errorf("items feeder: %+v", items)
	}
	if len(p.Workloads) != 2 || p.Workloads[0].Name != "browse" || p.Workloads[1].Name != "report" {
		t.Fatalf("workload order: %v", p.Workloads)
	}
	b := p.Workloads[0]
	login := b.Setup[0].Request
	if login.Method != "POST" || len(login.Form) != 2 || login.Form[1].Name != "password" || login.Form[1].Value.Parts[0].Var != "users.password" {
		t.Errorf("login: %+v", login)
	}
	if e := login.Extract["session"]; e.Header != "X-Session" {
		t.Errorf("header extract: %+v", e)
	}
	if e := login.Extract["csrf"]; e.Regex != `name="csrf" value="([^"]+)"` || e.Default == nil || *e.Default != "none" {
		t.Errorf("regex extract: %+v", e)
	}

	items1 := b.Scenario[0].Request
	if items1.Name != "GET /items" {
		t.Errorf("default name %q", items1.Name)
	}
	if len(items1.Headers) != 2 || items1.Headers[0].Name != "X-Session" || items1.Headers[1].Name != "Accept" {
		t.Errorf("merged headers: %+v", items1.Headers)
	}
	c := items1.Checks[0]
	wantJSON := []JSONCheck{{"$.page", "1"}, {"$.items[0].name", "widget"}}
	if !reflect.DeepEqual(c.Status, []int{200, 304}) || c.Contains != `"items"` || c.NotContains != "error" ||
		!reflect.DeepEqual(c.JSON, wantJSON) || c.MaxDuration != 800*time.Millisecond {
		t.Errorf("check: %+v", c)
	}
	if th := b.Scenario[1].Think; !th.IsUniform() || th.Min != 500*time.Millisecond || th.Max != 1500*time.Millisecond {
		t.Errorf("uniform think: %+v", th)
	}
	tx := b.Scenario[2].Transaction
	if tx == nil || tx.Name != "buy" || len(tx.Steps) != 3 {
		t.Fatalf("transaction: %+v", tx)
	}
	add := tx.Steps[0].Request
	vals := map[string]string{"item": `7"x`, "users.login": "a\\b", "tenant": "acme"}
	got := string(add.JSON.Append(nil, func(n string) string { return vals[n] }))
	want := `{"item":"7\"x","qty":2,"gift":false,"note":"say \"hi\" a\\b","tags":["a","acme"],"price":9.5,"coupon":null}`
	if got != want {
		t.Errorf("json body\n got %s\nwant %s", got, want)
	}
	for _, part := range add.JSON.Parts {
		if part.Var != "" && !part.JSONEscape {
			t.Errorf("json var part %q not marked JSONEscape", part.Var)
		}
	}
	if add.Timeout != 3*time.Second || add.Method != "PUT" {
		t.Errorf("add: %+v", add)
	}
	if th := tx.Steps[1].Think; th.Min != 100*time.Millisecond || th.Max != 200*time.Millisecond {
		t.Errorf("mapping think: %+v", th)
	}
	pay := tx.Steps[2].Request
	body := string(pay.Body.Append(nil, func(n string) string { return "<" + n + ">" }))
	if body != "user=<__user>&iter=<__iteration>&ts=<__timestamp_ms>&lit=${kept}" {
		t.Errorf("body renders %q", body)
	}
	if pay.URL.Raw != "https://127.0.0.1:8443/pay" {
		t.Errorf("absolute url %q", pay.URL.Raw)
	}
	loop := b.Scenario[3].Loop
	if loop == nil || loop.Count != 3 || len(loop.Steps) != 2 || loop.Steps[0].Request.Name != "GET /ping" {
		t.Errorf("loop: %+v", loop)
	}
	if td := b.Teardown; len(td) != 1 || td[0].Request.Name != "DELETE /session/${session}" {
		t.Errorf("teardown: %+v", td)
	}
	if b.Load.StartAfter != 5*time.Second || b.Load.Duration != time.Minute {
		t.Errorf("load: %+v", b.Load)
	}
	rep := p.Workloads[1].Scenario[0].Request
	if v := rep.Headers[0].Value; !v.IsConst() || v.Parts[0].Lit != "Bearer tok-from-env" || v.Raw != "Bearer ${env.REPORT_TOKEN}" {
		t.Errorf("env header: %+v", v)
	}
	if v := rep.Headers[1].Value; v.Parts[0].Lit != "fallback" {
		t.Errorf("env default: %+v", v)
	}
	if l := p.Workloads[1].Load; l.Users != 2 || l.Iterations != 3 {
		t.Errorf("iterations load: %+v", l)
	}
}

func TestGoodLoads(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, "testdata/loads.good.yaml", Options{})
	w := map[string]Load{}
	for _, wl := range p.Workloads {
		w[wl.Name] = wl.Load
	}
	if l := w["closed"]; l.Users != 10 || l.RampUp != 5*time.Second || l.Duration != 90*time.Minute {
		t.Errorf("closed: %+v", l)
	}
	if l := w["open"]; l.Rate != 200 || l.Duration != 30*time.Second || l.MaxUsers != 500 {
		t.Errorf("open: %+v", l)
	}
	if l := w["open_per_minute"]; l.Rate.PerSecond() != 30.0/60 || l.MaxUsers != DefaultMaxUsers || l.Duration != 250*time.Millisecond {
		t.Errorf("open per minute: %+v", l)
	}
	st := w["ramping"].Stages
	if len(st) != 4 || st[0].Rate != 10 || st[1].Duration != 20*time.Second || !st[2].Hold || st[1].Hold || st[3].Rate != 10 ||
		w["ramping"].MaxUsers != DefaultMaxUsers {
		t.Errorf("stages: %+v", st)
	}
	if l := w["pacing"]; l.Users != 10 || l.Pace != time.Second || l.Duration != 2*time.Minute {
		t.Errorf("pacing: %+v", l)
	}
	s := w["steps"]
	if len(s.Steps) != 3 || s.Steps[0].Name != "step 1" || s.Steps[1].Name != "ten" || s.Steps[2].Name != "step 3" ||
		s.Steps[1].RampUp != 30*time.Second || s.Steps[2].Users != 14 || s.MaxUsers != 0 {
		t.Errorf("steps: %+v", s.Steps)
	}
	if s.StopWhen == nil || s.StopWhen.Metric != "throughput_gain" || s.StopWhen.Threshold != 5.0/100 || s.StopWhen.Text != "throughput_gain < 5%" {
		t.Errorf("stop rule: %+v", s.StopWhen)
	}
	if r := w["rate_steps"]; r.Steps[1].Rate != 200 || r.MaxUsers != DefaultMaxUsers {
		t.Errorf("rate steps: %+v", r)
	}
}

func TestGoodMonitor(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, "testdata/monitor.good.yaml", Options{})
	m := p.Monitor
	if m.Interval != 2*time.Second || len(m.Targets) != 7 {
		t.Fatalf("monitor: %+v", m)
	}
	var got []string
	for _, tg := range m.Targets {
		got = append(got, tg.Kind+":"+tg.Name)
	}
	want := []string{"host:host", "process:java", "process:db", "jvm:app", "cgroup:app.service", "postgres:postgres", "prometheus:127.0.0.1:9100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets\n got %v\nwant %v", got, want)
	}
	if tg := m.Targets[1]; !tg.Children || tg.Match != "java" {
		t.Errorf("process: %+v", tg)
	}
	if tg := m.Targets[3]; tg.Interval != 5*time.Second || tg.PidFile != "/run/app.pid" {
		t.Errorf("jvm: %+v", tg)
	}
	if tg := m.Targets[6]; !reflect.DeepEqual(tg.Series, []string{"node_load1", "process_cpu_seconds_total"}) {
		t.Errorf("prometheus: %+v", tg)
	}
	if m.Targets[0].Pos.Line == 0 {
		t.Errorf("target without position")
	}
}

func TestLoadFileMissing(t *testing.T) {
	t.Parallel()
	_, err := LoadFile("testdata/nope.yaml", Options{})
	var es Errors
	if !errors.As(err, &es) || len(es) != 1 || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "testdata/nope.yaml: cannot read plan") {
		t.Fatalf("err = %v", err)
	}
}

// A websocket step: its labels and those of the unnamed sends and
// receives inside are named from its URL, a request's own tls is kept,
// and the receives' checks are counted under their labels.
func TestWebSocketFixture(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, "testdata/websocket.good.yaml", Options{})
	sc := p.Workloads[0].Scenario
	if sc[0].Request.TLS == nil || sc[0].Request.TLS.ServerName != "chat.local" || sc[0].Request.HTTPVersion != HTTP2 {
		t.Fatalf("request tls/http_version not kept: %+v", sc[0].Request)
	}
	w := sc[1].WebSocket
	if w == nil || w.Name != "WS /chat" || w.Timeout != 3*time.Second || len(w.Steps) != 5 {
		t.Fatalf("websocket: %+v", w)
	}
	if got := w.Steps[1].Loop.Steps[0].Send; got.Name != "WS /chat send" || got.JSON == nil || got.Reply == nil {
		t.Fatalf("send in loop: %+v", got)
	}
	wantLabels := []string{"login", "WS /chat connect", "WS /chat", "WS /chat receive", "WS /chat send", "blob", "pushed"}
	if got := p.Labels(); !reflect.DeepEqual(got, wantLabels) {
		t.Errorf("labels %q, want %q", got, wantLabels)
	}
	wantChecks := []string{"WS /chat receive", "WS /chat send", "pushed #1", "pushed #2"}
	if got := p.CheckNames(); !reflect.DeepEqual(got, wantChecks) {
		t.Errorf("check names %q, want %q", got, wantChecks)
	}
}

// TestMonitorRole: a target states what it is to the test (role:); an
// unknown role is an error naming the roles.
func TestMonitorRole(t *testing.T) {
	t.Parallel()
	src := "name: r\ntarget: http://127.0.0.1:1\nworkloads:\n  w:\n    scenario: [{request: {url: /}}]\n    load: {users: 1, iterations: 1}\nmonitor:\n  targets:\n    - host: {role: generator}\n    - process: {name: db, match: postgres, role: database}\n    - prometheus: {name: q, url: 'http://127.0.0.1:9100/metrics', role: sut}\n"
	p, err := Parse("r.yaml", []byte(src), ".", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range p.Monitor.Targets {
		got = append(got, tg.Name+"="+tg.Role)
	}
	if strings.Join(got, " ") != "host=generator db=database q=sut" {
		t.Errorf("roles %v", got)
	}
	_, err = Parse("r.yaml", []byte(strings.Replace(src, "role: database", "role: backend", 1)), ".", Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown role "backend"`) || !strings.Contains(err.Error(), "system_under_test") {
		t.Errorf("unknown role: %v", err)
	}
}

// A load's search: block: every key read, defaults for the rest, and no
// duration needed (each probe has its own).
func TestSearchBlock(t *testing.T) {
	p := mustLoad(t, "testdata/search.good.yaml", Options{})
	s := p.Workloads[0].Load.Search
	want := LoadSearch{Max: 2000, Resolution: "20/s", Warmup: 2 * time.Second, Probe: 10 * time.Second, Cooldown: time.Second,
		MaxProbes: 12, MaxTime: 10 * time.Minute, MinSamples: 500, MaxErrorPct: 5, FailBelow: 400, Pos: s.Pos}
	if s == nil || *s != want {
		t.Fatalf("search %+v, want %+v", s, want)
	}
	p = mustLoad(t, "testdata/search-closed.good.yaml", Options{})
	s = p.Workloads[0].Load.Search
	d := DefaultLoadSearch()
	if s == nil || s.Start != 5 || s.Max != 500 || s.Resolution != "2users" || s.Warmup != d.Warmup || s.Probe != d.Probe ||
		s.MaxProbes != d.MaxProbes || s.MaxErrorPct != d.MaxErrorPct {
		t.Fatalf("search %+v: want start 5, max 500, 2users and the defaults %+v", s, d)
	}
	if p.Workloads[0].Load.Duration != time.Minute {
		t.Errorf("duration %v", p.Workloads[0].Load.Duration)
	}
	// --set reaches into it.
	p = mustLoad(t, "testdata/search-closed.good.yaml", Options{Overrides: []string{"workloads.shop.load.search.max=40"}})
	if s := p.Workloads[0].Load.Search; s == nil || s.Max != 40 || s.Start != 5 {
		t.Errorf("after --set: %+v", s)
	}
	// A pacing load takes a search over its users (each probe keeps the
	// pace), with a users resolution and no duration.
	p = mustLoad(t, "testdata/search-closed.good.yaml", Options{Overrides: []string{"workloads.shop.load={users: 10, pace: 2s, search: {resolution: 2users, max: 80}}"}})
	if l := p.Workloads[0].Load; l.Search == nil || l.Pace != 2*time.Second || l.Search.Max != 80 || l.Search.Resolution != "2users" {
		t.Errorf("pacing with search: %+v", l)
	}
}
