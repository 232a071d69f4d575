package plan

import (
	"os"
	"strings"
	"testing"
	"time"
)

const overrideBase = `name: ov
target: http://127.0.0.1:18080
http:
workloads:
  read:
    scenario:
      - request: {url: /a}
    load: {users: 10, ramp_up: 5s, duration: 30s}
`

func TestOverrides(t *testing.T) {
	t.Parallel()
	p, err := Parse("ov.yaml", []byte(overrideBase), "", Options{Overrides: []string{
		"workloads.read.load.users=20",
		"target=http://127.0.0.1:9",
		"http.timeout=2s",            // "http:" was null: becomes a mapping
		"http.headers.X-Run=nightly", // created two levels deep
		"sla=[error_rate < 1%]",      // a flow list
		"workloads.read.scenario.0.request.name=first",
		"workloads.read.scenario.1={think: 1s}", // append at the list's length
	}})
	if err != nil {
		t.Fatal(err)
	}
	l := p.Workloads[0].Load
	if l.Users != 20 || l.RampUp != 5*time.Second || l.Duration != 30*time.Second {
		t.Errorf("load: %+v", l)
	}
	if p.Target != "http://127.0.0.1:9" || p.HTTP.Timeout != 2*time.Second {
		t.Errorf("target %q timeout %v", p.Target, p.HTTP.Timeout)
	}
	if len(p.HTTP.Headers) != 1 || p.HTTP.Headers[0].Value.Raw != "nightly" {
		t.Errorf("headers: %+v", p.HTTP.Headers)
	}
	if len(p.SLA) != 1 || p.SLA[0].Expr != "error_rate < 1%" {
		t.Errorf("sla: %+v", p.SLA)
	}
	sc := p.Workloads[0].Scenario
	if len(sc) != 2 || sc[0].Request.Name != "first" || sc[1].Think == nil || sc[1].Think.Fixed != time.Second {
		t.Errorf("scenario: %+v", sc)
	}
	// Source is the tree as run: it loads again to the same plan.
	src := string(p.Source)
	for _, want := range []string{"users: 20", "target: http://127.0.0.1:9", "X-Run: nightly"} {
		if !strings.Contains(src, want) {
			t.Errorf("Source lacks %q:\n%s", want, src)
		}
	}
	again, err := Parse("again.yaml", p.Source, "", Options{})
	if err != nil {
		t.Fatalf("Source does not load: %v\n%s", err, src)
	}
	if again.Workloads[0].Load.Users != 20 || len(again.Workloads[0].Scenario) != 2 {
		t.Errorf("reloaded Source differs: %+v", again.Workloads[0])
	}
}

func TestOverrideWholeMapping(t *testing.T) {
	t.Parallel()
	p, err := Parse("ov.yaml", []byte(overrideBase), "", Options{Overrides: []string{"workloads.read.load={users: 5, duration: 10s}"}})
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Workloads[0].Load; l.Users != 5 || l.Duration != 10*time.Second || l.RampUp != 0 {
		t.Errorf("load: %+v", l)
	}
}

func TestOverrideShorthand(t *testing.T) {
	t.Parallel()
	p, err := Parse("ov.yaml", []byte(overrideBase), "", Options{Overrides: []string{"users=7", "duration=1m"}})
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Workloads[0].Load; l.Users != 7 || l.Duration != time.Minute {
		t.Errorf("load: %+v", l)
	}
	two := overrideBase + "  other:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\n"
	_, err = Parse("ov.yaml", []byte(two), "", Options{Overrides: []string{"users=7"}})
	if err == nil || !strings.Contains(err.Error(), "ov.yaml: --set users=7: the plan has 2 workloads; name one: workloads.NAME.load.users") {
		t.Errorf("err = %v", err)
	}
}

func TestOverrideErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ set, want string }{
		{"users", "ov.yaml: --set users: expected key=value"},
		{"=3", "ov.yaml: --set =3: expected key=value"},
		{"workloads..load=1", `--set workloads..load=1: empty element in path "workloads..load"`},
		{"name.first=x", `--set name.first=x: name is "ov", not a mapping; cannot set first inside it`},
		{"workloads.read.scenario.5.request.url=/x", `--set workloads.read.scenario.5.request.url=/x: workloads.read.scenario is a list of 1 items; "5" is not an index in it`},
		{"workloads.read.load.users=[1", "--set workloads.read.load.users=[1: value is not valid YAML"},
		// A bad value is reported where it lands, naming the override.
		{"workloads.read.load.users=ten", `ov.yaml:8:19: users: expected a whole number, got "ten" (from --set workloads.read.load.users=ten)`},
		{"workloads.read.load.usres=5", `ov.yaml:8:11: unknown key "usres" in load (did you mean "users"?) (from --set workloads.read.load.usres=5)`},
	}
	for _, c := range cases {
		t.Run(c.set, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("ov.yaml", []byte(overrideBase), "", Options{Overrides: []string{c.set}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	src := `name: env
target: ${env.T}
vars: {who: "${env.WHO:-nobody}", lit: "$${env.KEEP}"}
workloads:
  w:
    scenario:
      - request:
          url: /x?k=${env.KEY}&v=${who}
          json: {k: "${env.QUOTE}"}
    load: {users: "${env.USERS}", duration: 1s}
`
	env := map[string]string{"T": "http://127.0.0.1:9", "KEY": "a b", "USERS": "3", "QUOTE": `say "x"`}
	p, err := Parse("env.yaml", []byte(src), "", Options{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Workloads[0].Scenario[0].Request
	if p.Target != env["T"] || p.Vars["who"] != "nobody" || p.Vars["lit"] != "${env.KEEP}" || p.Workloads[0].Load.Users != 3 {
		t.Errorf("target %q vars %v users %d", p.Target, p.Vars, p.Workloads[0].Load.Users)
	}
	if got := string(r.URL.Append(nil, func(n string) string { return p.Vars[n] })); got != "/x?k=a b&v=nobody" {
		t.Errorf("url = %q", got)
	}
	if got := string(r.JSON.Append(nil, nil)); got != `{"k":"say \"x\""}` {
		t.Errorf("json = %s", got)
	}
	// Source keeps ${env.*} unsubstituted, so secrets from the environment
	// never reach the run directory.
	if !strings.Contains(string(p.Source), "${env.KEY}") || strings.Contains(string(p.Source), "a b") {
		t.Errorf("Source has env substituted:\n%s", p.Source)
	}
	// Without Env, the loader does not fall back to the process environment.
	if _, ok := os.LookupEnv("PATH"); ok {
		noEnv := strings.Replace(src, "${env.T}", "http://127.0.0.1:9/${env.PATH}", 1)
		if _, err := Parse("env.yaml", []byte(noEnv), "", Options{}); err == nil || !strings.Contains(err.Error(), "env.yaml:2:28: environment variable PATH is not set") {
			t.Errorf("err = %v", err)
		}
	}
}

func TestRedactedSource(t *testing.T) {
	t.Parallel()
	src := `name: secrets
target: http://user:hunter2@127.0.0.1:9
secrets: [X-Api-Key, password]
vars: {password: pw-123, user: alice, token: &tok "Bearer abc"}
http:
  headers: {Authorization: *tok, X-Api-Key: key-456, Accept: text/plain}
workloads:
  w:
    scenario:
      - request:
          url: /login
          headers: {Cookie: "sid=789", X-Trace: "t-1"}
          form: {user: "${user}", password: "${password}"}
    load: {users: 1, iterations: 1}
monitor:
  targets:
    - postgres: {dsn: "host=db user=perf password=pg-secret dbname=app"}
    - prometheus: {url: "http://u:prom-secret@127.0.0.1:9100/metrics"}
history:
  db: postgres://perf:history-secret@127.0.0.1:5432/history
  tags: {release: ramsons, api_token: tag-secret}
`
	p, err := Parse("s.yaml", []byte(src), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	red := string(p.RedactedSource())
	for _, secret := range []string{"hunter2", "pw-123", "Bearer abc", "key-456", "sid=789", "pg-secret", "prom-secret", "history-secret", "tag-secret"} {
		if strings.Contains(red, secret) {
			t.Errorf("redacted source still holds %q:\n%s", secret, red)
		}
	}
	for _, kept := range []string{"alice", "text/plain", "t-1", "${password}", "user=perf", "127.0.0.1:9100/metrics", "release: ramsons", "127.0.0.1:5432/history"} {
		if !strings.Contains(red, kept) {
			t.Errorf("redacted source lost %q:\n%s", kept, red)
		}
	}
	if !strings.Contains(string(p.Source), "pw-123") {
		t.Errorf("Source itself must stay unredacted")
	}
	// Redacted text is still a plan that loads.
	if _, err := Parse("r.yaml", []byte(red), "", Options{}); err != nil {
		t.Errorf("redacted source does not load: %v\n%s", err, red)
	}
	// Nothing secret: the source comes back byte for byte.
	plain, _ := os.ReadFile("testdata/loads.good.yaml")
	lp, err := Parse("testdata/loads.good.yaml", plain, "testdata", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(lp.RedactedSource()) != string(plain) {
		t.Errorf("source without secrets was rewritten")
	}
}
