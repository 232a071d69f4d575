package wiretest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/converttest"
	"github.com/plateau-perf/plateau/internal/convert/postman"
)

// PostmanCase is one differential run of a Postman collection: the
// collection under newman (Postman's own runner) and its conversion under
// plateau, each through a recorder, once, as the Postman runner does.
type PostmanCase struct {
	// Dir holds the collection and the files named below (paths in it);
	// Environment and Globals may be empty.
	Dir, Collection, Environment, Globals string
	Rules                                 []Rule
	// Env is plateau's environment: the secrets the converted plan reads
	// from it (a password the globals file holds).
	Env     map[string]string
	Compare Options
	// Vars are variables given on the command line to both tools: newman
	// --env-var name=value, plateau the environment variable the converted
	// plan reads for a variable no file defines (NAME upper-cased).
	Vars map[string]string
	// Rewrite edits the collection and the environment file before both
	// runs (the same files for both), e.g. https → http: the recorder does
	// not intercept TLS.
	Rewrite []Replace
	// WorkingDir is where form-data and file bodies' relative paths are
	// found (a path in Dir; default: the collection's folder): newman's
	// --working-dir and the converter's Options.WorkingDir.
	WorkingDir string
}

// workDir is the case's working directory (absolute once Dir is).
func (c PostmanCase) workDir() string {
	if c.WorkingDir != "" {
		return filepath.Join(c.Dir, c.WorkingDir)
	}
	return filepath.Dir(filepath.Join(c.Dir, c.Collection))
}

// PostmanOutcome is what a PostmanCase produced.
type PostmanOutcome struct {
	Newman, Plateau []Request
	Plan            string
	Report          *convert.Report
	Result          Result
}

// postmanUser is the user key of the one run both sides make.
const postmanUser = "collection/1"

