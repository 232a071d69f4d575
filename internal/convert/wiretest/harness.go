package wiretest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/jmeter"
)

// Case is one differential run of a .jmx.
type Case struct {
	// Dir holds the plan and its data files (as the plan names them);
	// JMX is the plan's path inside it.
	Dir, JMX string
	Rules    []Rule
	Bounds   Bounds
	// Props are JMeter properties (-Jname=value); plateau gets them as the
	// environment variables the converted plan reads them from.
	Props   map[string]string
	Compare Options
	// Rewrite edits the .jmx before both runs (the same source for both),
	// e.g. https → http: the recorder does not intercept TLS.
	Rewrite []Replace
}

func (c Case) rewrite(t testing.TB, dir string) {
	if len(c.Rewrite) == 0 {
		return
	}
	p := filepath.Join(dir, c.JMX)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rewrite {
		b = r.Re.ReplaceAll(b, []byte(r.With))
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Outcome is what a Case produced.
type Outcome struct {
	JMeter, Plateau []Request
	Plan            string // the converted plan as run
	Report          *convert.Report
	Result          Result
	JMeterTime      time.Duration
	PlateauTime     time.Duration
}

// Run runs the case under JMeter and plateau and compares the streams. It
// fails the test on every unexplained difference and on stale
// explanations.
func Run(t testing.TB, c Case) *Outcome {
	t.Helper()
	o := &Outcome{}
	jdir := CopyDir(t, c.Dir)
	c.rewrite(t, jdir)
	jrec := NewRecorder(t, c.Rules...)
	// JMeter runs while the plan is converted and run under plateau, each
	// against its own recorder: the two sides share nothing on the wire,
	// and a plan's think times are waited once, not twice.
	waitJMeter := StartJMeter(t, filepath.Join(jdir, c.JMX), jrec, c.Bounds, c.Props)

	pdir := CopyDir(t, c.Dir)
	c.rewrite(t, pdir)
	src := filepath.Join(pdir, c.JMX)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	root, err := jmeter.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := jmeter.Convert(root, jmeter.Options{Source: src})
	o.Report = rep
	env := map[string]string{}
	for k, v := range c.Props {
		env[jmeter.EnvName(k)] = v
	}
	// The source's literal secrets, which the converted plan reads from
	// the environment (convert.HideSecrets).
	for k, v := range rep.Secrets {
		env[k] = v
	}
	prec := NewRecorder(t, c.Rules...)
	start := time.Now()
	o.Plateau, o.Plan = RunPlateau(t, filepath.Dir(src), p, rep, prec, c.Bounds, env)
	o.PlateauTime = time.Since(start)
	o.JMeter, o.JMeterTime = waitJMeter()

	c.Compare.RampUp = c.Bounds.RampUp
	if c.Compare.Data == nil {
		c.Compare.Data = dataValues(t, c.Dir)
	}
	t.Logf("JMeter ran in %v, plateau in %v (side by side)", o.JMeterTime.Round(time.Millisecond), o.PlateauTime.Round(time.Millisecond))
	o.Result = judge(t, "JMeter", c.JMX, o.JMeter, o.Plateau, c.Compare, o.Plan, 25)
	return o
}

// judge compares the source tool's request stream with plateau's, logs
// the summary and every difference in the tool's name (Compare words them
// for JMeter), and fails t on a difference nothing explains or an
// explanation nothing needed.
func judge(t testing.TB, tool, src string, theirs, ours []Request, opt Options, plan string, n int) Result {
	t.Helper()
	named := func(s string) string {
		if tool == "JMeter" {
			return s
		}
		return strings.ReplaceAll(s, "JMeter", tool)
	}
	res := Compare(theirs, ours, opt)
	for _, s := range res.Summary {
		t.Log(named(s))
	}
	for _, d := range res.Diffs {
		t.Logf("difference: %s", named(d.String()))
	}
	if len(res.Unexplained) > 0 || len(res.Stale) > 0 {
		var b strings.Builder
		for _, d := range res.Unexplained {
			b.WriteString("  unexplained: " + named(d.String()) + "\n")
		}
		for _, e := range res.Stale {
			b.WriteString("  explained but not seen (stale): " + e.Kind + " " + e.Why + "\n")
		}
		t.Errorf("%s: the request streams differ from %s's\n%s\n%s's first requests:\n%s\nplateau's first requests:\n%s\nplan:\n%s",
			src, tool, b.String(), tool, head(theirs, n), head(ours, n), plan)
	}
	return res
}

func head(rs []Request, n int) string {
	var b strings.Builder
	for i, q := range rs {
		if i == n {
			break
		}
		b.WriteString("  " + q.At.Round(time.Millisecond).String() + " " + q.Line() + "\n")
	}
	return b.String()
}

// dataValues reads every CSV file under dir: each field of 4 characters
// or more maps to "csv:<file>".
func dataValues(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".csv") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := "csv:" + filepath.Base(p)
		for _, line := range strings.Split(string(b), "\n") {
			for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' || r == '\t' || r == '\r' || r == '"' }) {
				if f = strings.TrimSpace(f); len(f) >= 4 && tokenRe.FindString(f) == f {
					out[f] = name
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
