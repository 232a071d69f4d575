package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// k6Scenario is a scenario as `k6 inspect --execution-requirements`
// prints it: the options after the script's own, -e and the overrides.
type k6Scenario struct {
	Executor  string   `json:"executor"`
	StartTime *string  `json:"startTime"`
	VUs       *int     `json:"vus"`
	StartVUs  *int     `json:"startVUs"`
	Duration  *string  `json:"duration"`
	Rate      *float64 `json:"rate"`
	StartRate *float64 `json:"startRate"`
	TimeUnit  *string  `json:"timeUnit"`
	Stages    []struct {
		Duration string  `json:"duration"`
		Target   float64 `json:"target"`
	} `json:"stages"`
}

// Declare asks k6 itself for the scenarios it would run — `k6 inspect
// --execution-requirements`, with the script's -e variables and the
// overrides given as k6's own K6_VUS, K6_DURATION, K6_STAGES — and turns
// their executors into holds: constant-vus and constant-arrival-rate are
// one hold; a stage of ramping-vus or ramping-arrival-rate that keeps the
// level the previous one reached is a hold, any other stage a ramp.
// Iteration-bound executors (per-vu-iterations, shared-iterations) and
// externally-controlled have no declared timeline, and scenarios that run
// at once have no one phase a moment belongs to: both fall back to the
// user count k6 reports.
func (k6) Declare(spec *Spec) Declared {
	bin, err := find(spec, "K6", "k6", "/usr/local/bin/k6", "/tmp/k6bin/k6")
	if err != nil {
		return Declared{Why: err.Error()}
	}
	script, err := filepath.Abs(spec.Script)
	if err != nil {
		return Declared{Why: err.Error()}
	}
	o, err := k6Overrides(spec)
	if err != nil {
		return Declared{Why: err.Error()}
	}
	args := []string{"inspect", "--execution-requirements"}
	for _, e := range spec.Env {
		args = append(args, "-e", e)
	}
	args = append(args, script)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(cmd.Environ(), "K6_NO_COLOR=1")
	if o.stages != "" {
		cmd.Env = append(cmd.Environ(), "K6_STAGES="+o.stages)
	}
	if o.vus != "" {
		cmd.Env = append(cmd.Environ(), "K6_VUS="+o.vus)
	}
	if o.duration != "" {
		cmd.Env = append(cmd.Environ(), "K6_DURATION="+o.duration)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + " …"
		}
		return Declared{Why: fmt.Sprintf("k6 inspect: %v %s", err, msg)}
	}
	d := k6Declared(stdout.Bytes())
	d.seen = spec.Start
	return d
}

// k6Declared turns k6 inspect's output into holds.
func k6Declared(out []byte) Declared {
	var opts struct {
		Scenarios map[string]k6Scenario `json:"scenarios"`
	}
	if err := json.Unmarshal(out, &opts); err != nil {
		return Declared{Why: fmt.Sprintf("k6 inspect printed no options: %v", err)}
	}
	if len(opts.Scenarios) == 0 {
		return Declared{Why: "k6 inspect printed no scenarios"}
	}
	var hs []hold
	for name, sc := range opts.Scenarios {
		h, err := sc.holds()
		if err != nil {
			return Declared{Why: fmt.Sprintf("k6 scenario %q: %v", name, err)}
		}
		hs = append(hs, h...)
	}
	ps, err := phasesOf(hs)
	if err != nil {
		return Declared{Why: "k6 scenarios run at once: " + err.Error()}
	}
	if len(ps) == 0 {
		return Declared{Why: "k6's scenarios declare no hold (only ramps)"}
	}
	return Declared{Phases: ps, Why: "read with k6 inspect", StartOnce: true}
}

func k6Dur(s *string, def time.Duration) (time.Duration, error) {
	if s == nil || *s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(*s)
	if err != nil {
		// k6 takes a bare number as milliseconds
		if ms, perr := strconv.ParseFloat(*s, 64); perr == nil {
			return time.Duration(ms * float64(time.Millisecond)), nil
		}
		return 0, fmt.Errorf("duration %q: %w", *s, err)
	}
	return d, nil
}

func (sc k6Scenario) holds() ([]hold, error) {
	start, err := k6Dur(sc.StartTime, 0)
	if err != nil {
		return nil, err
	}
	unit, err := k6Dur(sc.TimeUnit, time.Second)
	if err != nil || unit <= 0 {
		return nil, fmt.Errorf("timeUnit: %v", err)
	}
	users := func(n int) hold {
		return hold{users: n, label: fmt.Sprintf("%d VUs", n)}
	}
	rate := func(r float64) hold {
		return hold{rate: r / unit.Seconds(), unit: "iterations/s", label: rateLabel(r, unit, "iterations"), arrivals: true}
	}
	at := func(h hold, from, to time.Duration) hold {
		h.from, h.to = from, to
		return h
	}
	switch sc.Executor {
	case "constant-vus":
		d, err := k6Dur(sc.Duration, 0)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("constant-vus without a duration")
		}
		n := 1
		if sc.VUs != nil {
			n = *sc.VUs
		}
		return []hold{at(users(n), start, start+d)}, nil
	case "constant-arrival-rate":
		d, err := k6Dur(sc.Duration, 0)
		if err != nil || d <= 0 || sc.Rate == nil {
			return nil, fmt.Errorf("constant-arrival-rate without a rate and a duration")
		}
		return []hold{at(rate(*sc.Rate), start, start+d)}, nil
	case "ramping-vus", "ramping-arrival-rate":
		var level float64
		mk := func(v float64) hold { return users(int(v)) }
		if sc.Executor == "ramping-vus" {
			level = 1
			if sc.StartVUs != nil {
				level = float64(*sc.StartVUs)
			}
		} else {
			mk = rate
			if sc.StartRate != nil {
				level = *sc.StartRate
			}
		}
		var out []hold
		t := start
		for i, st := range sc.Stages {
			d, err := k6Dur(&st.Duration, 0)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("stage %d: %v", i+1, err)
			}
			if st.Target == level && d > 0 && level > 0 {
				out = append(out, at(mk(level), t, t+d))
			}
			level = st.Target
			t += d
		}
		return out, nil
	}
	return nil, fmt.Errorf("executor %s declares iterations or outside control, not a timeline", sc.Executor)
}

// Started is k6's start: its first vus reading, which k6 writes a second
// after the test began (and every second after), less that second.
func (k6) Started(out string, d Declared) (time.Time, bool) {
	// The import following the CSV reads its first vus row as it comes:
	// reading the file from its top for it cost a second of k6's rows
	// at its peak, tens of MB, each time the live phases looked
	// (docs/performance.md).
	if t, ok, wait := d.seen.get(); ok {
		return t, true
	} else if wait {
		return time.Time{}, false
	}
	return firstLine(filepath.Join(out, K6Results), 256<<20, "vus,", func(line string) (time.Time, bool) {
		if !strings.HasPrefix(line, "vus,") {
			return time.Time{}, false
		}
		ts := field(line, ',', 1)
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		// The CSV's times are microseconds (K6_CSV_TIME_FORMAT); told by
		// their digits as the import tells them.
		switch {
		case len(ts) <= 10:
			n *= 1e9
		case len(ts) <= 13:
			n *= 1e6
		case len(ts) <= 16:
			n *= 1e3
		}
		return k6Start(n), true
	})
}

// k6Start is k6's start by its first vus row's time (Unix ns): k6 writes
// the row a second after it starts.
func k6Start(vusRow int64) time.Time { return time.Unix(0, vusRow).Add(-time.Second) }

var _ Declarer = k6{}
