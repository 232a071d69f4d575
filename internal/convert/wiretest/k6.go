package wiretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/converttest"
	"github.com/plateau-perf/plateau/internal/convert/k6"
)

// K6Case is one differential run of a k6 script: the script under real k6
// and its conversion under plateau, each through a recorder. Both run the
// script's own load (options and scenarios): k6 scripts are short, and the
// load is part of what is converted; Rewrite shortens a long one for both.
type K6Case struct {
	Dir, Script string
	Rules       []Rule
	// Env is the script's environment (k6 -e, plateau ${env.…}); a host
	// the script reaches must not be loopback, or k6 bypasses the proxy.
	Env     map[string]string
	Rewrite []Replace
	Compare Options
	// Timeout bounds each tool's run (default 2 minutes).
	Timeout time.Duration
}

// K6Outcome is what a K6Case produced.
type K6Outcome struct {
	K6, Plateau []Request
	Plan        string
	Report      *convert.Report
	Result      Result
}

// K6 locates k6 ($K6, or k6 on PATH). Without it the test skips, and fails
// under CI=true (scripts/install-test-deps.sh installs it).
func K6(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("K6"); p != "" {
		return p
	}
	p, err := exec.LookPath("k6")
	if err != nil {
		missing(t, "k6 not installed; run scripts/install-test-deps.sh")
	}
	return p
}

// k6Patch wraps k6's http module so every request carries the user key
// header ("<scenario>/<VU id>", "setup/1" and "teardown/1"), as the
// JMeter side's Header Manager does; the script itself is unchanged.
const k6Patch = `import http from 'k6/http';
import exec from 'k6/execution';
export const phase = { v: '' };
function key() {
  if (exec.vu.idInTest === 0) return phase.v || 'setup';
  return exec.scenario.name + '/' + exec.vu.idInTest;
}
function withKey(params) {
  const p = Object.assign({}, params || {});
  p.headers = Object.assign({}, p.headers || {}, { '` + UserHeader + `': key() });
  return p;
}
const request = http.request.bind(http);
const batch = http.batch.bind(http);
http.request = function (method, url, body, params) { return request(method, url, body, withKey(params)); };
for (const m of ['get', 'head']) {
  http[m] = function (url, params) { return request(m.toUpperCase(), url, null, withKey(params)); };
}
for (const m of ['post', 'put', 'patch', 'del', 'options']) {
  http[m] = function (url, body, params) { return request(m === 'del' ? 'DELETE' : m.toUpperCase(), url, body, withKey(params)); };
}
http.batch = function (reqs) {
  const one = (r) => {
    if (typeof r === 'string') return ['GET', r, null, withKey()];
    if (Array.isArray(r)) return [r[0], r[1], r[2] === undefined ? null : r[2], withKey(r[3])];
    return Object.assign({}, r, { params: withKey(r.params) });
  };
  if (Array.isArray(reqs)) return batch(reqs.map(one));
  const out = {};
  for (const k of Object.keys(reqs)) out[k] = one(reqs[k]);
  return batch(out);
};
`

func k6Wrapper(script string, hasDefault bool) string {
	var b strings.Builder
	b.WriteString("import { phase } from './wiretest-patch.js';\n")
	fmt.Fprintf(&b, "import * as s from './%s';\n", script)
	fmt.Fprintf(&b, "export * from './%s';\n", script)
	if hasDefault {
		fmt.Fprintf(&b, "export { default } from './%s';\n", script)
	}
	b.WriteString("export const options = s.options;\n")
	b.WriteString("export function setup() { phase.v = 'setup/1'; return s.setup ? s.setup() : undefined; }\n")
	b.WriteString("export function teardown(d) { phase.v = 'teardown/1'; return s.teardown ? s.teardown(d) : undefined; }\n")
	return b.String()
}

// RunK6Case runs the case under k6 and plateau and compares the streams;
// every unexplained difference fails the test.
func RunK6Case(t testing.TB, c K6Case) *K6Outcome {
	t.Helper()
	bin := K6(t)
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Minute
	}
	o := &K6Outcome{}
	kdir := CopyDir(t, c.Dir)
	rewriteFile(t, filepath.Join(kdir, c.Script), c.Rewrite)
	krec := NewRecorder(t, c.Rules...)
	o.K6 = RunK6(t, bin, filepath.Join(kdir, c.Script), krec, c.Env, c.Timeout)

	pdir := CopyDir(t, c.Dir)
	src := filepath.Join(pdir, c.Script)
	rewriteFile(t, src, c.Rewrite)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k6.Parse(src, data)
	if err != nil {
		t.Fatal(err)
	}
	p, rep := k6.Convert(s, k6.Options{Source: src})
	o.Report = rep
	for name, b := range p.Files {
		if err := os.WriteFile(filepath.Join(pdir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{}
	for k, v := range c.Env {
		env[k] = v
	}
	for k, v := range rep.Secrets {
		env[k] = v
	}
	prec := NewRecorder(t, c.Rules...)
	for _, wl := range p.Workloads {
		key := wl.Name + "/${__user}"
		tag(wl.Setup, key)
		tag(wl.Scenario, key)
		tag(wl.Teardown, key)
	}
	tag(p.Setup, "setup/1")
	tag(p.Teardown, "teardown/1")
	pf, text := converttest.Write(t, pdir, p, rep)
	o.Plan = text
	converttest.Run(t, pf, env, c.Timeout, "http.proxy="+prec.URL)
	var dropped int
	o.Plateau, dropped = prec.Requests()
	if dropped > 0 {
		t.Fatalf("recorder dropped %d plateau requests (bound %d)", dropped, maxRecorded)
	}
	o.Result = judge(t, "k6", c.Script, o.K6, o.Plateau, c.Compare, o.Plan, 25)
	return o
}

func rewriteFile(t testing.TB, p string, rs []Replace) {
	t.Helper()
	if len(rs) == 0 {
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		b = r.Re.ReplaceAll(b, []byte(r.With))
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// RunK6 runs a script under k6 through the recorder (HTTP_PROXY; k6 never
// proxies loopback hosts, so the script's hosts must be names) with env
// as -e variables, and returns what the recorder saw. A run whose
// thresholds fail (exit 99) still counts: its traffic is what matters.
func RunK6(t testing.TB, bin, script string, rec *Recorder, env map[string]string, timeout time.Duration) []Request {
	t.Helper()
	dir := filepath.Dir(script)
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wiretest-patch.js"), []byte(k6Patch), 0o644); err != nil {
		t.Fatal(err)
	}
	hasDefault := bytes.Contains(src, []byte("export default"))
	wrap := filepath.Join(dir, "wiretest-run.js")
	if err := os.WriteFile(wrap, []byte(k6Wrapper(filepath.Base(script), hasDefault)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--quiet", "--no-usage-report", "--summary-mode=disabled", "--log-output=stderr"}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, wrap)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HTTP_PROXY="+rec.URL, "HTTPS_PROXY="+rec.URL, "NO_PROXY=", "K6_NO_USAGE_REPORT=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !(errors.As(err, &ee) && ee.ExitCode() == 99) {
			t.Fatalf("k6: %v\n%s", err, tail(out.String(), 4000))
		}
	}
	reqs, dropped := rec.Requests()
	if dropped > 0 {
		t.Fatalf("recorder dropped %d k6 requests (bound %d)", dropped, maxRecorded)
	}
	return reqs
}
