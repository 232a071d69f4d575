package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/importer"
	k6imp "github.com/plateau-perf/plateau/internal/importer/k6"
)

// k6 runs a k6 script: `k6 run` with its CSV output and summary export
// written to the run directory.
//
// The results are k6's CSV output (--out csv, microsecond times, flushed
// every 200 ms as its JSON output is), not its JSON stream: the same
// points and tags in 1.2 KB a request instead of 3.2 KB, which plateau
// reads beside k6 at a fraction of the JSON's cost (docs/performance.md).
// Microseconds are the resolution of the import's response times; the
// three digits more of nanoseconds were 39 bytes a request (13 rows).
//
// Overrides: users → --vus, duration → --duration, ramp_up (with users)
// → --stage RAMP:USERS,DURATION:USERS (a ramp, then a hold), rate →
// --rps (k6's global cap on requests per second). k6's shortcut options
// replace the script's own scenarios, as they do on k6's command line. A
// target is the script's business: pass it with -e NAME=URL.
type k6 struct{}

// K6Results is the file in the run directory's tool/ that k6 writes its
// results to.
const K6Results = "k6.csv"

func (k6) Name() string { return "k6" }

func (k6) Command(spec *Spec, out string) (*exec.Cmd, error) {
	if len(spec.Props) > 0 {
		return nil, fmt.Errorf("-J sets JMeter properties; a k6 script takes -e NAME=value")
	}
	if err := checkSet("k6", spec.Set, "users", "ramp_up", "duration", "rate"); err != nil {
		return nil, err
	}
	var err error
	// The CSV's file name and settings go in k6's environment: its
	// --out csv=… argument would read a comma or '=' in the path as
	// another setting.
	args := []string{"run", "--no-usage-report", "--no-color",
		"--out", "csv", "--summary-export=" + filepath.Join(out, "summary.json")}
	for _, e := range spec.Env {
		if _, _, ok := strings.Cut(e, "="); !ok {
			return nil, fmt.Errorf("-e %q: want NAME=value", e)
		}
		args = append(args, "-e", e)
	}
	o, err := k6Overrides(spec)
	if err != nil {
		return nil, err
	}
	if o.stages != "" {
		args = append(args, "--stage", o.stages)
	}
	if o.vus != "" {
		args = append(args, "--vus", o.vus)
	}
	if o.duration != "" {
		args = append(args, "--duration", o.duration)
	}
	if o.rps != "" {
		// --rps caps each k6 instance: this generator's share.
		r, _ := positive("rate", o.rps)
		if err := checkShare("rate", r, spec.Segments); err != nil {
			return nil, err
		}
		args = append(args, "--rps", fmt.Sprint(share(r, spec.Segment, spec.Segments)))
	}
	if n := spec.Segments; n > 1 {
		// k6's own execution segments: this instance runs its part of
		// every scenario — the script's own, or the one --vus/--stage
		// make — VUs and arrival rates divided as k6 divides them among
		// instances (5 VUs on 2: 3 and 2, as plateau's own generators).
		if v, ok := spec.Set["users"]; ok {
			users, _ := positive("users", v)
			if err := checkShare("users", users, n); err != nil {
				return nil, err
			}
		}
		args = append(args, k6SegmentArgs(spec.Segment, n)...)
	}
	script, err := filepath.Abs(spec.Script)
	if err != nil {
		return nil, err
	}
	args = append(args, script)
	bin, err := find(spec, "K6", "k6", "/usr/local/bin/k6", "/tmp/k6bin/k6")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(), "K6_NO_COLOR=1", "K6_CSV_FILENAME="+filepath.Join(out, K6Results),
		"K6_CSV_TIME_FORMAT=unix_micro", "K6_CSV_SAVE_INTERVAL=200ms")
	if narrowTags(spec, script) {
		cmd.Env = append(cmd.Env, "K6_SYSTEM_TAGS="+K6SystemTags)
	}
	return cmd, nil
}

// K6SystemTags are the system tags of k6's default set that the import
// reads (labels, statuses, failures, groups, checks). The default set adds
// proto, scenario, service, subproto and tls_version, which it does not:
// "HTTP/1.1" and "default" in each of the 13 rows k6 writes per request,
// a tenth of the bytes plateau reads beside k6 (docs/performance.md).
const K6SystemTags = "check,error,error_code,expected_response,group,method,name,status,url"

// k6OtherTags finds, in a script, what may need the system tags
// K6SystemTags leaves out: the script's own systemTags option, and the
// names of those tags (a threshold on http_req_duration{scenario:buy},
// a tag read in handleSummary). "scenarios", the option, is not one.
var k6OtherTags = regexp.MustCompile(`\b(systemTags|proto|subproto|scenario|service|tls_version)\b`)

// k6LocalImport finds the local modules a script imports.
var k6LocalImport = regexp.MustCompile(`(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"` + "`" + `]((?:file://)?\.{0,2}/[^'"` + "`" + `]+)['"` + "`" + `]`)