// Newman locates newman ($NEWMAN, $NEWMAN_HOME/node_modules/.bin/newman
// with NEWMAN_HOME defaulting to /tmp/plateau-newman, or newman on PATH).
// Without it the test skips, and fails under CI=true
// (testdata/install-deps.sh installs it).
func Newman(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("NEWMAN"); p != "" {
		return p
	}
	home := os.Getenv("NEWMAN_HOME")
	if home == "" {
		home = "/tmp/plateau-newman"
	}
	if p := filepath.Join(home, "node_modules", ".bin", "newman"); isExec(p) {
		return p
	}
	p, err := exec.LookPath("newman")
	if err != nil {
		missing(t, "newman not installed; run internal/convert/wiretest/testdata/install-deps.sh")
	}
	return p
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// newmanVolatile are headers Postman's runtime sets on every request with
// a fresh value (a random id): never compared.
var newmanVolatile = map[string]bool{"Postman-Token": true}

// RunNewman runs the collection once under newman through the recorder
// (HTTP_PROXY: the collection's hosts must be names, not loopback) and
// returns what the recorder saw, each request keyed as the one user.
func RunNewman(t testing.TB, bin string, c PostmanCase, rec *Recorder) []Request {
	t.Helper()
	args := []string{"run", filepath.Join(c.Dir, c.Collection), "--reporters", "cli", "--color", "off", "--disable-unicode", "--timeout", "60000",
		"--working-dir", c.workDir()}
	if c.Environment != "" {
		args = append(args, "--environment", filepath.Join(c.Dir, c.Environment))
	}
	if c.Globals != "" {
		args = append(args, "--globals", filepath.Join(c.Dir, c.Globals))
	}
	for _, k := range sortedKeys(c.Vars, c.Vars) {
		args = append(args, "--env-var", k+"="+c.Vars[k])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// Both proxies: an https URL reaches the recorder too (which refuses
	// CONNECT), never the network.
	cmd.Env = append(os.Environ(), "HTTP_PROXY="+rec.URL, "http_proxy="+rec.URL, "HTTPS_PROXY="+rec.URL, "https_proxy="+rec.URL, "NO_PROXY=", "no_proxy=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		// Exit 1: some of the collection's tests failed; the traffic is
		// what is compared.
		var ee *exec.ExitError
		if !(errors.As(err, &ee) && ee.ExitCode() == 1 && strings.Contains(out.String(), "total run duration")) {
			t.Fatalf("newman: %v\n%s", err, tail(out.String(), 4000))
		}
	}
	reqs, dropped := rec.Requests()
	if dropped > 0 {
		t.Fatalf("recorder dropped %d newman requests", dropped)
	}
	for i := range reqs {
		reqs[i].User = postmanUser
		for k := range reqs[i].Header {
			if newmanVolatile[k] {
				delete(reqs[i].Header, k)
			}
		}
	}
	return reqs
}

// RunPostmanCase converts the collection with its environment and globals
// files, runs the collection under newman and the plan under plateau, and
// compares the streams; every unexplained difference fails the test.
func RunPostmanCase(t testing.TB, c PostmanCase) *PostmanOutcome {
	t.Helper()
	bin := Newman(t)
	o := &PostmanOutcome{}
	c.Dir = CopyDir(t, c.Dir)
	rewriteFile(t, filepath.Join(c.Dir, c.Collection), c.Rewrite)
	if c.Environment != "" {
		rewriteFile(t, filepath.Join(c.Dir, c.Environment), c.Rewrite)
	}
	nrec := NewRecorder(t, c.Rules...)
	o.Newman = RunNewman(t, bin, c, nrec)

	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	col, err := postman.Parse(bytes.NewReader(read(c.Collection)))
	if err != nil {
		t.Fatal(err)
	}
	opt := postman.Options{Source: c.Collection, EnvSource: c.Environment, GlobalsSource: c.Globals, WorkingDir: c.workDir()}
	if c.Environment != "" {
		if opt.Environment, err = postman.ParseEnvironment(bytes.NewReader(read(c.Environment))); err != nil {
			t.Fatal(err)
		}
	}
	if c.Globals != "" {
		if opt.Globals, err = postman.ParseEnvironment(bytes.NewReader(read(c.Globals))); err != nil {
			t.Fatal(err)
		}
	}
	p, rep := postman.Convert(col, opt)
	o.Report = rep
	for _, wl := range p.Workloads {
		tag(wl.Setup, wl.Name+"/${__user}")
		tag(wl.Scenario, wl.Name+"/${__user}")
		tag(wl.Teardown, wl.Name+"/${__user}")
	}
	env := map[string]string{}
	for k, v := range c.Env {
		env[k] = v
	}
	for k, v := range c.Vars {
		env[strings.ToUpper(strings.ReplaceAll(k, "-", "_"))] = v
	}
	for k, v := range rep.Secrets {
		env[k] = v
	}
	dir := t.TempDir()
	pf, text := converttest.Write(t, dir, p, rep)
	o.Plan = text
	prec := NewRecorder(t, c.Rules...)
	converttest.Run(t, pf, env, 2*time.Minute, "http.proxy="+prec.URL)
	var dropped int
	o.Plateau, dropped = prec.Requests()
	if dropped > 0 {
		t.Fatalf("recorder dropped %d plateau requests", dropped)
	}
	o.Result = judge(t, "newman", c.Collection, o.Newman, o.Plateau, c.Compare, o.Plan, 40)
	sameBytes(t, o, c.Compare)
	return o
}

// sameBytes compares the two runs request by request, in order (one user,
// one pass: both send the collection's requests one after another): the
// method, the request target as it came on the request line and a body
// that is not multipart (multipart bodies differ by their boundary and are
// compared part by part by judge), byte for byte once the volatile values
// (UUIDs, the recorder's numbers) are normalised.
func sameBytes(t testing.TB, o *PostmanOutcome, opt Options) {
	t.Helper()
	if len(o.Newman) != len(o.Plateau) {
		return // judge said so
	}
	for i, n := range o.Newman {
		p := o.Plateau[i]
		if n.Method != p.Method || opt.norm(n.URI) != opt.norm(p.URI) {
			t.Errorf("request %d: newman sent %s %s, plateau %s %s", i+1, n.Method, n.URI, p.Method, p.URI)
		}
		if multipartBoundary(n.Header.Get("Content-Type")) != "" {
			continue
		}
		if opt.norm(n.Body) != opt.norm(p.Body) {
			t.Errorf("request %d, %s %s: newman sent the body %q, plateau %q", i+1, n.Method, n.URI, n.Body, p.Body)
		}
	}
}
