package k6

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

func convertSrc(t *testing.T, name, src string) (*convert.Plan, *convert.Report, string, string) {
	t.Helper()
	s, err := Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(s, Options{Source: name})
	pb, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var rb bytes.Buffer
	if _, err := rep.WriteTo(&rb); err != nil {
		t.Fatal(err)
	}
	if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
		t.Fatalf("converted plan does not load: %v\n%s", err, pb)
	}
	return p, rep, string(pb), rb.String()
}

// Constructs outside the subset are named with file:line:col in the report
// and left as a comment where they were; the plan still loads.
func TestNotConvertedNamedWithPosition(t *testing.T) {
	src := `import http from 'k6/http';
import ws from 'k6/ws';
export default function () {
  http.get('http://api.test/a');
  let n = 0;
  while (n < 3) { http.get('http://api.test/loop'); n++; }
  ws.connect('ws://api.test/socket', {}, function (s) {});
  sleep(1);
}
`
	p, rep, plan, md := convertSrc(t, "s.js", src)
	for _, want := range []string{"s.js:6:3", "s.js:7:3"} {
		found := false
		for _, it := range rep.Items {
			if strings.HasPrefix(it.Path, want) && it.Status == convert.NotConverted {
				found = true
			}
		}
		if !found {
			t.Errorf("no not-converted item at %s:\n%s", want, md)
		}
	}
	if !strings.Contains(plan, "# s.js:6:3: not converted: while") {
		t.Errorf("the while loop is not left as a comment where it was:\n%s", plan)
	}
	// sleep without its import is not the k6 sleep: named, not dropped.
	if !strings.Contains(md, "s.js:8:3") {
		t.Errorf("sleep() without an import is not named:\n%s", md)
	}
	if len(p.Workloads) != 1 || p.Workloads[0].Load.Users != "1" || p.Workloads[0].Load.Iterations != "1" {
		t.Errorf("no options: k6 runs 1 user, 1 iteration; got %+v", p.Workloads[0].Load)
	}
}