// narrowTags says whether k6 may be given K6SystemTags: the user did not
// set K6_SYSTEM_TAGS, and neither the script nor a local module or file
// it imports names what k6OtherTags finds (nor could be read: then k6
// keeps its default set).
func narrowTags(spec *Spec, script string) bool {
	getenv := spec.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("K6_SYSTEM_TAGS") != "" {
		return false
	}
	seen := map[string]bool{}
	todo := []string{script}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		if len(seen) > 200 {
			return false
		}
		if fi, err := os.Stat(p); err != nil || fi.Size() > 8<<20 {
			return false
		}
		b, err := os.ReadFile(p)
		if err != nil || k6OtherTags.Match(b) {
			return false
		}
		for _, m := range k6LocalImport.FindAllSubmatch(b, -1) {
			m := strings.TrimPrefix(string(m[1]), "file://")
			if !filepath.IsAbs(m) {
				m = filepath.Join(filepath.Dir(p), m)
			}
			todo = append(todo, m)
		}
	}
	return true
}

func (k6) Source(spec *Spec, out string, follow <-chan struct{}) importer.Source {
	cfg := k6imp.Config{Path: filepath.Join(out, K6Results), Workload: "k6", Follow: follow}
	if seen := spec.Start; seen != nil && follow != nil {
		cfg.FirstVUs = func(t int64) { seen.set(k6Start(t)) }
		seen.state(true, false)
		return startSource{k6imp.New(cfg), seen}
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil || follow != nil {
		// Followed: k6 writes its summary export when it ends; the
		// import reads it then, if it is there.
		cfg.Summary = filepath.Join(out, "summary.json")
	}
	return k6imp.New(cfg)
}

// startSource is an import that reports the tool's start to a
// StartSeen, and when it has returned (Started then reads the file).
type startSource struct {
	*k6imp.Source
	seen *StartSeen
}

func (s startSource) Import(ctx context.Context, run *importer.Run) error {
	defer s.seen.state(false, true)
	return s.Source.Import(ctx, run)
}

// Notes reports k6's own thresholds from its summary export, and what its
// exit code says (99: a threshold was crossed).
func (k6) Notes(spec *Spec, out string, exit int) []string {
	var notes []string
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err == nil {
		var s struct {
			Metrics map[string]struct {
				Thresholds map[string]bool `json:"thresholds"`
			} `json:"metrics"`
		}
		if json.Unmarshal(b, &s) == nil {
			var th []string
			for m, v := range s.Metrics {
				for expr, failed := range v.Thresholds {
					// The summary export marks a crossed threshold true.
					state := "held"
					if failed {
						state = "crossed"
					}
					th = append(th, fmt.Sprintf("%s %s: %s", m, expr, state))
				}
			}
			sort.Strings(th)
			if len(th) > 0 {
				notes = append(notes, "k6's own thresholds (beside plateau's SLA): "+strings.Join(th, "; "))
			}
		}
	}
	switch exit {
	case 0:
	case 99:
		notes = append(notes, "k6 exited with code 99: one of its own thresholds was crossed")
	default:
		notes = append(notes, fmt.Sprintf("k6 exited with code %d (its output is in tool/k6.out.log)", exit))
	}
	return notes
}

// k6Opts are the overrides as k6's shortcut options.
type k6Opts struct{ vus, duration, stages, rps string }

// k6Overrides maps --set onto k6's shortcut options: users → --vus,
// duration → --duration, ramp_up (with users and duration) → --stage
// RAMP:USERS,DURATION:USERS, rate → --rps.
func k6Overrides(spec *Spec) (k6Opts, error) {
	var o k6Opts
	var err error
	users := 0
	if v, ok := spec.Set["users"]; ok {
		if users, err = positive("users", v); err != nil {
			return o, err
		}
	}
	dur, ramp := -1, -1
	if v, ok := spec.Set["duration"]; ok {
		if dur, err = seconds("duration", v); err != nil {
			return o, err
		}
	}
	if v, ok := spec.Set["ramp_up"]; ok {
		if ramp, err = seconds("ramp_up", v); err != nil {
			return o, err
		}
	}
	switch {
	case ramp >= 0:
		if users == 0 || dur < 0 {
			return o, fmt.Errorf("--set ramp_up needs users and duration for k6 (a ramp to USERS, then a hold for DURATION)")
		}
		o.stages = fmt.Sprintf("%ds:%d,%ds:%d", ramp, users, dur, users)
	default:
		if users > 0 {
			o.vus = fmt.Sprint(users)
		}
		if dur >= 0 {
			o.duration = fmt.Sprintf("%ds", dur)
		}
	}
	if v, ok := spec.Set["rate"]; ok {
		r, err := positive("rate", v)
		if err != nil {
			return o, err
		}
		o.rps = fmt.Sprint(r)
	}
	return o, nil
}

// k6SegmentArgs are k6's execution segment i of n and the sequence of all
// n (--execution-segment i/n:(i+1)/n --execution-segment-sequence
// 0,1/n,…,1).
func k6SegmentArgs(i, n int) []string {
	frac := func(i int) string {
		switch i {
		case 0:
			return "0"
		case n:
			return "1"
		}
		return fmt.Sprintf("%d/%d", i, n)
	}
	seq := make([]string, n+1)
	for j := range seq {
		seq[j] = frac(j)
	}
	return []string{"--execution-segment", frac(i) + ":" + frac(i+1), "--execution-segment-sequence", strings.Join(seq, ",")}
}
