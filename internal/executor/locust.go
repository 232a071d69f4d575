package executor

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	locustimp "github.com/plateau-perf/plateau/internal/importer/locust"
)

// locust runs a locustfile headless, writing its --csv result set with
// the full history to the run directory.
//
// Overrides: target → --host, users → --users, ramp_up → --spawn-rate
// (users ÷ ramp-up seconds; all at once without it), duration →
// --run-time (required: headless Locust otherwise runs until stopped).
// A rate is the locustfile's own (constant_throughput wait times).
type locust struct{}

func (locust) Name() string { return "locust" }

func (locust) Command(spec *Spec, out string) (*exec.Cmd, error) {
	if len(spec.Props) > 0 {
		return nil, fmt.Errorf("-J sets JMeter properties; a locustfile takes -e NAME=value (its environment)")
	}
	if err := checkSet("Locust", spec.Set, "target", "users", "ramp_up", "duration"); err != nil {
		return nil, fmt.Errorf("%w; a rate is the locustfile's own (wait_time = constant_throughput(…))", err)
	}
	v, ok := spec.Set["duration"]
	if !ok {
		return nil, fmt.Errorf("headless Locust runs until it is stopped: give --set duration=…")
	}
	dur, err := seconds("duration", v)
	if err != nil {
		return nil, err
	}
	users := 1
	if v, ok := spec.Set["users"]; ok {
		if users, err = positive("users", v); err != nil {
			return nil, err
		}
	}
	rate := float64(users)
	if v, ok := spec.Set["ramp_up"]; ok {
		r, err := seconds("ramp_up", v)
		if err != nil {
			return nil, err
		}
		if r > 0 {
			rate = float64(users) / float64(r)
		}
	}
	script, err := filepath.Abs(spec.Script)
	if err != nil {
		return nil, err
	}
	args := []string{"-f", script, "--headless", "--csv", filepath.Join(out, "locust"), "--csv-full-history",
		"--users", fmt.Sprint(users), "--spawn-rate", fmt.Sprint(rate), "--run-time", fmt.Sprintf("%ds", dur),
		"--only-summary", "--stop-timeout", "10"}
	if t, ok := spec.Set["target"]; ok {
		args = append(args, "--host", t)
	}
	bin, err := find(spec, "LOCUST", "locust", "/opt/plateau-locust/bin/locust", "/tmp/locust-venv/bin/locust")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(script)
	if cmd.Env, err = envList(spec.Env); err != nil {
		return nil, err
	}
	return cmd, nil
}

// Source reads Locust's result set when Locust has ended (follow is not
// used): its stats CSV, the whole-run figures the import keeps, is written
// last.
func (locust) Source(spec *Spec, out string, follow <-chan struct{}) importer.Source {
	return locustimp.New(locustimp.Config{Path: filepath.Join(out, "locust_stats.csv"), Workload: "locust"})
}

func (locust) Notes(spec *Spec, out string, exit int) []string {
	if exit != 0 {
		return []string{fmt.Sprintf("Locust exited with code %d (1: a request failed or the locustfile set a failing exit code; its output is in tool/locust.out.log)", exit)}
	}
	return nil
}

// Declare declares no phases: a Locust load is its users and spawn rate
// or a LoadTestShape class, which is Python code; the user count Locust
// reports in its history is what ran, and the phases come from it.
func (locust) Declare(spec *Spec) Declared {
	return Declared{Why: "a Locust load is its --users and --spawn-rate or a LoadTestShape class, which is code: Locust's own user count is what ran"}
}

// Started is never known: Locust declares no phases.
func (locust) Started(string, Declared) (time.Time, bool) { return time.Time{}, false }