func TestParseErrorNamesPosition(t *testing.T) {
	_, err := Parse("bad.js", []byte("import http from 'k6/http';\nexport default function () {\n  http.get(;\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.js:3:") {
		t.Fatalf("error %v, want bad.js:3:…", err)
	}
}

// Options: each executor's load, and thresholds as requirements.
func TestOptionsAndThresholds(t *testing.T) {
	src := `import http from 'k6/http';
export const options = {
  scenarios: {
    a: { executor: 'constant-vus', vus: __ENV.VUS || 7, duration: '1m' },
    b: { executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1m', preAllocatedVUs: 5, maxVUs: 50,
         stages: [{ target: 60, duration: '30s' }, { target: 0, duration: '10s' }], startTime: '5s', gracefulStop: '3s' },
    c: { executor: 'shared-iterations', vus: 4, iterations: 10 },
    d: { executor: 'per-vu-iterations', vus: 2, iterations: 3 },
  },
  thresholds: {
    'http_req_duration{name:login}': ['p(99.9)<2000', 'med<300'],
    http_req_failed: [{ threshold: 'rate<0.02', abortOnFail: true, delayAbortEval: '30s' }],
    http_reqs: ['rate>100', 'count>10'],
    my_trend: ['avg<5'],
  },
};
export default function () { http.get('http://api.test/x'); }
`
	p, _, plan, md := convertSrc(t, "o.js", src)
	for _, want := range []string{
		"users: ${env.VUS:-7}", "duration: 1m",
		"- {rate: 60/1m, duration: 30s}", "max_users: 50", "start_after: 5s", "graceful_stop: 3s",
		"users: 4\n      iterations: 3", "users: 2\n      iterations: 3",
		"{expr: error_rate < 2%, abort_on_fail: true, grace: 30s}", "throughput > 100/s",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	var exprs []string
	for _, r := range p.SLA {
		exprs = append(exprs, r.Expr)
	}
	if got := strings.Join(exprs, "\n"); !strings.Contains(got, `p(99.9)(response_time{label="login"}) < 2000ms`) || !strings.Contains(got, `median(response_time{label="login"}) < 300ms`) {
		t.Errorf("requirements:\n%s", got)
	}
	if len(p.SLA) != 4 {
		t.Errorf("%d requirements, want 4", len(p.SLA))
	}
	for _, want := range []string{"count>10", "my_trend", "k6 shares 10 iterations among 4 users"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// Secrets in headers, bodies and setup data never reach the plan or the
// report; the plan reads them from the environment.
func TestSecretsNeverWritten(t *testing.T) {
	src := `import http from 'k6/http';
export default function () {
  http.post('http://api.test/login', JSON.stringify({ username: 'u', password: 's3cr3t-Passw0rd' }),
    { headers: { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.abc.def', 'X-Api-Key': 'key-0123456789abcdef' } });
  http.get('http://api.test/x?api_key=qk-0123456789abcdef');
}
`
	_, rep, plan, md := convertSrc(t, "sec.js", src)
	for _, secret := range []string{"s3cr3t-Passw0rd", "eyJhbGciOiJIUzI1NiJ9.abc.def", "key-0123456789abcdef", "qk-0123456789abcdef"} {
		if strings.Contains(plan, secret) || strings.Contains(md, secret) {
			t.Errorf("%q written:\nplan:\n%s\nreport:\n%s", secret, plan, md)
		}
	}
	if len(rep.Env) < 4 {
		t.Errorf("report names %d environment variables, want 4: %+v", len(rep.Env), rep.Env)
	}
}

// A CSV read with papaparse (header: true) is a feeder with its header row;
// data[__VU - 1] is one row per user.
func TestPapaparseFeeder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.csv"), []byte("login,pass\nann,x\nbob,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `import http from 'k6/http';
import papaparse from 'https://jslib.k6.io/papaparse/5.1.1/index.js';
import { SharedArray } from 'k6/data';
const rows = new SharedArray('creds', () => papaparse.parse(open('./users.csv'), { header: true }).data);
export default function () {
  const u = rows[__VU - 1];
  http.post('http://api.test/login', { login: u.login, pass: u.pass });
}
`
	name := filepath.Join(dir, "p.js")
	s, err := Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Convert(s, Options{Source: name})
	if len(p.Data) != 1 || p.Data[0].CSV != "./users.csv" || p.Data[0].Order != "per_user" {
		t.Fatalf("data %+v", p.Data)
	}
	r := p.Workloads[0].Scenario[0].Request
	if r == nil || len(r.Form) != 2 || r.Form[0].Value != "${creds.login}" {
		t.Fatalf("request %+v", r)
	}
}

// Module-level names: the default exported under another name, a helper
// function returning a request's response, and a response value sent on.
func TestHelpersAndCorrelation(t *testing.T) {
	src := `import http from 'k6/http';
import { check } from 'k6';
const BASE = 'http://api.test';
function login(user) {
  const r = http.post(BASE + '/login', JSON.stringify({ user: user }));
  check(r, { ok: (x) => x.status === 200, 'has token': (x) => x.json('auth.token') !== undefined });
  return r.json('auth.token');
}
function run() {
  const token = login('ann');
  http.get(` + "`${BASE}/me`" + `, { headers: { 'X-Token': token } });
}
export { run as default };
`
	p, _, plan, _ := convertSrc(t, "h.js", src)
	steps := p.Workloads[0].Scenario
	if len(steps) != 2 || steps[0].Request == nil || steps[1].Request == nil {
		t.Fatalf("steps:\n%s", plan)
	}
	if x := steps[0].Request.Extract; len(x) != 1 || x[0].JSON != "$.auth.token" {
		t.Errorf("extract %+v", x)
	}
	if steps[1].Request.Headers[0].Value != "${"+steps[0].Request.Extract[0].Var+"}" {
		t.Errorf("the token is not sent on:\n%s", plan)
	}
	if !strings.Contains(plan, `body: "{\"user\":\"ann\"}"`) || !strings.Contains(plan, "json_exists: [$.auth.token]") {
		t.Errorf("plan:\n%s", plan)
	}
}

// options.iterations with a duration is k6's shared-iterations (the
// duration its limit), not a constant load.
func TestIterationsWithDuration(t *testing.T) {
	p, _, _, md := convertSrc(t, "i.js", `import http from 'k6/http';
export const options = { vus: 2, iterations: 6, duration: '30s' };
export default function () { http.get('http://api.test/x'); }
`)
	l := p.Workloads[0].Load
	if l.Users != "2" || l.Iterations != "3" || l.Duration != "" {
		t.Errorf("load %+v, want 2 users × 3 iterations", l)
	}
	if !strings.Contains(md, "k6's limit on the shared iterations") {
		t.Errorf("report does not say the duration is a limit:\n%s", md)
	}
}
