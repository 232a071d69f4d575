package executor

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
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

func (locust) segmented() error {
	return fmt.Errorf("Locust's whole-run statistics are its master's, which aggregates its workers' reports: " +
		"plateau run locustfile.py --generators N runs Locust's own master and N workers on this machine; " +
		"plateau k8s locustfile.py -g N a master pod and N worker pods; on machines of your own, " +
		"plateau run locustfile.py --locust-master '*:5557' --locust-workers N here and locust -f FILE --worker --master-host HOST on each machine")
}

// workerScript starts Locust's workers in the background, then becomes the
// master: all in the tool's process group, so that Ctrl-C reaches each.
const workerScript = `bin=$1 file=$2 out=$3 n=$4 port=$5
shift 5
i=0
while [ "$i" -lt "$n" ]; do
  "$bin" -f "$file" --worker --master-host 127.0.0.1 --master-port "$port" >"$out/locust-worker-$i.log" 2>&1 &
  i=$((i+1))
done
exec "$bin" "$@"
`

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
		"--only-summary"}
	if spec.Workers <= 1 && spec.Master == "" {
		// A graceful stop, whose requests Locust still counts. Not with
		// workers: their master writes its statistics and quits while
		// they stop, so what they sent then would go uncounted.
		args = append(args, "--stop-timeout", "10")
	}
	if t, ok := spec.Set["target"]; ok {
		args = append(args, "--host", t)
	}
	bin, err := find(spec, "LOCUST", "locust", "/opt/plateau-locust/bin/locust", "/tmp/locust-venv/bin/locust")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	if spec.Master != "" {
		// Locust's master alone; its workers run elsewhere and connect
		// to it (plateau k8s: the worker pods, through the master's
		// Service).
		host, port, err := net.SplitHostPort(spec.Master)
		if err != nil {
			return nil, fmt.Errorf("Locust's master address %q: want HOST:PORT (e.g. *:5557): %w", spec.Master, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("Locust's master address %q: the port is not a port", spec.Master)
		}
		if host == "" {
			host = "*"
		}
		if spec.Workers < 1 {
			return nil, fmt.Errorf("Locust's master expects at least one worker")
		}
		wait := spec.MasterWait
		if wait <= 0 {
			wait = 5 * time.Minute
		}
		args = append(args, "--master", "--master-bind-host", host, "--master-bind-port", port,
			"--expect-workers", fmt.Sprint(spec.Workers), "--expect-workers-max-wait", fmt.Sprint(int(wait.Seconds())))
		cmd = exec.Command(bin, args...)
	} else if n := spec.Workers; n > 1 {
		// Locust's own distributed mode on this machine: its master
		// computes the statistics from its workers' reports, as across
		// machines.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("a port for Locust's master: %w", err)
		}
		port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		master := append([]string(nil), args...)
		master = append(master, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", port,
			"--expect-workers", fmt.Sprint(n), "--expect-workers-max-wait", "120")
		cmd = exec.Command("/bin/sh", append([]string{"-c", workerScript, "locust", bin, script, out, fmt.Sprint(n), port}, master...)...)
	}
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
	var notes []string
	if spec.Master != "" {
		notes = append(notes, fmt.Sprintf("Locust's master ran here, bound to %s, with %d workers that ran elsewhere: the statistics are the master's, from its workers' reports", spec.Master, spec.Workers))
	}
	if exit != 0 {
		notes = append(notes, fmt.Sprintf("Locust exited with code %d (1: a request failed or the locustfile set a failing exit code; its output is in tool/locust.out.log)", exit))
	}
	return notes
}

// Declare declares no phases: a Locust load is its users and spawn rate
// or a LoadTestShape class, which is Python code; the user count Locust
// reports in its history is what ran, and the phases come from it.
func (locust) Declare(spec *Spec) Declared {
	return Declared{Why: "a Locust load is its --users and --spawn-rate or a LoadTestShape class, which is code: Locust's own user count is what ran"}
}

// Started is never known: Locust declares no phases.
func (locust) Started(string, Declared) (time.Time, bool) { return time.Time{}, false }
